package runtime

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func checkReplay(t *testing.T, e *Engine, run *Run) {
	t.Helper()
	got, err := e.Replay(run)
	if err != nil {
		t.Errorf("Replay(%q): %v", run.ID, err)
		return
	}
	if diff := cmp.Diff(run, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Replay(%q) mismatch (-recorded +replayed):\n%s", run.ID, diff)
	}
}
