package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
)

// chain5 is s1 -> s2 -> s3 -> s4 -> s5, each passing on the previous
// step's output; s4 may be marked idempotent.
func chain5(idem4 bool) *ir.Workflow {
	wf := build("chain5",
		tool("s1", "svc.s1", M{"n": "{{.params.n}}"}),
		tool("s2", "svc.s2", M{"prev": "{{.steps.s1.output.args.n}}"}, "s1"),
		tool("s3", "svc.s3", M{"prev": "{{.steps.s2.output.args.prev}}"}, "s2"),
		tool("s4", "svc.s4", M{"prev": "{{.steps.s3.output.args.prev}}"}, "s3"),
		tool("s5", "svc.s5", M{"prev": "{{.steps.s4.output.args.prev}}"}, "s4"),
	)
	wf.Steps[3].Idempotent = idem4
	return wf
}

// recordUntil runs wf with a backend whose tool at stepID hangs, and
// returns the run's record as the store holds it while stepID is in
// flight (what a crash would leave), then cancels that run.
func recordUntil(t *testing.T, wf *ir.Workflow, stepID string, params M) *Run {
	t.Helper()
	fb := newFake(map[string]*fakeTool{"svc." + stepID: {Hang: true}})
	fb.Started = make(chan string, 16)
	// A MemoryStore writes every record at once, so the record is exact.
	e := mustEngine(t, plan(wf), Options{Backend: fb, Store: NewMemoryStore(0)})
	done := make(chan *Run, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		run, err := e.Run(ctx, wf.Name, params, RunOptions{RunID: "r1"})
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		done <- run
	}()
	for name := range fb.Started {
		if name == "svc."+stepID {
			break
		}
	}
	rec, err := e.Status(ctx, "r1")
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	cancel()
	<-done
	return rec
}

