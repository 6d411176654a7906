package runtime

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
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
	if want := []string{"a", "b", "c"}; !slices.Equal(be.order, want) {
		t.Errorf("calls in the order %v; want %v (a first, on the calling goroutine; b while a waits)", be.order, want)
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
	q := &workQueue{jobs: []stepJob{{sp: &stepPlan{}}}, armed: true, timer: time.AfterFunc(time.Hour, func() {})}
	defer q.timer.Stop()
	q.taken = 3 // taken since seen (0) was noted
	q.timedOut()
	if q.starting || !q.armed || q.seen != 3 {
		t.Fatalf("after progress: starting %v, armed %v, seen %d; want no worker, armed again, seen 3", q.starting, q.armed, q.seen)
	}
	q.jobs = nil // the queue stood still and is empty now: nothing to start
	q.timedOut()
	if q.starting || q.armed {
		t.Fatalf("without progress on an empty queue: starting %v, armed %v; want neither", q.starting, q.armed)
	}
}
