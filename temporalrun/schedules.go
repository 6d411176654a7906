package temporalrun

// vmcp.yaml's schedules as Temporal Schedules (executor: temporal). The
// Temporal server fires them, so a tick makes one run however many vmcp
// run processes share the task queue, and ticks go on while no vmcp run
// is up (the workers do the work).
//
//   - Reconcile (at startup, and again when the served workflows change):
//     every schedule of the config is a Temporal Schedule with the id
//     ScheduleID(queue, name), created or updated to the config's times,
//     overlap and arguments; the Schedules with this queue's prefix that
//     the config no longer has are deleted. Two processes reconciling at
//     once both end with the same Schedules (a create that finds the
//     Schedule made meanwhile updates it).
//   - The mapping: cron (five fields, or a descriptor) with timezone is a
//     cron expression in that time zone, every: D an interval (Temporal's
//     intervals count from the Unix epoch, as the local scheduler's do);
//     overlap: skip is Temporal's SKIP, allow its ALLOW_ALL; catchUp is
//     the catch-up window, for when the Temporal server itself was down:
//     off, the server's shortest (CatchupWindowOff, so a tick delayed by
//     a busy server still runs); on, a year (with skip, one of the missed
//     ticks runs, as the local scheduler runs the newest).
//   - The action starts WorkflowName with an Input that has no run id:
//     Temporal names each fired workflow ScheduleID-TIMESTAMP, and the
//     workflow takes that as its run id. The Input carries the plan served
//     when the Schedule was last reconciled, the arguments, and the owner
//     and trigger schedule:NAME; it asks its questions (Elicit), which the
//     console answers, as a local scheduled run's.
//   - Recording (Watch): each second, the newest workflows each Schedule
//     started (the TemporalScheduledById search attribute) that the run
//     store lacks are recorded from their own state (the run query) and
//     followed to their end, as Reattach does for runs an earlier vmcp
//     left going. The first pass goes back through everything Temporal
//     still lists, so runs fired while no vmcp run was up are recorded
//     too. A run another process recorded first is refused by the store
//     and left to it.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/runtime"
)

// CatchupWindowOff is the catch-up window of a schedule without catchUp:
// the Temporal server's shortest.
const CatchupWindowOff = 10 * time.Second

// catchupWindowOn is the catch-up window of a schedule with catchUp.
const catchupWindowOn = 365 * 24 * time.Hour

// watchEvery is how often Watch looks for fired runs.
const watchEvery = time.Second

// ScheduleID is the id of the Temporal Schedule of vmcp schedule name on
// task queue queue; its fired workflows (and so their runs) are named
// ScheduleID-TIMESTAMP.
func ScheduleID(queue, name string) string { return schedulePrefix(queue) + name }

func schedulePrefix(queue string) string { return "vmcp." + queue + ".schedule." }

// schedules is what the runner knows of the config's schedules.
type schedules struct {
	mu   sync.Mutex // serializes Reconcile
	list []*config.Schedule
}

// ReconcileSchedules makes the Temporal Schedules of the runner's task
// queue the config's list (see the top of the file); the runner keeps the
// list, to reconcile again when SetWorkflows changes the served plan.
func (r *Runner) ReconcileSchedules(ctx context.Context, list []*config.Schedule) error {
	r.sched.mu.Lock()
	defer r.sched.mu.Unlock()
	r.sched.list = list
	return r.reconcile(ctx, list)
}

// reconcileAgain reconciles the kept list after the served plan changed,
// in the background; a failure is logged (the Schedules keep the plan they
// had).
func (r *Runner) reconcileAgain() {
	go func() {
		r.sched.mu.Lock()
		defer r.sched.mu.Unlock()
		if len(r.sched.list) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.reconcile(ctx, r.sched.list); err != nil {
			r.log.Error("updating the Temporal Schedules to the workflows served now", "err", err)
		}
	}()
}

func (r *Runner) reconcile(ctx context.Context, list []*config.Schedule) error {
	sc := r.opts.Client.ScheduleClient()
	existing, err := r.listSchedules(ctx)
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, s := range list {
		id := ScheduleID(r.opts.TaskQueue, s.Name)
		want[id] = true
		opts, err := r.scheduleOptions(s)
		if err != nil {
			return err
		}
		if !existing[id] {
			_, err = sc.Create(ctx, opts)
			if err == nil {
				r.log.Info("Temporal Schedule created", "schedule", s.Name, "id", id)
				continue
			}
			if !errors.Is(err, temporal.ErrScheduleAlreadyRunning) { // made meanwhile: update it
				return fmt.Errorf("creating the Temporal Schedule %q of schedule %s: %w", id, s.Name, err)
			}
		}
		err = sc.GetHandle(ctx, id).Update(ctx, client.ScheduleUpdateOptions{
			DoUpdate: func(in client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
				sched := in.Description.Schedule
				sched.Spec, sched.Action = &opts.Spec, opts.Action
				sched.Policy = &client.SchedulePolicies{Overlap: opts.Overlap, CatchupWindow: opts.CatchupWindow}
				return &client.ScheduleUpdate{Schedule: &sched}, nil
			},
		})
		if err != nil {
			return fmt.Errorf("updating the Temporal Schedule %q of schedule %s: %w", id, s.Name, err)
		}
		r.log.Info("Temporal Schedule updated", "schedule", s.Name, "id", id)
	}
	for id := range existing {
		if want[id] {
			continue
		}
		if err := sc.GetHandle(ctx, id).Delete(ctx); err != nil {
			var nf *serviceerror.NotFound
			if !errors.As(err, &nf) {
				return fmt.Errorf("deleting the Temporal Schedule %q, which vmcp.yaml no longer has: %w", id, err)
			}
		}
		r.log.Info("Temporal Schedule deleted: vmcp.yaml no longer has it", "id", id)
	}
	return nil
}

