package temporalrun

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/runtime"
)

// TestScheduleOptions: a vmcp schedule's times, overlap and catch-up as a
// Temporal Schedule, and the input of the runs it fires (no run id: the
// workflow id Temporal gives each is; owner and trigger schedule:NAME).
func TestScheduleOptions(t *testing.T) {
	plan := compile(t, `
compositeTools:
  - {name: sync, description: d, parameters: {full: {type: boolean}}, steps: [{id: a, tool: b.t}]}
`)
	r, err := NewRunner(RunnerOptions{Client: noClient{}, TaskQueue: "q", Plan: plan, Store: runtime.NewMemoryStore(0), MaxIterations: 7})
	if err != nil {
		t.Fatal(err)
	}
	nightly, err := r.scheduleOptions(&config.Schedule{Name: "nightly", Workflow: "sync", Cron: "30 2 * * *", Timezone: "Europe/Paris",
		Arguments: map[string]any{"full": true}, Overlap: config.OverlapAllow, CatchUp: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(client.ScheduleSpec{CronExpressions: []string{"30 2 * * *"}, TimeZoneName: "Europe/Paris"}, nightly.Spec); diff != "" {
		t.Errorf("cron spec (-want +got):\n%s", diff)
	}
	if nightly.ID != "vmcp.q.schedule.nightly" || nightly.Overlap != enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL || nightly.CatchupWindow != catchupWindowOn {
		t.Errorf("nightly: id %s, overlap %v, catch-up %v; want vmcp.q.schedule.nightly, ALLOW_ALL, a year", nightly.ID, nightly.Overlap, nightly.CatchupWindow)
	}
	act := nightly.Action.(*client.ScheduleWorkflowAction)
	in := act.Args[0].(Input)
	if act.ID != nightly.ID || act.Workflow != WorkflowName || act.TaskQueue != "q" {
		t.Errorf("action = id %s workflow %v queue %s; want the schedule's id, %s, q", act.ID, act.Workflow, act.TaskQueue, WorkflowName)
	}
	if in.RunID != "" || in.Owner != "schedule:nightly" || in.Trigger != "schedule:nightly" || !in.Elicit || in.Workflow != "sync" ||
		in.Params["full"] != true || in.MaxIterations != 7 || in.Plan == nil {
		t.Errorf("the fired runs' input = %+v; want no run id, owner and trigger schedule:nightly, questions on, the arguments and limits", in)
	}
	fast, err := r.scheduleOptions(&config.Schedule{Name: "fast", Workflow: "sync", Every: 5 * time.Second, Overlap: config.OverlapSkip})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: 5 * time.Second}}}, fast.Spec); diff != "" {
		t.Errorf("every spec (-want +got):\n%s", diff)
	}
	if fast.Overlap != enumspb.SCHEDULE_OVERLAP_POLICY_SKIP || fast.CatchupWindow != CatchupWindowOff {
		t.Errorf("fast: overlap %v, catch-up %v; want SKIP, %v", fast.Overlap, fast.CatchupWindow, CatchupWindowOff)
	}
	if _, err := r.scheduleOptions(&config.Schedule{Name: "gone", Workflow: "nope", Every: time.Second}); !errors.Is(err, runtime.ErrUnknownWorkflow) {
		t.Errorf("a schedule of an unknown workflow = %v; want ErrUnknownWorkflow", err)
	}
}

// TestScheduledRunTakesItsWorkflowID: a run whose input has no run id (a
// Temporal Schedule's) is the run of its workflow id, with the input's
// owner and trigger.
func TestScheduledRunTakesItsWorkflowID(t *testing.T) {
	plan := compile(t, `
compositeTools:
  - {name: sync, description: d, steps: [{id: a, tool: b.t}]}
`)
	run := runInTestEnv(t, plan, "sync", nil, &fakeBackend{}, func(env *testsuite.TestWorkflowEnvironment, in *Input) {
		in.RunID, in.Owner, in.Trigger = "", "schedule:nightly", "schedule:nightly"
		env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "vmcp.q.schedule.nightly-2026-12-02T02:30:00Z"})
	})
	if run.ID != "vmcp.q.schedule.nightly-2026-12-02T02:30:00Z" || run.Owner != "schedule:nightly" || run.Trigger != "schedule:nightly" {
		t.Errorf("run = id %s owner %s trigger %s; want the workflow id, schedule:nightly twice", run.ID, run.Owner, run.Trigger)
	}
}
