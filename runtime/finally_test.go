package runtime

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
)

// withFinally gives wf finally steps; their dependencies name earlier
// finally steps.
func withFinally(wf *ir.Workflow, steps ...step) *ir.Workflow {
	index := map[string]int{}
	for i, s := range steps {
		s.Index = i
		index[s.ID] = i
		for _, a := range s.After {
			s.Deps = append(s.Deps, index[a])
		}
		sort.Ints(s.Deps)
		wf.Finally = append(wf.Finally, s.Step)
	}
	return wf
}

// finallyArgs returns the arguments of the one call made for step id.
func finallyArgs(t *testing.T, fb *fakeBackend, id string) map[string]any {
	t.Helper()
	calls := fb.CallsTo(id)
	if len(calls) != 1 {
		t.Fatalf("finally step %q was called %d times; want once", id, len(calls))
	}
	return calls[0].Arguments
}

func stepRecord(t *testing.T, run *Run, id string) StepState {
	t.Helper()
	for _, st := range run.Steps {
		if st.ID == id {
			return st
		}
	}
	t.Fatalf("run has no step %q", id)
	return StepState{}
}

// cleanupArgs are the arguments of the cleanup step in these tests: the
// run's outcome, a top-level step's output field with defaultResults, and
// the status of a step that may not have run.
var cleanupArgs = M{
	"outcome": "{{.workflow.status}}",
	"token":   "{{.steps.lock.output.token}}",
	"work":    "{{.steps.work.status}}",
}

func TestFinallyAfterSuccess(t *testing.T) {
	wf := withFinally(build("ok",
		tool("lock", "locks.acquire", nil).With(defaults(M{"token": "none"})),
		tool("work", "jobs.run", M{"token": "{{.steps.lock.output.token}}"}, "lock"),
	), tool("release", "locks.release", cleanupArgs))
	fb := newFake(map[string]*fakeTool{"locks.acquire": {Result: func(map[string]any) any { return M{"token": "t-1"} }}})
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	run, err := e.Run(context.Background(), "ok", nil, RunOptions{})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v; want completed", run.Status, err)
	}
	want := M{"outcome": "completed", "token": "t-1", "work": "completed"}
	if diff := cmp.Diff(want, finallyArgs(t, fb, "release")); diff != "" {
		t.Errorf("release arguments (-want +got):\n%s", diff)
	}
	// The result is the single top-level sink's, never a finally step's.
	if diff := cmp.Diff(M{"args": M{"token": "t-1"}}, run.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	rel := stepRecord(t, run, "release")
	if run.FinallyFrom != 2 || !run.IsFinally(2) || run.IsFinally(1) || rel.Status != StepCompleted {
		t.Errorf("FinallyFrom = %d, release %+v; want 2 and release a completed finally step", run.FinallyFrom, rel)
	}
	if !rel.StartedAt.After(stepRecord(t, run, "work").EndedAt) && !rel.StartedAt.Equal(stepRecord(t, run, "work").EndedAt) {
		t.Errorf("release started at %v, before work ended at %v", rel.StartedAt, stepRecord(t, run, "work").EndedAt)
	}
	if got := run.FailedFinally(); got != nil {
		t.Errorf("FailedFinally = %v; want none", got)
	}
}

func TestFinallyAfterFailure(t *testing.T) {
	wf := withFinally(build("fails",
		tool("lock", "locks.acquire", nil).With(defaults(M{"token": "none"})),
		tool("work", "jobs.run", nil, "lock"),
	), tool("release", "locks.release", cleanupArgs))
	fb := newFake(map[string]*fakeTool{"locks.acquire": {Fail: true}})
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	run, _ := e.Run(context.Background(), "fails", nil, RunOptions{})
	if run.Status != RunFailed || run.Error == nil || run.Error.Step != "lock" {
		t.Fatalf("Run = %v (%v); want failed at lock", run.Status, run.Error)
	}
	// lock failed without an output: the finally step sees its
	// defaultResults; work never started.
	want := M{"outcome": "failed", "token": "none", "work": "pending"}
	if diff := cmp.Diff(want, finallyArgs(t, fb, "release")); diff != "" {
		t.Errorf("release arguments (-want +got):\n%s", diff)
	}
	if st := stepRecord(t, run, "release"); st.Status != StepCompleted {
		t.Errorf("release = %+v; want completed", st)
	}
}

// hangingRun is a run whose work step hangs until the run is stopped, with
// a cleanup step in finally.
func hangingRun() (*ir.Workflow, *fakeBackend) {
	wf := withFinally(build("hangs",
		tool("lock", "locks.acquire", nil).With(defaults(M{"token": "none"})),
		tool("work", "jobs.hang", nil, "lock"),
		tool("after", "jobs.run", nil, "work"),
	), tool("release", "locks.release", cleanupArgs).With(timeout(5*time.Second)))
	fb := newFake(map[string]*fakeTool{
		"locks.acquire": {Result: func(map[string]any) any { return M{"token": "t-1"} }},
		"jobs.hang":     {Hang: true},
	})
	fb.Started = make(chan string, 8)
	return wf, fb
}

