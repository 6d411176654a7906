package runtime

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

// gateBackend answers svc.b at once and holds svc.a until svc.b has been
// called (or gives up after a few seconds): a quick tool that turned slow
// waiting for its sibling.
type gateBackend struct {
	bCalled chan struct{}
	mu      sync.Mutex
	order   []string // the tools, in the order they were called
}

func (g *gateBackend) CallTool(ctx context.Context, call ToolCall) (*ToolResult, error) {
	g.mu.Lock()
	g.order = append(g.order, call.Tool)
	g.mu.Unlock()
	switch call.Tool {
	case "b":
		close(g.bCalled)
	case "a":
		select {
		case <-g.bCalled:
		case <-time.After(5 * time.Second):
			return nil, errors.New("b was never called while a waited")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &ToolResult{Structured: map[string]any{"ok": true}}, nil
}

// TestQuickStepWaitsForItsSibling: steps that have been quick run one
// after another on the goroutine already running, with no worker
// started; when the first of them blocks, its queued sibling still gets a
// worker (after inlineWait without a step taken) instead of waiting
// behind it.
func TestQuickStepWaitsForItsSibling(t *testing.T) {
	// a -> c and b: a has more work behind it, so the calling goroutine
	// runs a and queues b.
	wf := build("gate", tool("a", "svc.a", nil), tool("b", "svc.b", nil), tool("c", "svc.c", nil, "a"))
	be := &gateBackend{bCalled: make(chan struct{})}
	e := mustEngine(t, plan(wf), Options{Backend: be})
	wp, _ := e.lookup("gate")
	for _, sp := range wp.steps {
		sp.calls.note(time.Microsecond) // as after quick runs
	}
	run, err := e.Run(context.Background(), "gate", nil, RunOptions{})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v; want completed (b must run while a waits for it)", run, err)
	}
	a, b := run.Steps[0], run.Steps[1]
	if !b.StartedAt.Before(a.EndedAt) {
		t.Errorf("b started at %v, after a ended at %v", b.StartedAt, a.EndedAt)
	}
	// c follows a; a and b may be called in either order: under load the
	// calling goroutine can be descheduled for longer than inlineWait
	// before it calls a, and then the worker calls b first (seen once in a
	// full race run on 2 cores).
	if len(be.order) != 3 || be.order[2] != "c" || !slices.Contains(be.order, "a") || !slices.Contains(be.order, "b") {
		t.Errorf("calls in the order %v; want a and b, then c", be.order)
	}
}

func TestCallTime(t *testing.T) {
	var c callTime
	if c.quick() {
		t.Fatalf("quick before any call")
	}
	c.note(time.Microsecond)
	if !c.quick() {
		t.Fatalf("not quick after a call of 1µs")
	}
	for i := 0; i < 20; i++ {
		c.note(time.Microsecond)
	}
	c.note(time.Second) // a pause of the process: the mean rises by callCap/8 at most, still quick
	if !c.quick() {
		t.Fatalf("not quick after one call of 1s among quick ones (mean %dns)", c.mean.Load())
	}
	for i := 0; i < 20; i++ {
		c.note(time.Microsecond)
	}
	c.note(time.Millisecond) // the tool turned slow: quick until its second slow call
	c.note(time.Millisecond)
	if c.quick() {
		t.Fatalf("still quick after two calls of 1ms (mean %dns)", c.mean.Load())
	}
	for i := 0; i < 100; i++ {
		c.note(time.Microsecond)
	}
	if !c.quick() {
		t.Fatalf("not quick again after 100 quick calls (mean %dns)", c.mean.Load())
	}
}

// TestQueueTimerWaitsWhileTheQueueMoves: when the timer finds that queued
// steps were taken since it was armed, it waits another inlineWait
// instead of starting a worker; only a queue that stood still gets one.
func TestQueueTimerWaitsWhileTheQueueMoves(t *testing.T) {
	q := &workQueue{jobs: []stepJob{{sp: &stepPlan{}}}, bet: quickSteps{armed: true, timer: time.AfterFunc(time.Hour, func() {})}}
	defer q.bet.timer.Stop()
	q.bet.taken = 3 // taken since seen (0) was noted
	q.timedOut()
	if q.starting || !q.bet.armed || q.bet.seen != 3 {
		t.Fatalf("after progress: starting %v, armed %v, seen %d; want no worker, armed again, seen 3", q.starting, q.bet.armed, q.bet.seen)
	}
	q.jobs = nil // the queue stood still and is empty now: nothing to start
	q.timedOut()
	if q.starting || q.bet.armed {
		t.Fatalf("without progress on an empty queue: starting %v, armed %v; want neither", q.starting, q.bet.armed)
	}
}

// TestQuickStepsSeesASlowJobQueued: a slow job queued behind quick ones
// ends the bet until it is taken.
func TestQuickStepsSeesASlowJobQueued(t *testing.T) {
	quick, slow := &stepPlan{}, &stepPlan{}
	quick.calls.note(time.Microsecond)
	slow.calls.note(time.Millisecond)
	q := &workQueue{}
	for _, sp := range []*stepPlan{quick, slow, quick} {
		q.jobs = append(q.jobs, stepJob{sp: sp})
		q.bet.queued(sp)
	}
	// Held as the driver holds it for wait: the timer's timedOut takes it too.
	q.mu.Lock()
	for i, want := range []bool{false, false, true} { // after taking 0, 1, 2 jobs
		if got := q.bet.wait(q, quick); got != want {
			t.Errorf("after %d taken: wait = %v; want %v", i, got, want)
		}
		q.take()
	}
	q.bet.disarm()
	q.mu.Unlock()
}

// overlapBackend takes pause per call and records the most calls it had
// in flight at once.
type overlapBackend struct {
	pause         time.Duration
	mu            sync.Mutex
	inFlight, max int
}

func (o *overlapBackend) CallTool(ctx context.Context, call ToolCall) (*ToolResult, error) {
	o.mu.Lock()
	o.inFlight++
	o.max = max(o.max, o.inFlight)
	o.mu.Unlock()
	time.Sleep(o.pause)
	o.mu.Lock()
	o.inFlight--
	o.mu.Unlock()
	return &ToolResult{Structured: map[string]any{"v": call.Arguments["v"]}}, nil
}

// loopWorkflow is a forEach over n items calling svc.x, ten at once.
func loopWorkflow(n int) *ir.Workflow {
	items := make([]any, n)
	for i := range items {
		items[i] = int64(i)
	}
	wf := build("loop", forEach("each", "{{.params.items}}", "n", tool("", "svc.x", M{"v": "{{.forEach.n}}"})))
	wf.InputSchema = M{"type": "object", "properties": M{"items": M{"type": "array", "default": items}}}
	return wf
}

// TestQuickLoopRunsOnTheCallingGoroutine: a loop whose tool has been quick
// and whose items fit in quickLoop runs them one after another, starting
// no worker, even when this time each call takes a millisecond (the bet
// is lost only after quickLoopWait); the same loop over a tool that is not
// quick has its calls overlap.
func TestQuickLoopRunsOnTheCallingGoroutine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mean  time.Duration // the tool's call time before the run
		alone bool
	}{
		{"quick", time.Microsecond, true},
		{"slow", time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be := &overlapBackend{pause: time.Millisecond}
			e := mustEngine(t, plan(loopWorkflow(10)), Options{Backend: be})
			wp, _ := e.lookup("loop")
			loop := wp.steps[0]
			loop.iterTime.mean.Store(int64(tc.mean))
			run, err := e.Run(context.Background(), "loop", nil, RunOptions{})
			if err != nil || run.Status != RunCompleted {
				t.Fatalf("Run = %v, %v", run, err)
			}
			if alone := be.max == 1; alone != tc.alone {
				t.Errorf("at most %d calls at once; want one at a time: %v", be.max, tc.alone)
			}
			if m := time.Duration(loop.iterTime.mean.Load()); m <= tc.mean && tc.alone {
				t.Errorf("iteration time %v after calls of 1ms; want it to have grown from %v", m, tc.mean)
			}
		})
	}
}

