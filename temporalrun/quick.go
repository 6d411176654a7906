package temporalrun

// Quick steps as local activities.
//
// A regular activity costs a run several round trips to the Temporal
// service: the workflow task that schedules it completes, the server
// queues an activity task, a worker polls it, runs the call, reports it,
// and the server queues the next workflow task, which a worker polls.
// Measured with bench/temporal, that is 100 ms per step on the dev server
// one run at a time, and 11-20 ms of wall time per step with 100 runs at
// once, for a call that takes microseconds. A local activity
// (workflow.ExecuteLocalActivity) runs the same call (the same CallTool
// function) inside the workflow task that started the step, on the worker
// that holds the run; its result is a marker in the history, written when
// that workflow task completes. A chain of quick steps then runs in one
// workflow task, and a ready set of quick siblings runs at once in one
// task too (the "batch per ready set" comes for free: the SDK completes
// the task once no local activity is pending).
//
// What it changes, and why each rule keeps resume and idempotency:
//
//   - Only steps that may run twice run locally: the machine's start
//     record is not Durable (idempotent: true, or the tool's
//     idempotentHint/readOnlyHint). A local activity's marker reaches the
//     history only with the workflow task that ran it, so a worker that
//     dies after the call but before that task completes leaves no trace
//     of it, and the worker that picks the run up calls the step again. For
//     a step that may run twice that is the documented rule (design.md,
//     Resume: a step in flight is called again only when it is
//     idempotent); a non-idempotent step keeps its regular activity, whose
//     start is in the history, so a lost worker interrupts the run there.
//   - Only quick tools run locally. While a local activity is pending the
//     SDK holds the workflow task open, and with it the commands of every
//     other step (a sibling's activity is scheduled when the task
//     completes) and the run query the follower makes. A step that takes
//     no longer than quickCall holds them for less than the round trips a
//     regular activity costs, so nobody waits longer than before. A tool
//     is quick when the worker lists it as known to be quick
//     (LocalOptions.Tools), or when its calls on this worker (callTimes,
//     measured in CallTool, both kinds) have averaged quickCall or less.
//   - A quick tool that turns slow is bounded: a local attempt has at most
//     localBudget (or the step's deadline when sooner); past it the call's
//     context ends, and the same vmcp attempt goes on as a regular
//     activity, heartbeating. That calls the step twice, which its
//     idempotency allows; the slow call also makes the tool slow in
//     callTimes, so later runs use regular activities for it.
//   - The choice is recorded. Which tools were quick is taken once per run,
//     when it starts, through workflow.SideEffect: a replay, on any worker,
//     reads the recorded set and schedules the same commands. Runs started
//     before local activities existed have no such marker: the whole path
//     sits behind workflow.GetVersion(localActivitiesChange), so their
//     histories replay on the old path (TestReplayRecordedHistories holds
//     histories of both).
//   - A worker lost during a local activity is noticed by the workflow
//     task's timeout (the SDK's default, 10 s, heartbeated by the SDK while
//     local activities run), not by the activity heartbeat timeout.
//
// Measured (bench/temporal; docs/performance.md, "Temporal"): one more
// quick step costs a run about 1 ms, against 100 ms as an activity (two
// waits on the dev server); a burst of 100 five-step runs goes 2-2.5x as
// fast, and the dev server's CPU per run falls from 58-76 ms to 13-18 ms.