func waitStarted(t *testing.T, fb *fakeBackend, name string) {
	t.Helper()
	timer := time.After(5 * time.Second)
	for {
		select {
		case got := <-fb.Started:
			if got == name {
				return
			}
		case <-timer:
			t.Fatalf("%s never started", name)
		}
	}
}

func TestFinallyAfterCancel(t *testing.T) {
	wf, fb := hangingRun()
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	done := make(chan *Run)
	go func() {
		run, _ := e.Run(context.Background(), "hangs", nil, RunOptions{RunID: "run-c"})
		done <- run
	}()
	waitStarted(t, fb, "jobs.hang")
	if err := e.Cancel(context.Background(), "run-c"); err != nil {
		t.Fatalf("Cancel = %v", err)
	}
	run := <-done
	if run.Status != RunCancelled {
		t.Fatalf("status = %s; want cancelled", run.Status)
	}
	want := M{"outcome": "cancelled", "token": "t-1", "work": "failed"}
	if diff := cmp.Diff(want, finallyArgs(t, fb, "release")); diff != "" {
		t.Errorf("release arguments (-want +got):\n%s", diff)
	}
	if st := stepRecord(t, run, "release"); st.Status != StepCompleted {
		t.Errorf("release = %+v; want completed: its call must not see the cancel", st)
	}
	if n := len(fb.CallsTo("after")); n != 0 {
		t.Errorf("after ran %d times; want 0", n)
	}
}

func TestFinallyAfterClientCancel(t *testing.T) {
	wf, fb := hangingRun()
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { waitStarted(t, fb, "jobs.hang"); cancel() }()
	run, _ := e.Run(ctx, "hangs", nil, RunOptions{})
	if run.Status != RunCancelled {
		t.Fatalf("status = %s; want cancelled", run.Status)
	}
	if got := finallyArgs(t, fb, "release")["outcome"]; got != "cancelled" {
		t.Errorf("release saw outcome %v; want cancelled", got)
	}
	if st := stepRecord(t, run, "release"); st.Status != StepCompleted {
		t.Errorf("release = %+v; want completed although the caller's context ended", st)
	}
}

func TestFinallyAfterWorkflowTimeout(t *testing.T) {
	wf, fb := hangingRun()
	wf.Timeout = ir.Duration(50 * time.Millisecond)
	// The finally step is slower than the whole workflow timeout: its own
	// timeout bounds it, not the workflow's, which has passed.
	fb.Tools["locks.release"] = &fakeTool{Latency: 100 * time.Millisecond}
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	run, _ := e.Run(context.Background(), "hangs", nil, RunOptions{})
	if run.Status != RunTimedOut {
		t.Fatalf("status = %s; want timed_out", run.Status)
	}
	if got := finallyArgs(t, fb, "release")["outcome"]; got != "timed_out" {
		t.Errorf("release saw outcome %v; want timed_out", got)
	}
	if st := stepRecord(t, run, "release"); st.Status != StepCompleted {
		t.Errorf("release = %+v; want completed", st)
	}
}