// gateLoopBackend holds item 0's call until item 1's has come: a quick
// tool whose call waits for another iteration's.
type gateLoopBackend struct{ second chan struct{} }

func (g gateLoopBackend) CallTool(ctx context.Context, call ToolCall) (*ToolResult, error) {
	switch call.Arguments["v"] {
	case int64(0):
		select {
		case <-g.second:
		case <-time.After(5 * time.Second):
			return nil, errors.New("item 1 was never called while item 0 waited")
		}
	case int64(1):
		close(g.second)
	}
	return &ToolResult{Structured: map[string]any{"v": call.Arguments["v"]}}, nil
}

// TestQuickLoopGivesUpAfterItsWait: when a quick loop's call waits for
// another iteration's, the loop's timer starts a worker after
// quickLoopWait, which takes the next item, and the loop completes.
func TestQuickLoopGivesUpAfterItsWait(t *testing.T) {
	e := mustEngine(t, plan(loopWorkflow(10)), Options{Backend: gateLoopBackend{second: make(chan struct{})}})
	wp, _ := e.lookup("loop")
	wp.steps[0].iterTime.mean.Store(int64(time.Microsecond))
	began := time.Now()
	run, err := e.Run(context.Background(), "loop", nil, RunOptions{})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v; want completed (item 1 must be called while item 0 waits)", run, err)
	}
	if d := time.Since(began); d < quickLoopWait {
		t.Errorf("the run took %v; want at least quickLoopWait (%v): the loop was quick, so no worker starts before", d, quickLoopWait)
	}
}

