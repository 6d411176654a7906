package runtime_test

import (
	"context"
	"testing"

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
