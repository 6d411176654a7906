package storetest

// The retention checks hold every store to state.retention's contract
// (runtime/retention.go): in the background, finished runs older than
// Finished go, then the oldest finished runs beyond MaxRuns, and running
// runs stay whatever their age or number. The clock is the test's, so
// "older than" is decided by the test, and the checks wait (polling, up
// to 10 seconds) for the background loop rather than timing it.

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/runtime"
)

// RetainOpener returns a new, empty store that prunes by r in the
// background, reading the time from now. It should stop the pruning and
// release the store with t.Cleanup.
type RetainOpener func(t *testing.T, r runtime.Retention, now func() time.Time) runtime.Store

// Retention runs the retention checks as subtests of t.
func Retention(t *testing.T, open RetainOpener) {
	t.Run("Finished", func(t *testing.T) { testRetainFinished(t, open) })
	t.Run("MaxRuns", func(t *testing.T) { testRetainMaxRuns(t, open) })
}

// clock is a fixed "now", an hour after base.
func clock() time.Time { return base.Add(time.Hour) }

// addRun creates a run started at started with one step, and finishes it
// at ended with status unless status is running.
func addRun(t *testing.T, s runtime.Store, id string, started, ended time.Time, status runtime.RunStatus) {
	t.Helper()
	r := newRun(id, "wf", started, "only")
	mustCreate(t, s, r)
	if status == runtime.RunRunning {
		return
	}
	r.Status, r.EndedAt = status, ended
	r.Steps[0] = runtime.StepState{ID: "only", Status: runtime.StepCompleted, Output: map[string]any{"n": 1.0},
		Content: map[string]any{"text": "kept with the run"}}
	if err := s.FinishRun(context.Background(), r); err != nil {
		t.Fatalf("FinishRun(%s) = %v", id, err)
	}
}

// storedIDs lists every run the store keeps, sorted.
func storedIDs(t *testing.T, s runtime.Store) []string {
	t.Helper()
	got := ids(mustList(t, s, runtime.RunFilter{Limit: 1000}))
	sort.Strings(got)
	return got
}

// waitStored polls until the store keeps exactly want (sorted), failing
// after 10 seconds.
func waitStored(t *testing.T, s runtime.Store, want []string, why string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := storedIDs(t, s)
		if cmp.Equal(want, got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10s the store keeps %v; want %v (%s)", got, want, why)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func testRetainFinished(t *testing.T, open RetainOpener) {
	s := open(t, runtime.Retention{Finished: 40 * time.Millisecond}, clock)
	now := clock()
	addRun(t, s, "old-done", base, now.Add(-time.Second), runtime.RunCompleted)
	addRun(t, s, "old-failed", base, now.Add(-time.Minute), runtime.RunFailed)
	addRun(t, s, "fresh", base, now, runtime.RunCancelled)
	addRun(t, s, "old-running", base.Add(-24*time.Hour), time.Time{}, runtime.RunRunning)
	waitStored(t, s, []string{"fresh", "old-running"}, "runs that ended over 40ms before the clock go; a fresh one and a running one, however old, stay")
	if _, err := s.GetRun(context.Background(), "old-done"); !errors.Is(err, runtime.ErrRunNotFound) {
		t.Errorf("GetRun(old-done) after it was pruned = %v; want ErrRunNotFound", err)
	}
	if got := mustGet(t, s, "fresh"); len(got.Steps) != 1 || got.Steps[0].Content["text"] != "kept with the run" {
		t.Errorf("the kept run's steps = %+v; want its step with its content", got.Steps)
	}
}

func testRetainMaxRuns(t *testing.T, open RetainOpener) {
	s := open(t, runtime.Retention{Finished: 24 * time.Hour, MaxRuns: 3, Every: 10 * time.Millisecond}, clock)
	now := clock()
	addRun(t, s, "r1-running", base, time.Time{}, runtime.RunRunning)
	addRun(t, s, "r2", base.Add(1*time.Second), now, runtime.RunCompleted)
	addRun(t, s, "r3", base.Add(2*time.Second), now, runtime.RunFailed)
	addRun(t, s, "r4", base.Add(3*time.Second), now, runtime.RunCompleted)
	addRun(t, s, "r5-running", base.Add(4*time.Second), time.Time{}, runtime.RunRunning)
	waitStored(t, s, []string{"r1-running", "r4", "r5-running"}, "at most 3 runs: the oldest finished ones go, the oldest run stays because it is running")
}
