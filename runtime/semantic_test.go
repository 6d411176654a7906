package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/runtime/semantictest"
)

// TestSemantics runs the shared semantics suite on the local driver.
func TestSemantics(t *testing.T) {
	semantictest.Run(t, semantictest.Local)
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

// TestSemanticsStepwise runs the semantics suite on a single-threaded
// driver, as the Temporal driver is: the machine's actions are carried
// out one at a time, each step by Engine.ExecuteStep on the snapshot
// Machine.StepInput gives, and its retry notices and result are fed back.
func TestSemanticsStepwise(t *testing.T) {
	semantictest.Run(t, stepwise)
}

func stepwise(t *testing.T, plan *ir.Plan, opts runtime.Options, workflow string, params map[string]any, ro runtime.RunOptions) (*runtime.Run, error) {
	e, err := runtime.New(plan, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	m, err := e.NewMachine(workflow, "run-1", params, runtime.MachineOptions{})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel() }()
	var queue []int
	perform := func(acts []runtime.Action) {
		for _, a := range acts {
			switch a.Kind {
			case runtime.ActionStart:
				queue = append(queue, a.Step)
			case runtime.ActionStop:
				cancel() // the queued steps run on a stopped context
			case runtime.ActionFinally:
				ctx, cancel = context.WithCancel(context.Background())
			}
		}
	}
	perform(m.Start(time.Now()))
	env := runtime.StepEnv{Backend: opts.Backend, Elicitor: ro.Elicitor}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		res, err := e.ExecuteStep(ctx, workflow, m.StepInput(i), env, func(attempt int, serr *runtime.StepError) {
			perform(m.Retrying(i, attempt, serr))
		})
		if err != nil {
			t.Fatalf("ExecuteStep(%d): %v", i, err)
		}
		perform(m.StepDone(res))
	}
	if !m.Done() {
		t.Fatalf("stepwise: the machine is not done with nothing left to run")
	}
	return m.Run(), nil
}