// resume resumes rec on a fresh engine with a fresh store holding rec,
// as vmcp does after a restart.
func resume(t *testing.T, wf *ir.Workflow, rec *Run, fb *fakeBackend, opts Options) (*Run, *MemoryStore) {
	t.Helper()
	ms := NewMemoryStore(0)
	if err := ms.CreateRun(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	opts.Backend, opts.Store = fb, ms
	e := mustEngine(t, plan(wf), opts)
	run, err := e.Resume(context.Background(), rec, RunOptions{})
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	return run, ms
}

func callCounts(fb *fakeBackend, ids ...string) map[string]int {
	out := map[string]int{}
	for _, id := range ids {
		out[id] = len(fb.CallsTo(id))
	}
	return out
}

// Finished steps are replayed, never called again; the idempotent step
// that was in flight is called again, and the run completes with the
// same output a run without the crash gives.
func TestResumeIdempotentInFlight(t *testing.T) {
	wf := chain5(true)
	rec := recordUntil(t, wf, "s4", M{"n": int64(7)})
	if got := stepStatuses(rec); got["s3"] != StepCompleted || got["s4"] != StepRunning || got["s5"] != StepPending {
		t.Fatalf("recorded statuses = %v; want s1-s3 completed, s4 running, s5 pending", got)
	}
	fb := newFake(nil)
	run, ms := resume(t, wf, rec, fb, Options{})
	if run.Status != RunCompleted || run.ID != "r1" {
		t.Fatalf("resumed run = %s %s (error %v); want r1 completed", run.ID, run.Status, run.Error)
	}
	if diff := cmp.Diff(map[string]int{"s1": 0, "s2": 0, "s3": 0, "s4": 1, "s5": 1}, callCounts(fb, "s1", "s2", "s3", "s4", "s5")); diff != "" {
		t.Errorf("backend calls after resume (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(M{"args": M{"prev": int64(7)}}, run.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	for i := range 3 {
		if !run.Steps[i].EndedAt.Equal(rec.Steps[i].EndedAt) || run.Steps[i].Attempts != rec.Steps[i].Attempts {
			t.Errorf("step %s record changed on resume: %+v, was %+v", run.Steps[i].ID, run.Steps[i], rec.Steps[i])
		}
	}
	stored, _ := ms.GetRun(context.Background(), "r1")
	if stored.Status != RunCompleted || stored.Steps[4].Status != StepCompleted {
		t.Errorf("stored run = %s, s5 %s; want completed, completed", stored.Status, stored.Steps[4].Status)
	}
}

// A step in flight that is not idempotent is not called again: the run
// ends interrupted, naming it and saying how to allow the retry.
func TestResumeNotIdempotentInterrupts(t *testing.T) {
	wf := chain5(false)
	rec := recordUntil(t, wf, "s4", M{"n": int64(7)})
	fb := newFake(nil)
	run, _ := resume(t, wf, rec, fb, Options{})
	if run.Status != RunInterrupted {
		t.Fatalf("status = %s (error %v); want interrupted", run.Status, run.Error)
	}
	want := `step "s4" was in flight when vmcp stopped and is not idempotent; mark it idempotent: true if calling it twice is safe`
	if run.Error == nil || run.Error.Step != "s4" || !strings.Contains(run.Error.Msg, want) {
		t.Errorf("error = %v; want step s4 with %q", run.Error, want)
	}
	if n := len(fb.Calls()); n != 0 {
		t.Errorf("backend calls = %d; want none", n)
	}
	if got := stepStatuses(run); got["s4"] != StepFailed || got["s5"] != StepPending || got["s3"] != StepCompleted {
		t.Errorf("statuses = %v; want s4 failed, s5 pending", got)
	}
}

// hints is a SchemaSource that also reports tool annotations.
type hints map[string]ToolHints

func (h hints) InputSchema(string, string) (map[string]any, bool) { return nil, false }
func (h hints) ToolHints(backend, tool string) (ToolHints, bool) {
	v, ok := h[backend+"."+tool]
	return v, ok
}

// The backend tool's idempotentHint or readOnlyHint make a step safe to
// call again, as idempotent: true does.
func TestResumeToolAnnotations(t *testing.T) {
	for name, h := range map[string]ToolHints{"idempotentHint": {Idempotent: true}, "readOnlyHint": {ReadOnly: true}} {
		t.Run(name, func(t *testing.T) {
			wf := chain5(false)
			rec := recordUntil(t, wf, "s4", M{"n": int64(1)})
			fb := newFake(nil)
			run, _ := resume(t, wf, rec, fb, Options{Schemas: hints{"svc.s4": h}})
			if run.Status != RunCompleted || len(fb.CallsTo("s4")) != 1 {
				t.Errorf("status %s, s4 calls %d; want completed, 1", run.Status, len(fb.CallsTo("s4")))
			}
		})
	}
}

// A recorded run built by hand (as a store would hand it over): a step
// recorded pending whose dependencies finished starts as usual; failed
// steps with onError continue keep their recorded failure.
func TestResumeHandRecord(t *testing.T) {
	wf := build("hand",
		tool("a", "svc.a", nil),
		tool("b", "svc.b", nil).With(onError(ir.ActionContinue, 0)).With(defaults(M{"d": int64(1)})),
		tool("c", "svc.c", M{"a": "{{.steps.a.output.v}}", "b": "{{.steps.b.output.d}}"}, "a", "b"),
	)
	t0 := time.Now().Add(-time.Second)
	rec := &Run{ID: "h1", Workflow: "hand", Status: RunRunning, StartedAt: t0, Params: M{}, Steps: []StepState{
		{ID: "a", Status: StepCompleted, Attempts: 1, StartedAt: t0, EndedAt: t0.Add(time.Millisecond), Output: M{"v": "from-record"}},
		{ID: "b", Status: StepFailed, Attempts: 1, StartedAt: t0, EndedAt: t0.Add(2 * time.Millisecond), Output: M{"d": int64(1)}, Error: "boom"},
		{ID: "c", Status: StepPending},
	}}
	fb := newFake(nil)
	run, _ := resume(t, wf, rec, fb, Options{})
	if run.Status != RunCompleted {
		t.Fatalf("status = %s (%v); want completed", run.Status, run.Error)
	}
	if calls := fb.CallsTo("c"); len(calls) != 1 || !cmp.Equal(calls[0].Arguments, map[string]any{"a": "from-record", "b": int64(1)}) {
		t.Errorf("c called with %v; want the recorded outputs", calls)
	}
	if len(fb.CallsTo("a"))+len(fb.CallsTo("b")) != 0 {
		t.Errorf("a or b called again")
	}
	if st := run.Steps[1]; st.Status != StepFailed || st.Error != "boom" {
		t.Errorf("b = %+v; want its recorded failure", st)
	}
}

// An elicitation that was waiting for an answer is asked again.
func TestResumeElicitationAskedAgain(t *testing.T) {
	wf := build("ask",
		tool("a", "svc.a", nil),
		elicit("q", "ok?", "a"),
		tool("b", "svc.b", M{"ans": "{{.steps.q.output.content.ok}}"}, "q"),
	)
	t0 := time.Now().Add(-time.Second)
	rec := &Run{ID: "e1", Workflow: "ask", Status: RunRunning, StartedAt: t0, Params: M{}, Steps: []StepState{
		{ID: "a", Status: StepCompleted, Attempts: 1, StartedAt: t0, EndedAt: t0.Add(time.Millisecond), Output: M{}},
		{ID: "q", Status: StepRunning, Attempts: 1, StartedAt: t0.Add(time.Millisecond)},
		{ID: "b", Status: StepPending},
	}}
	ms := NewMemoryStore(0)
	_ = ms.CreateRun(context.Background(), rec)
	fb := newFake(nil)
	e := mustEngine(t, plan(wf), Options{Backend: fb, Store: ms})
	el := &countingElicitor{res: ElicitResult{Action: ElicitAccept, Content: M{"ok": true}}}
	run, err := e.Resume(context.Background(), rec, RunOptions{Elicitor: el})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != RunCompleted || el.n != 1 || len(fb.CallsTo("a")) != 0 {
		t.Errorf("status %s, asked %d times, a called %d times; want completed, 1, 0", run.Status, el.n, len(fb.CallsTo("a")))
	}
	if calls := fb.CallsTo("b"); len(calls) != 1 || calls[0].Arguments["ans"] != true {
		t.Errorf("b calls = %v; want one with the new answer", calls)
	}
}

type countingElicitor struct {
	mu  sync.Mutex
	n   int
	res ElicitResult
}

func (c *countingElicitor) Elicit(context.Context, ElicitRequest) (ElicitResult, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.res, nil
}

// A loop in flight runs again whole only when every call in it is
// idempotent; otherwise the run ends interrupted at the loop.
func TestResumeLoopInFlight(t *testing.T) {
	for _, idem := range []bool{true, false} {
		wf := build("loop",
			tool("list", "svc.list", nil),
			forEach("each", "{{.steps.list.output.items}}", "it", tool("", "svc.item", M{"x": "{{.forEach.it}}"}), "list"),
		)
		wf.Steps[1].ForEach.Step.Idempotent = idem
		t0 := time.Now().Add(-time.Second)
		rec := &Run{ID: "l1", Workflow: "loop", Status: RunRunning, StartedAt: t0, Params: M{}, Steps: []StepState{
			{ID: "list", Status: StepCompleted, Attempts: 1, StartedAt: t0, EndedAt: t0.Add(time.Millisecond), Output: M{"items": A{int64(1), int64(2)}}},
			{ID: "each", Status: StepRunning, Attempts: 1, StartedAt: t0.Add(time.Millisecond)},
		}}
		fb := newFake(nil)
		run, _ := resume(t, wf, rec, fb, Options{})
		if idem {
			if run.Status != RunCompleted || len(fb.CallsTo("each")) != 2 {
				t.Errorf("idempotent loop: status %s, %d calls; want completed, 2", run.Status, len(fb.CallsTo("each")))
			}
			continue
		}
		if run.Status != RunInterrupted || run.Error == nil || !strings.Contains(run.Error.Msg, `step "each" was in flight when vmcp stopped and its loop makes calls that are not idempotent`) {
			t.Errorf("non-idempotent loop: status %s, error %v; want interrupted naming each", run.Status, run.Error)
		}
		if len(fb.Calls()) != 0 {
			t.Errorf("non-idempotent loop: %d calls; want none", len(fb.Calls()))
		}
	}
}

// Resume refuses what it cannot continue, before calling anything.
func TestResumeRefuses(t *testing.T) {
	wf := chain5(true)
	e := mustEngine(t, plan(wf), Options{Backend: newFake(nil)})
	t0 := time.Now()
	for _, c := range []struct {
		run  *Run
		want string
	}{
		{&Run{ID: "x", Workflow: "chain5", Status: RunCompleted, StartedAt: t0}, `run "x" is completed: only a running run resumes`},
		{&Run{ID: "x", Workflow: "nope", Status: RunRunning, StartedAt: t0}, `unknown workflow "nope"`},
		{&Run{ID: "x", Workflow: "chain5", Status: RunRunning, StartedAt: t0, Steps: []StepState{{ID: "s1"}}}, "has 1 steps but workflow \"chain5\" has 5 now: its plan changed since the run started"},
	} {
		if _, err := e.Resume(context.Background(), c.run, RunOptions{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Resume(%s %s) error = %v; want %q", c.run.Workflow, c.run.Status, err, c.want)
		}
	}
}

// The workflow timeout counts from the run's start: a run resumed after
// its deadline times out without calling anything.
func TestResumeAfterDeadline(t *testing.T) {
	wf := chain5(true)
	t0 := time.Now().Add(-2 * time.Minute) // the workflow timeout is 1m
	rec := &Run{ID: "d1", Workflow: "chain5", Status: RunRunning, StartedAt: t0, Params: M{"n": int64(1)}, Steps: []StepState{
		{ID: "s1", Status: StepCompleted, Attempts: 1, StartedAt: t0, EndedAt: t0.Add(time.Millisecond), Output: M{"args": M{"n": int64(1)}}},
		{ID: "s2", Status: StepRunning, Attempts: 1, StartedAt: t0.Add(time.Millisecond)},
		{ID: "s3", Status: StepPending}, {ID: "s4", Status: StepPending}, {ID: "s5", Status: StepPending},
	}}
	wf.Steps[1].Idempotent = true
	fb := newFake(nil)
	run, _ := resume(t, wf, rec, fb, Options{})
	if run.Status != RunTimedOut || len(fb.Calls()) != 0 {
		t.Errorf("status %s, %d calls; want timed_out, none", run.Status, len(fb.Calls()))
	}
	if st := run.Steps[1]; st.Status != StepPending {
		t.Errorf("s2 = %s; want pending (not started again)", st.Status)
	}
}
