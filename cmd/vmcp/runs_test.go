package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

func TestPrintRunDetail(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	run := &runtime.Run{ID: "r-1", Workflow: "incident", Status: runtime.RunFailed, StartedAt: t0, EndedAt: t0.Add(2 * time.Second),
		Error: &runtime.StepError{Step: "notify", Pos: ir.Pos{File: "wf.yaml", Line: 14, Col: 9}, Msg: "slack said no"},
		Steps: []runtime.StepState{
			{ID: "fetch_logs", Status: runtime.StepCompleted, Attempts: 1, StartedAt: t0, EndedAt: t0.Add(time.Second)},
			{ID: "fetch_metrics", Status: runtime.StepCompleted, Attempts: 3, StartedAt: t0, EndedAt: t0.Add(500 * time.Millisecond), Note: "output truncated"},
			{ID: "notify", Status: runtime.StepFailed, Attempts: 1, StartedAt: t0.Add(time.Second), EndedAt: t0.Add(2 * time.Second), Error: "slack said no"},
			{ID: "close", Status: runtime.StepPending},
		}}
	var buf bytes.Buffer
	printRunDetail(&buf, httpapi.Detail(run, t0.Add(time.Hour)), t0.Add(time.Hour))
	want := `run       r-1
workflow  incident
status    failed
started   2026-11-30 12:00:00.000Z
ended     2026-11-30 12:00:02.000Z
duration  2.00s
steps     3 of 4 finished
error     step "notify" (wf.yaml:14:9): slack said no

STEP           STATUS     TRIES  START   DURATION  TIMELINE (0 → 2.00s)
fetch_logs     completed  1      +0ms    1.00s     |####################                    |
fetch_metrics  completed  3      +0ms    500ms     |##########                              |
notify         failed     1      +1.00s  1.00s     |                    ####################|
close          pending    0      -       -         |                                        |
  fetch_metrics: note: output truncated
  notify: error: slack said no
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("printRunDetail differs (-want +got):\n%s", diff)
	}
}

func TestPrintRunDetailStillRunning(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	now := t0.Add(4 * time.Second)
	run := &runtime.Run{ID: "r-2", Workflow: "wf", Status: runtime.RunRunning, StartedAt: t0, Steps: []runtime.StepState{
		{ID: "quick", Status: runtime.StepCompleted, Attempts: 1, StartedAt: t0, EndedAt: t0.Add(time.Millisecond)},
		{ID: "slow", Status: runtime.StepRunning, Attempts: 1, StartedAt: t0.Add(time.Second)},
	}}
	var buf bytes.Buffer
	printRunDetail(&buf, httpapi.Detail(run, now), now)
	want := `run       r-2
workflow  wf
status    running
started   2026-11-30 12:00:00.000Z
ended     (still going)
duration  4.00s
steps     1 of 2 finished

STEP   STATUS     TRIES  START   DURATION  TIMELINE (0 → 4.00s)
quick  completed  1      +0ms    1ms       |#                                       |
slow   running    1      +1.00s  3.00s     |          #############################>|
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("printRunDetail of a running run differs (-want +got):\n%s", diff)
	}
}

func TestPrintRunList(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	runs := []httpapi.RunSummary{
		{ID: "b", Workflow: "deploy", Status: runtime.RunInterrupted, StartedAt: t0.Add(time.Minute), DurationMS: 90_500, StepCount: 4, Finished: 2},
		{ID: "a", Workflow: "incident", Status: runtime.RunCompleted, StartedAt: t0, DurationMS: 1234, StepCount: 3, Finished: 3},
	}
	var buf bytes.Buffer
	printRunList(&buf, runs)
	want := `ID  WORKFLOW  STATUS       STARTED (UTC)        DURATION  STEPS
b   deploy    interrupted  2026-11-30 12:01:00  1m31s     2/4
a   incident  completed    2026-11-30 12:00:00  1.23s     3/3
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("printRunList differs (-want +got):\n%s", diff)
	}
	buf.Reset()
	printRunList(&buf, nil)
	if buf.String() != "no runs\n" {
		t.Errorf("printRunList(nil) = %q; want %q", buf.String(), "no runs\n")
	}
}

func TestPrintRunDetailParentAndChildren(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	run := &runtime.Run{ID: "child-1", Workflow: "lookup", ParentID: "parent-1", ParentStep: "find", Status: runtime.RunCompleted,
		StartedAt: t0, EndedAt: t0.Add(time.Second), Steps: []runtime.StepState{
			{ID: "get", Status: runtime.StepCompleted, Attempts: 1, StartedAt: t0, EndedAt: t0.Add(time.Second)},
		}}
	d := httpapi.Detail(run, t0)
	d.Children = []httpapi.RunSummary{{ID: "grandchild", ParentStep: "get", Workflow: "leaf", Status: runtime.RunCompleted, DurationMS: 250}}
	var buf bytes.Buffer
	printRunDetail(&buf, d, t0)
	want := `run       child-1
workflow  lookup
parent    parent-1 (step find)
status    completed
started   2026-11-30 12:00:00.000Z
ended     2026-11-30 12:00:01.000Z
duration  1.00s
steps     1 of 1 finished

STEP  STATUS     TRIES  START  DURATION  TIMELINE (0 → 1.00s)
get   completed  1      +0ms   1.00s     |########################################|

CHILD RUN   STEP  WORKFLOW  STATUS     DURATION
grandchild  get   leaf      completed  250ms
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("printRunDetail with a parent and children differs (-want +got):\n%s", diff)
	}
}
