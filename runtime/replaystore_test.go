package runtime

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func checkReplay(t testing.TB, e *Engine, run *Run) {
	t.Helper()
	if run.Draft {
		return // a draft's plan is not the engine's to replay
	}
	got, err := e.Replay(run)
	if errors.Is(err, ErrPlanChanged) {
		return // the workflow was replaced while the run went (SetWorkflows)
	}
	if err != nil {
		t.Errorf("Replay(%q): %v", run.ID, err)
		return
	}
	if diff := cmp.Diff(run, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Replay(%q) mismatch (-recorded +replayed):\n%s", run.ID, diff)
	}
}

// replayStore is a MemoryStore that replays every run it is told has
// finished into a fresh machine and reports any difference (see
// mustEngine): the replay test of every run the runtime's tests make.
type replayStore struct {
	*MemoryStore
	t testing.TB
	e *Engine
}

func (s *replayStore) FinishRun(ctx context.Context, run *Run) error {
	if err := s.MemoryStore.FinishRun(ctx, run); err != nil {
		return err
	}
	rec, err := s.MemoryStore.GetRun(ctx, run.ID)
	if err != nil {
		return err
	}
	checkReplay(s.t, s.e, rec)
	return nil
}