func TestQuickLoop(t *testing.T) {
	e := mustEngine(t, plan(loopWorkflow(10)), Options{Backend: benchBackend{}})
	wp, _ := e.lookup("loop")
	sp := wp.steps[0]
	for _, tc := range []struct {
		mean   time.Duration
		n, par int
		want   bool
	}{
		{0, 10, 10, false}, // never called
		{time.Microsecond, 10, 10, true},
		{time.Microsecond, 1000, 10, true},  // 1ms in all
		{time.Microsecond, 1001, 10, false}, // more than quickLoop in all
		{time.Microsecond, 10, 1, false},    // one at a time anyway
		{30 * time.Microsecond, 10, 10, false},
	} {
		sp.iterTime.mean.Store(int64(tc.mean))
		if got := sp.quickLoop(tc.n, tc.par); got != tc.want {
			t.Errorf("quickLoop(%d items, %d at once) with iterations of %v = %v; want %v", tc.n, tc.par, tc.mean, got, tc.want)
		}
	}
}

// TestLoopTimedOnExecuteStep: a loop run by Engine.ExecuteStep (the
// Temporal driver's way, with no run of the local driver around it) is
// timed too: iterations of a millisecond do not make it quick.
func TestLoopTimedOnExecuteStep(t *testing.T) {
	e := mustEngine(t, plan(loopWorkflow(10)), Options{Backend: &overlapBackend{pause: time.Millisecond}})
	m, err := e.NewMachine("loop", "run-1", nil, MachineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	acts := m.Start(time.Now())
	k := slices.IndexFunc(acts, func(a Action) bool { return a.Kind == ActionStart })
	if k < 0 {
		t.Fatalf("Start = %v; want the loop started", acts)
	}
	res, err := e.ExecuteStep(context.Background(), "loop", m.StepInput(acts[k].Step), StepEnv{}, nil)
	if err != nil || res.Status != StepCompleted {
		t.Fatalf("ExecuteStep = %v, %v", res, err)
	}
	wp, _ := e.lookup("loop")
	if it := &wp.steps[0].iterTime; it.quick() {
		t.Errorf("iteration time %v after iterations of 1ms; want it not quick", time.Duration(it.mean.Load()))
	}
}
