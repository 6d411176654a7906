package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/runtime"
)

// TestPrintRunDetailFinally marks finally steps and names the failed ones,
// which did not change the run's status.
func TestPrintRunDetailFinally(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	run := &runtime.Run{ID: "r-3", Workflow: "deploy", Status: runtime.RunCompleted, StartedAt: t0, EndedAt: t0.Add(2 * time.Second),
		Steps: []runtime.StepState{
			{ID: "deploy", Status: runtime.StepCompleted, Attempts: 1, StartedAt: t0, EndedAt: t0.Add(time.Second)},
			{ID: "notify", Status: runtime.StepFailed, Attempts: 1, StartedAt: t0.Add(time.Second), EndedAt: t0.Add(2 * time.Second), Error: "chat is down"},
		}, FinallyFrom: 1}
	var buf bytes.Buffer
	printRunDetail(&buf, httpapi.Detail(run, t0.Add(time.Hour)), t0.Add(time.Hour))
	want := `run       r-3
workflow  deploy
status    completed
started   2026-11-30 12:00:00.000Z
ended     2026-11-30 12:00:02.000Z
duration  2.00s
steps     2 of 2 finished
finally   failed: notify (the status is the outcome before the finally steps)

STEP              STATUS     TRIES  START   DURATION  TIMELINE (0 → 2.00s)
deploy            completed  1      +0ms    1.00s     |####################                    |
notify (finally)  failed     1      +1.00s  1.00s     |                    ####################|
  notify: error: chat is down
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("printRunDetail differs (-want +got):\n%s", diff)
	}
}
