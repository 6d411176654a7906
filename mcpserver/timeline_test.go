package mcpserver

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/runtime"
)

// TestTimelineCountsLoopIterations: a forEach step's timeline entry counts
// its iterations (done, failed, skipped), whether its counts are the
// engine's int64s or numbers that crossed JSON; other steps have none.
func TestTimelineCountsLoopIterations(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	loop := map[string]any{"iterations": []any{}, "count": int64(5), "completed": int64(3), "failed": int64(1), "skipped": int64(1)}
	fromJSON := map[string]any{"iterations": []any{}, "count": 2.0, "completed": 2.0, "failed": 0.0, "skipped": 0.0}
	run := &runtime.Run{ID: "r", Workflow: "w", StartedAt: t0, Steps: []runtime.StepState{
		{ID: "list", Status: runtime.StepCompleted, StartedAt: t0, EndedAt: t0.Add(time.Millisecond), Output: map[string]any{"count": 5.0}},
		{ID: "each", Status: runtime.StepFailed, StartedAt: t0, EndedAt: t0.Add(2 * time.Millisecond), Output: loop},
		{ID: "again", Status: runtime.StepCompleted, StartedAt: t0, EndedAt: t0.Add(3 * time.Millisecond), Output: fromJSON},
	}}
	var got []*runtime.LoopCounts
	for _, e := range Timeline(run) {
		got = append(got, e.Loop)
	}
	want := []*runtime.LoopCounts{nil, {Count: 5, Completed: 3, Failed: 1, Skipped: 1}, {Count: 2, Completed: 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Timeline loops (-want +got):\n%s", diff)
	}
}