// listSchedules is the set of Schedule ids of this task queue.
func (r *Runner) listSchedules(ctx context.Context) (map[string]bool, error) {
	it, err := r.opts.Client.ScheduleClient().List(ctx, client.ScheduleListOptions{PageSize: 100})
	if err != nil {
		return nil, fmt.Errorf("listing the Temporal Schedules: %w", err)
	}
	ids := map[string]bool{}
	prefix := schedulePrefix(r.opts.TaskQueue)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("listing the Temporal Schedules: %w", err)
		}
		if strings.HasPrefix(e.ID, prefix) {
			ids[e.ID] = true
		}
	}
	return ids, nil
}

// scheduleOptions is schedule s as a Temporal Schedule.
func (r *Runner) scheduleOptions(s *config.Schedule) (client.ScheduleOptions, error) {
	sp := r.current()
	if _, ok := sp.wfs[s.Workflow]; !ok {
		return client.ScheduleOptions{}, fmt.Errorf("schedule %s: %w %q", s.Name, runtime.ErrUnknownWorkflow, s.Workflow)
	}
	id := ScheduleID(r.opts.TaskQueue, s.Name)
	trigger := config.ScheduleTrigger(s.Name)
	in := Input{
		Plan: sp.plan, Tools: sp.tools, Workflow: s.Workflow, Params: s.Arguments,
		HeartbeatTimeout: r.opts.HeartbeatTimeout, MaxIterations: r.opts.MaxIterations, MaxResultBytes: r.opts.MaxResultBytes,
		Elicit: true, Owner: trigger, Trigger: trigger,
	}
	var spec client.ScheduleSpec
	if s.Every > 0 {
		spec.Intervals = []client.ScheduleIntervalSpec{{Every: s.Every}}
	} else {
		spec.CronExpressions, spec.TimeZoneName = []string{s.Cron}, s.Timezone
	}
	opts := client.ScheduleOptions{
		ID:   id,
		Spec: spec,
		Action: &client.ScheduleWorkflowAction{
			ID: id, Workflow: WorkflowName, Args: []any{in}, TaskQueue: r.opts.TaskQueue,
		},
		Overlap:       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow: CatchupWindowOff,
		Note:          "managed by vmcp (vmcp.yaml schedules: " + s.Name + "); changes here are undone at its next start",
	}
	if s.Overlap == config.OverlapAllow {
		opts.Overlap = enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL
	}
	if s.CatchUp {
		opts.CatchupWindow = catchupWindowOn
	}
	return opts, nil
}

// WatchSchedules records and follows the runs the Temporal Schedules of
// list start (see the top of the file), until ctx ends.
func (r *Runner) WatchSchedules(ctx context.Context, list []*config.Schedule) {
	if len(list) == 0 {
		return
	}
	known := map[string]bool{}
	first := true
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		for _, s := range list {
			if err := r.recordFired(ctx, ScheduleID(r.opts.TaskQueue, s.Name), known, first); err != nil && ctx.Err() == nil {
				r.log.Warn("looking for the runs of a Temporal Schedule", "schedule", s.Name, "err", err)
			}
		}
		first = false
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// recordFired records and follows the workflows Schedule id started that
// the store lacks, newest first; after the first pass (all) it stops at
// the first one it knows.
func (r *Runner) recordFired(ctx context.Context, id string, known map[string]bool, all bool) error {
	q := fmt.Sprintf("TemporalScheduledById = '%s'", id)
	var token []byte
	for {
		resp, err := r.opts.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q, PageSize: 50, NextPageToken: token})
		if err != nil {
			return err
		}
		for _, e := range resp.GetExecutions() {
			wid := e.GetExecution().GetWorkflowId()
			if known[wid] {
				if all {
					continue
				}
				return nil
			}
			if _, err := r.opts.Store.GetRun(ctx, wid); err == nil {
				known[wid] = true
				continue
			}
			run, err := r.recordOpen(ctx, wid)
			if err != nil {
				// Recorded by another process meanwhile, or not yet
				// queryable (its first workflow task): seen again at
				// the next pass.
				r.log.Debug("recording a scheduled run", "run_id", wid, "err", err)
				continue
			}
			known[wid] = true
			r.log.Info("schedule fired (Temporal Schedule)", "schedule", run.Trigger, "run", wid, "workflow", run.Workflow)
			r.resume(ctx, run)
		}
		if token = resp.GetNextPageToken(); len(token) == 0 || !all {
			return nil
		}
	}
}
