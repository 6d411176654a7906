package runtime_test

import (
	"context"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/runtime/semantictest"
)

// TestSemantics runs the shared semantics suite on the local driver; no
// goroutine outlives its runs (cancelled and timed-out ones included).
func TestSemantics(t *testing.T) {
	base := goruntime.NumGoroutine()
	semantictest.Run(t, semantictest.Local)
	n := goruntime.NumGoroutine()
	for i := 0; i < 200 && n > base; i++ {
		time.Sleep(5 * time.Millisecond)
		n = goruntime.NumGoroutine()
	}
	if n > base {
		t.Errorf("goroutines = %d after the suite; want at most %d", n, base)
	}
}

// TestReplay runs the semantics suite and replays every recorded run into
// a fresh machine: the replayed run equals the recorded one, field by
// field (times included).
func TestReplay(t *testing.T) {
	semantictest.Run(t, replayed)
}

// replayed is the local driver, plus a replay of the run it recorded.
func replayed(t *testing.T, plan *ir.Plan, opts runtime.Options, workflow string, params map[string]any, ro runtime.RunOptions) (*runtime.Run, error) {
	e, err := runtime.New(plan, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	run, err := e.Run(context.Background(), workflow, params, ro)
	if err != nil {
		return nil, err
	}
	rec, err := e.Status(context.Background(), run.ID)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	got, err := e.Replay(rec)
	if err != nil {
		t.Errorf("Replay(%s): %v", run.ID, err)
		return run, nil
	}
	if diff := cmp.Diff(rec, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Replay(%s) mismatch (-recorded +replayed):\n%s", run.ID, diff)
	}
	return run, nil
}

// TestSemanticsOnExecuteStep runs the semantics suite on a driver shaped
// like the Temporal one: one loop owns the machine and performs its
// actions; every started step runs as its own "activity" (a goroutine
// calling Engine.ExecuteStep on the Machine.StepInput snapshot), whose
// retry notices and result come back to the loop over channels.
func TestSemanticsOnExecuteStep(t *testing.T) {
	semantictest.Run(t, activities)
}

type retryNotice struct {
	step, attempt int
	err           *runtime.StepError
}

func activities(t *testing.T, plan *ir.Plan, opts runtime.Options, workflow string, params map[string]any, ro runtime.RunOptions) (*runtime.Run, error) {
	e, err := runtime.New(plan, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	m, err := e.NewMachine(workflow, "run-1", params, runtime.MachineOptions{})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer func() { cancel(nil) }()
	env := runtime.StepEnv{Backend: opts.Backend, Elicitor: ro.Elicitor}
	results, retries := make(chan runtime.StepResult), make(chan retryNotice)
	running := 0
	perform := func(acts []runtime.Action) {
		for _, a := range acts {
			switch a.Kind {
			case runtime.ActionStart:
				in, actx := m.StepInput(a.Step), ctx
				running++
				go func() {
					res, err := e.ExecuteStep(actx, workflow, in, env, func(attempt int, serr *runtime.StepError) {
						retries <- retryNotice{in.Step, attempt, serr}
					})
					if err != nil {
						t.Errorf("ExecuteStep(%d): %v", in.Step, err)
					}
					results <- res
				}()
			case runtime.ActionStop:
				cancel(runtime.StopCause(a.Cause)) // the running activities see it
			case runtime.ActionFinally:
				ctx, cancel = context.WithCancelCause(context.Background())
			}
		}
	}
	perform(m.Start(time.Now()))
	for running > 0 {
		select {
		case res := <-results:
			running--
			perform(m.StepDone(res))
		case n := <-retries:
			perform(m.Retrying(n.step, n.attempt, n.err))
		}
	}
	if !m.Done() {
		t.Fatalf("the machine is not done with nothing running")
	}
	return m.Run(), nil
}
