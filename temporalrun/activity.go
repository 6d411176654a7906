package temporalrun

// The backend-call activity. It runs on a `vmcp worker`, which holds the
// backend connections, and calls one tool once; it times the call for the
// quick-step choice (quick.go). As a local activity it runs the same way,
// without heartbeats (the workflow task's timeout covers the worker). While the call runs it
// heartbeats every third of the heartbeat timeout: a worker that dies
// stops heartbeating, and Temporal then times the attempt out on the
// heartbeat timeout (seconds), not on the step timeout (minutes).
// Heartbeats are also how a cancel reaches a running activity: the SDK
// cancels the activity's context when a heartbeat learns the workflow
// asked for it, and the backend call's context ends with it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// ErrPayloadTooLarge is the type of the activity error for a result over
// PayloadLimit; it is not retried.
const ErrPayloadTooLarge = "vmcp.PayloadTooLarge"

// ErrLocalBudget is the type of a local activity's error when its call
// ran past localBudget (quick.go).
const ErrLocalBudget = "vmcp.LocalBudget"

// Activities are the worker's activities over its backends.
type Activities struct {
	Backend runtime.Backend
	// calls measures each tool's calls, for the quick-step choice
	// (quick.go); nil measures nothing.
	calls *callTimes
}

// CallTool calls one backend tool (see the top of the file).
func (a *Activities) CallTool(ctx context.Context, in CallInput) (*CallOutput, error) {
	annotateAttempt(ctx, in.Call.RunID, in.Call.StepID, in.Call.Backend, in.Call.Tool, in.Attempt)
	stop := heartbeat(ctx)
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if !in.Deadline.IsZero() {
		cctx, cancel = context.WithDeadline(ctx, in.Deadline)
	}
	began := time.Now()
	res, err := a.Backend.CallTool(cctx, in.Call)
	if !errors.Is(ctx.Err(), context.Canceled) { // a cancelled call says nothing of the tool
		a.calls.note(in.Call.Backend+"."+in.Call.Tool, time.Since(began))
	}
	cancel()
	stop()
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && activity.GetInfo(ctx).IsLocalActivity {
			if budgetFirst(ctx, in.Deadline) {
				// A local attempt's budget (quick.go): the workflow goes
				// on with a regular activity.
				return nil, temporal.NewNonRetryableApplicationError("the call ran past a local activity's budget", ErrLocalBudget, nil)
			}
			// The budget was the step's own deadline (a step timeout
			// under localBudget), which the call's context shares: the
			// step timed out, whichever of the two ended first.
			return &CallOutput{Err: err.Error(), TimedOut: true}, nil
		}
		if ctx.Err() != nil {
			// Cancelled (or Temporal's own timeout): the workflow no longer
			// waits for this answer.
			return nil, ctx.Err()
		}
		out := &CallOutput{Err: err.Error()}
		if errors.Is(cctx.Err(), context.DeadlineExceeded) {
			out.TimedOut = true
		}
		return out, nil
	}
	if n := jsonSize(res); n > PayloadLimit {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the output of step %q (%s.%s) is %d bytes, over Temporal's payload limit of %d bytes; have the tool return less (or run this workflow with executor: local, whose limit is limits.maxResultBytes)",
				in.Call.StepID, in.Call.Backend, in.Call.Tool, n, PayloadLimit),
			ErrPayloadTooLarge, nil)
	}
	return &CallOutput{Result: res}, nil
}

// budgetFirst reports whether ctx, a local activity's, ends before
// stepDeadline (zero: none), so that its end is a local attempt's budget
// and not the step's timeout. callLocal gives a step whose deadline comes
// first the time left to it as the budget, and the activity's deadline
// then falls at or after the step's, as it is counted from the schedule.
func budgetFirst(ctx context.Context, stepDeadline time.Time) bool {
	dl, ok := ctx.Deadline()
	return ok && (stepDeadline.IsZero() || dl.Before(stepDeadline))
}

// ExecuteStep runs one step whole (a forEach, its iterations and bodies)
// with the local executors, heartbeating meanwhile.
func (a *Activities) ExecuteStep(ctx context.Context, in StepCall) (*runtime.StepResult, error) {
	var si runtime.StepInput
	if err := json.Unmarshal(in.Input, &si); err != nil {
		return nil, temporal.NewNonRetryableApplicationError("the step's input is unreadable: "+err.Error(), ErrPlanType, nil)
	}
	eng, err := runtime.New(in.Plan, engineOptions(in.Tools, in.MaxIterations, in.MaxResultBytes, a.Backend))
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError("this worker cannot run the plan: "+err.Error(), ErrPlanType, nil)
	}
	annotateAttempt(ctx, si.RunID, stepID(eng, in.Workflow, si.Step), "", "", 0)
	stop := heartbeat(ctx)
	res, err := eng.ExecuteStep(ctx, in.Workflow, si, runtime.StepEnv{Backend: a.Backend, Clock: runtime.SystemClock{}}, nil)
	stop()
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrPlanType, nil)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if n := jsonSize(res); n > PayloadLimit {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the output of step %q is %d bytes, over Temporal's payload limit of %d bytes; have its calls return less (or run this workflow with executor: local)", stepID(eng, in.Workflow, si.Step), n, PayloadLimit),
			ErrPayloadTooLarge, nil)
	}
	return &res, nil
}

// stepID names step i of Run.Steps (top-level steps, then finally steps).
func stepID(eng *runtime.Engine, workflow string, i int) string {
	wf, ok := eng.Workflow(workflow)
	if !ok {
		return ""
	}
	steps := append(append([]*ir.Step(nil), wf.Steps...), wf.Finally...)
	if i < 0 || i >= len(steps) {
		return ""
	}
	return steps[i].ID
}

// heartbeat records a heartbeat every third of the activity's heartbeat
// timeout until stop is called.
func heartbeat(ctx context.Context) (stop func()) {
	every := activity.GetInfo(ctx).HeartbeatTimeout / 3
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() { close(done); <-finished }
}