func TestFinallyFailureKeepsStatus(t *testing.T) {
	wf := withFinally(build("keeps", tool("work", "jobs.run", nil)),
		tool("flush", "cache.flush", nil).With(defaults(M{"flushed": false})),
		tool("notify", "chat.post", M{"flush": "{{.steps.flush.status}}", "flushed": "{{.steps.flush.output.flushed}}"}, "flush"),
		tool("stuck", "cache.hang", nil).With(timeout(30*time.Millisecond)),
	)
	fb := newFake(map[string]*fakeTool{"cache.flush": {IsError: true}, "cache.hang": {Hang: true}})
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	run, _ := e.Run(context.Background(), "keeps", nil, RunOptions{})
	if run.Status != RunCompleted || run.Error != nil {
		t.Fatalf("Run = %v (%v); want completed: finally steps cannot change the status", run.Status, run.Error)
	}
	if diff := cmp.Diff(M{"args": M{}}, run.Output); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	// A failed finally step does not stop the ones after it.
	if diff := cmp.Diff(M{"flush": "failed", "flushed": false}, finallyArgs(t, fb, "notify")); diff != "" {
		t.Errorf("notify arguments (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"flush", "stuck"}, run.FailedFinally()); diff != "" {
		t.Errorf("FailedFinally (-want +got):\n%s", diff)
	}
	if st := stepRecord(t, run, "stuck"); st.Error != "timed out after 30ms" {
		t.Errorf("stuck error = %q; want its own timeout", st.Error)
	}
}

func TestFinallyIgnoresCancelWhileRunning(t *testing.T) {
	wf := withFinally(build("late", tool("work", "jobs.run", nil)),
		tool("release", "locks.release", nil))
	fb := newFake(map[string]*fakeTool{"locks.release": {Latency: 50 * time.Millisecond}})
	fb.Started = make(chan string, 4)
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	done := make(chan *Run)
	go func() {
		run, _ := e.Run(context.Background(), "late", nil, RunOptions{RunID: "run-l"})
		done <- run
	}()
	waitStarted(t, fb, "locks.release")
	st, err := e.Status(context.Background(), "run-l")
	if err != nil || st.Status != RunRunning {
		t.Errorf("Status during finally = %v, %v; want running", st.Status, err)
	}
	if err := e.Cancel(context.Background(), "run-l"); err != nil {
		t.Fatalf("Cancel = %v", err)
	}
	run := <-done
	if run.Status != RunCompleted || stepRecord(t, run, "release").Status != StepCompleted {
		t.Errorf("Run = %v, release %v; want both completed: the outcome was decided before finally", run.Status, stepRecord(t, run, "release").Status)
	}
}

// TestWorkflowStatusWhileRunning: top-level steps read .workflow.status as
// running; only finally steps see the outcome.
func TestWorkflowStatusWhileRunning(t *testing.T) {
	wf := withFinally(build("status", tool("work", "jobs.run", M{"outcome": "{{.workflow.status}}"})),
		tool("after", "jobs.run", M{"outcome": "{{.workflow.status}}"}))
	fb := newFake(nil)
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	if run, _ := e.Run(context.Background(), "status", nil, RunOptions{}); run.Status != RunCompleted {
		t.Fatalf("status = %s; want completed", run.Status)
	}
	if got := finallyArgs(t, fb, "work")["outcome"]; got != "running" {
		t.Errorf("work saw .workflow.status %v; want running", got)
	}
	if got := finallyArgs(t, fb, "after")["outcome"]; got != "completed" {
		t.Errorf("after saw .workflow.status %v; want completed", got)
	}
}

// TestFinallyIndexReadsOfMissingOutput: a top-level step that failed
// without defaultResults reads as an empty object in finally steps, so
// index (the checker's way to read an optional field) yields null instead
// of failing the finally step.
func TestFinallyIndexReadsOfMissingOutput(t *testing.T) {
	wf := withFinally(build("idx", tool("work", "jobs.fail", nil), tool("later", "jobs.run", nil, "work")),
		tool("after", "jobs.run", M{"id": `{{index .steps.work.output "id"}}`, "later": `{{index .steps.later.output "id"}}`, "fixed": "x"}))
	fb := newFake(map[string]*fakeTool{"jobs.fail": {Fail: true}})
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	run, _ := e.Run(context.Background(), "idx", nil, RunOptions{})
	if st := stepRecord(t, run, "after"); run.Status != RunFailed || st.Status != StepCompleted {
		t.Fatalf("Run = %s, after = %+v; want failed and after completed", run.Status, st)
	}
	if diff := cmp.Diff(M{"fixed": "x", "id": nil, "later": nil}, finallyArgs(t, fb, "after")); diff != "" {
		t.Errorf("after arguments (-want +got):\n%s", diff)
	}
	if st := stepRecord(t, run, "work"); st.Output != nil {
		t.Errorf("work's record output = %v; want none (the record keeps what happened)", st.Output)
	}
}

// TestFinallyCancelRace cancels runs at every moment around the end of
// their top-level steps (under -race): whatever the timing, the finally
// step runs exactly once, to the end, and the run is completed or
// cancelled, never anything else.
func TestFinallyCancelRace(t *testing.T) {
	wf := withFinally(build("race",
		tool("a", "svc.quick", nil),
		tool("b", "svc.quick", nil, "a"),
	), tool("cleanup", "svc.quick", M{"outcome": "{{.workflow.status}}"}))
	fb := newFake(map[string]*fakeTool{"svc.quick": {Latency: 200 * time.Microsecond}})
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	const runs = 200
	for i := range runs {
		id := fmt.Sprintf("run-%d", i)
		done := make(chan *Run)
		go func() {
			run, _ := e.Run(context.Background(), "race", nil, RunOptions{RunID: id})
			done <- run
		}()
		time.Sleep(time.Duration(i%10) * 100 * time.Microsecond)
		if err := e.Cancel(context.Background(), id); err != nil && !errors.Is(err, ErrRunNotFound) {
			t.Fatalf("Cancel(%s) = %v", id, err)
		}
		run := <-done
		if run.Status != RunCompleted && run.Status != RunCancelled {
			t.Fatalf("%s: status %s (%v); want completed or cancelled", id, run.Status, run.Error)
		}
		if st := stepRecord(t, run, "cleanup"); st.Status != StepCompleted {
			t.Fatalf("%s: cleanup %+v; want completed", id, st)
		}
	}
	var outcomes []string
	for _, c := range fb.CallsTo("cleanup") {
		outcomes = append(outcomes, c.Arguments["outcome"].(string))
	}
	if len(outcomes) != runs {
		t.Errorf("cleanup ran %d times in %d runs; want once per run", len(outcomes), runs)
	}
	seen := map[string]int{}
	for _, o := range outcomes {
		seen[o]++
	}
	t.Logf("cleanup saw outcomes %v", seen)
}