import (
	"errors"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// quickCall is the longest mean call time of a quick tool (see the top of
// the file): well under what a regular activity adds (100 ms one run at a
// time on the dev server, 11-20 ms per step under load), so a sibling
// held by a local call waits less than it would for its own round trips. callCap is the longest one call counts for in the
// mean, so one pause does not make a quick tool look slow for long, while
// a tool that turns slow stops being quick within a few calls.
const (
	quickCall   = 10 * time.Millisecond
	callCap     = 4 * quickCall
	localBudget = 2 * time.Second
)

// localActivitiesChange is the workflow.GetVersion change id of the local
// activity path; version 1 takes it.
const localActivitiesChange = "vmcp.localActivities"

// LocalOptions say which steps of a worker's runs run as local activities.
type LocalOptions struct {
	// Tools are backend.tool names known to be quick: local from their
	// first call.
	Tools []string
	// Off runs every step as a regular activity, as before local
	// activities existed (measurements, and workers that must report each
	// call to the server).
	Off bool
}

// callTimes is a worker's mean call time per backend tool, the local
// driver's measure (runtime.CallMean), each call counted for at most
// callCap.
type callTimes struct {
	opts  LocalOptions
	known map[string]bool
	mu    sync.Mutex
	means map[string]*runtime.CallMean // by backend.tool
}

func newCallTimes(opts LocalOptions) *callTimes {
	c := &callTimes{opts: opts, known: map[string]bool{}, means: map[string]*runtime.CallMean{}}
	for _, t := range opts.Tools {
		c.known[t] = true
	}
	return c
}

func (c *callTimes) mean(tool string) *runtime.CallMean {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.means[tool]
	if m == nil {
		m = &runtime.CallMean{}
		c.means[tool] = m
	}
	return m
}

// note adds d, one call of tool, to its mean.
func (c *callTimes) note(tool string, d time.Duration) {
	if c == nil {
		return
	}
	c.mean(tool).Note(d, callCap)
}

// quick reports whether tool is quick on this worker.
func (c *callTimes) quick(tool string) bool {
	if c == nil || c.opts.Off {
		return false
	}
	if c.known[tool] {
		return true
	}
	return c.mean(tool).AtMost(quickCall)
}

// quickTools are the tools plan's steps call that are quick now, sorted:
// what a run records when it starts.
func (c *callTimes) quickTools(plan *ir.Plan) []string {
	var out []string
	for _, wf := range plan.Workflows {
		visit := func(s *ir.Step) {
			if s.Tool == nil {
				return
			}
			if t := s.Tool.Backend + "." + s.Tool.Name; !slices.Contains(out, t) && c.quick(t) {
				out = append(out, t)
			}
		}
		ir.EachStep(wf.Steps, visit)
		ir.EachStep(wf.Finally, visit)
	}
	slices.Sort(out)
	return out
}

// recordQuick takes the run's quick tools (see the top of the file): on
// the local-activity version, the set this worker measures now, recorded
// through SideEffect; on runs older than it, none.
func (d *driver) recordQuick(ctx workflow.Context) {
	if workflow.GetVersion(ctx, localActivitiesChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	var tools []string
	enc := workflow.SideEffect(ctx, func(workflow.Context) any { return d.calls.quickTools(d.in.Plan) })
	if enc.Get(&tools) != nil {
		return
	}
	d.quick = map[string]bool{}
	for _, t := range tools {
		d.quick[t] = true
	}
}

// local reports whether the tool step s runs as a local activity: it may
// run twice and its tool was quick when the run started.
func (d *driver) local(s started) bool {
	t := d.m.Step(s.step).Tool
	return t != nil && d.idempotent[s.step] && d.quick[t.Backend+"."+t.Name]
}

// callLocal runs one attempt of a tool step as a local activity. ok false
// means it ran past localBudget before the step's deadline: the attempt
// goes on as a regular activity.
func (d *driver) callLocal(ctx workflow.Context, s started, in CallInput) (out CallOutput, oc callOutcome, ok bool) {
	remaining := s.deadline.Sub(workflow.Now(ctx))
	if remaining <= 0 {
		return out, callOutcome{timeout: true}, true
	}
	budget := min(remaining, localBudget)
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: budget,
		StartToCloseTimeout:    budget,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	err := workflow.ExecuteLocalActivity(lctx, CallToolActivity, in).Get(lctx, &out)
	if err == nil {
		return out, callOutcome{}, true
	}
	// Past the budget: the call's context ended (ErrLocalBudget), or the
	// SDK gave up on a call that did not return (a timeout).
	var tout *temporal.TimeoutError
	var app *temporal.ApplicationError
	overBudget := errors.As(err, &tout) || errors.As(err, &app) && app.Type() == ErrLocalBudget
	if overBudget && ctx.Err() == nil && budget < remaining {
		return CallOutput{}, callOutcome{}, false
	}
	if oc, known := d.activityFailure(ctx, s, err); known {
		return out, oc, true
	}
	return CallOutput{Err: err.Error()}, callOutcome{}, true
}
