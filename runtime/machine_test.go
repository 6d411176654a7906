package runtime

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
)

// driveScripted runs wf's machine with no clock and no goroutines: every
// started step ends 1ms after the previous input, in start order, failing
// when fail names it. It returns every action, in order, and the run.
func driveScripted(t *testing.T, wf *ir.Workflow, t0 time.Time, fail map[string]bool) ([]Action, *Run) {
	t.Helper()
	e := mustEngine(t, plan(wf), Options{Backend: newFake(nil)})
	m, err := e.NewMachine(wf.Name, "det", nil, MachineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var all []Action
	var queue []int
	take := func(acts []Action) {
		for _, a := range acts {
			all = append(all, a)
			if a.Kind == ActionStart {
				queue = append(queue, a.Step)
			}
		}
	}
	now := t0
	take(m.Start(now))
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		now = now.Add(time.Millisecond)
		res := StepResult{Step: i, Status: StepCompleted, Output: M{"v": int64(i)}, Attempts: 1, EndedAt: now}
		if fail[m.Step(i).ID] {
			res = StepResult{Step: i, Status: StepFailed, Err: m.StepError(i, "boom"), Attempts: 1, EndedAt: now}
		}
		take(m.StepDone(res))
	}
	if !m.Done() {
		t.Fatal("machine not done")
	}
	return all, m.Run()
}

// The machine is a function of its inputs: the same inputs give the same
// actions and the same run, and every time in the run is an input's. The
// run is in the year 2000 with a one-minute workflow timeout: a clock read
// would time it out.
func TestMachineIsDeterministic(t *testing.T) {
	wf := build("det",
		tool("root", "svc.x", nil),
		tool("a", "svc.x", nil, "root"),
		tool("b", "svc.x", nil, "root").With(onError(ir.ActionContinue, 0)).With(defaults(M{"v": int64(-1)})),
		tool("c", "svc.x", nil, "root").With(when("{{eq .steps.root.output.v 0}}")),
		tool("skip", "svc.x", nil, "root").With(when("{{eq .steps.root.output.v 9}}")),
		tool("join", "svc.x", M{"b": "{{.steps.b.output.v}}"}, "a", "b", "c", "skip"),
	)
	t0 := time.Date(2000, 1, 2, 3, 4, 5, 0, time.UTC)
	acts1, run1 := driveScripted(t, wf, t0, map[string]bool{"b": true})
	acts2, run2 := driveScripted(t, wf, t0, map[string]bool{"b": true})
	if diff := cmp.Diff(acts1, acts2); diff != "" {
		t.Errorf("actions differ between two identical runs:\n%s", diff)
	}
	if diff := cmp.Diff(run1, run2); diff != "" {
		t.Errorf("runs differ between two identical runs:\n%s", diff)
	}
	if run1.Status != RunCompleted || !run1.StartedAt.Equal(t0) {
		t.Fatalf("run = %s started %s; want completed at %s", run1.Status, run1.StartedAt, t0)
	}
	// root ends at t0+1ms and starts a, b, c at that time; skip settles then.
	want := map[string][2]time.Duration{"root": {0, 1}, "a": {1, 2}, "b": {1, 3}, "c": {1, 4}, "join": {4, 5}}
	for _, st := range run1.Steps {
		if w, ok := want[st.ID]; ok && (!st.StartedAt.Equal(t0.Add(w[0]*time.Millisecond)) || !st.EndedAt.Equal(t0.Add(w[1]*time.Millisecond))) {
			t.Errorf("step %s ran %s..%s; want +%dms..+%dms", st.ID, st.StartedAt.Sub(t0), st.EndedAt.Sub(t0), w[0], w[1])
		}
	}
	if st := run1.Steps[4]; st.Status != StepSkipped || !st.EndedAt.Equal(t0.Add(time.Millisecond)) {
		t.Errorf("skip = %s at %s; want skipped at +1ms", st.Status, st.EndedAt.Sub(t0))
	}
	// Starts come in ready-queue order, each after its record.
	var starts []string
	for _, a := range acts1 {
		if a.Kind == ActionStart {
			starts = append(starts, run1.Steps[a.Step].ID)
		}
	}
	if diff := cmp.Diff([]string{"root", "a", "b", "c", "join"}, starts); diff != "" {
		t.Errorf("start order (-want +got):\n%s", diff)
	}
}
