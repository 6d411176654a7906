package temporalrun

// Executing the steps a Machine starts, with Temporal's primitives. Each
// started step runs on a workflow coroutine of its own and reports back
// through the driver's event channel; the machine's driver API
// (runtime/driverapi.go) renders the call and words the outcome, so both
// drivers say the same things.
//
// Tool steps. One activity per attempt (activity.go), on any worker. The
// activity bounds the backend call by the attempt's deadline (the step's
// deadline, or attemptTimeout when sooner) and reports a slow or failing
// backend as a result, so vmcp's retry policy decides, as locally: the
// delay comes from RetryPolicy.Delay with jitter drawn through
// workflow.SideEffect (recorded in the history, so a replay draws the
// same), and the wait is a workflow timer. Temporal's own timeouts and
// retries are kept for the worker going away: a worker that stops
// heartbeating for executor.heartbeatTimeout loses its attempt. A step that
// may run twice (the machine's start record is not Durable: idempotent:
// true, or the tool's idempotentHint/readOnlyHint) gets Temporal's retry
// policy without an attempt limit, so the attempt is run again on another
// worker, inside the step's deadline. Any other step gets one Temporal
// attempt: its lost attempt interrupts the run at that step
// (Machine.Interrupt), rather than calling it twice.
//
// Elicitation steps open a question (questions.go) and wait for its answer
// with the step's deadline as a timer.
//
// Workflow steps run their child as a Temporal child workflow: the same
// workflow function, the same plan, its own run id (the parent's id, the
// step id and the attempt), so the child shows in the store as a run of
// its own, linked to its parent.
//
// forEach steps are not run by this driver yet: they fail with an error
// that says so (the README's "Scale-out on Temporal" lists it).

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// start runs the step of a (an ActionStart).
func (d *driver) start(ctx workflow.Context, a runtime.Action) {
	i := a.Step
	step := d.m.Step(i)
	switch step.Type {
	case ir.StepTool, "":
		call, serr := d.m.ToolCall(i)
		if serr != nil {
			d.later(event{result: &runtime.StepResult{Step: i, Status: runtime.StepFailed, Err: serr, Attempts: 1}})
			return
		}
		workflow.Go(ctx, func(ctx workflow.Context) { d.runTool(ctx, a, call) })
	case ir.StepElicitation:
		req, serr := d.m.Elicitation(i)
		if serr != nil {
			d.later(event{result: &runtime.StepResult{Step: i, Status: runtime.StepFailed, Err: serr, Attempts: 1}})
			return
		}
		q := d.questions.ask(req)
		workflow.Go(ctx, func(ctx workflow.Context) { d.runElicitation(ctx, a, q) })
	case ir.StepWorkflow:
		call, serr := d.m.ToolCall(i)
		if serr != nil {
			d.later(event{result: &runtime.StepResult{Step: i, Status: runtime.StepFailed, Err: serr, Attempts: 1}})
			return
		}
		workflow.Go(ctx, func(ctx workflow.Context) { d.runChild(ctx, a, call) })
	default:
		d.later(event{result: &runtime.StepResult{Step: i, Status: runtime.StepFailed, Attempts: 1,
			Err: d.m.StepError(i, fmt.Sprintf("%s steps do not run on the Temporal executor yet; run this workflow with executor: local", step.Type))}})
	}
}

// later queues an event decided while the machine's actions are being
// performed (the loop feeds it once they are done).
func (d *driver) later(ev event) { d.queued = append(d.queued, ev) }

// failed is a failed end of step i.
func (d *driver) failed(i int, msg string, attempts int) *runtime.StepResult {
	return &runtime.StepResult{Step: i, Status: runtime.StepFailed, Err: d.m.StepError(i, msg), Attempts: attempts}
}

// callOutcome is how one attempt ended, as far as the driver is concerned.
type callOutcome struct {
	out     *CallOutput
	lost    bool   // the worker went away mid-call (no heartbeat)
	stopped bool   // the step's context was cancelled (the run stopped)
	timeout bool   // the step's deadline passed
	fatal   string // an error that ends the step at once (payload limit)
}

// runTool runs a tool step's attempts (see the top of the file).
func (d *driver) runTool(ctx workflow.Context, a runtime.Action, call runtime.ToolCall) {
	i := a.Step
	p := d.m.RetryPolicy(i)
	var last runtime.Attempt
	for attempt := 1; ; attempt++ {
		start := workflow.Now(ctx)
		deadline := a.Deadline
		byAttempt := false
		if p.AttemptTimeout > 0 && start.Add(p.AttemptTimeout).Before(deadline) {
			deadline, byAttempt = start.Add(p.AttemptTimeout), true
		}
		oc := d.callOnce(ctx, a, call, attempt, deadline)
		switch {
		case oc.stopped:
			d.send(ctx, event{result: d.failed(i, d.stoppedMsg(), attempt)})
			return
		case oc.lost:
			d.send(ctx, event{interrupt: true, step: i})
			return
		case oc.fatal != "":
			d.send(ctx, event{result: d.failed(i, oc.fatal, attempt)})
			return
		case oc.timeout || (oc.out.TimedOut && !byAttempt):
			d.send(ctx, event{result: d.failed(i, d.timedOutMsg(a, last, attempt > 1), attempt)})
			return
		}
		var callErr error
		if oc.out.Err != "" {
			callErr = errors.New(oc.out.Err)
		}
		last = d.m.ToolAttempt(i, oc.out.Result, callErr, oc.out.TimedOut)
		if last.OK {
			d.send(ctx, event{result: &runtime.StepResult{Step: i, Status: runtime.StepCompleted, Output: last.Output, Content: last.Content, Attempts: attempt}})
			return
		}
		if attempt >= p.MaxAttempts {
			d.send(ctx, event{result: d.failed(i, last.Msg, attempt)})
			return
		}
		if !p.Retries(last.Kind) {
			d.send(ctx, event{result: d.failed(i, last.Msg+d.m.NotRetried(i, last.Kind), attempt)})
			return
		}
		delay := p.Delay(attempt, d.jitter(ctx))
		if workflow.Now(ctx).Add(delay).After(a.Deadline) {
			d.send(ctx, event{result: d.failed(i, last.Msg+fmt.Sprintf(" (gave up after %d attempts: the step timeout leaves no time for the next retry)", attempt), attempt)})
			return
		}
		d.send(ctx, event{retry: true, step: i, attempt: attempt + 1,
			err: d.m.StepError(i, fmt.Sprintf("%s; retrying in %s", last.Msg, delay.Round(time.Millisecond)))})
		if err := workflow.Sleep(ctx, delay); err != nil {
			d.send(ctx, event{result: d.failed(i, d.stoppedMsg(), attempt)})
			return
		}
	}
}

// callOnce runs one attempt as an activity.
func (d *driver) callOnce(ctx workflow.Context, a runtime.Action, call runtime.ToolCall, attempt int, deadline time.Time) callOutcome {
	remaining := a.Deadline.Sub(workflow.Now(ctx))
	if remaining <= 0 {
		return callOutcome{timeout: true}
	}
	retry := &temporal.RetryPolicy{MaximumAttempts: 1}
	if d.idempotent[a.Step] {
		retry = &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Second,
			NonRetryableErrorTypes: []string{ErrPayloadTooLarge}}
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ScheduleToCloseTimeout: remaining,
		StartToCloseTimeout:    remaining,
		HeartbeatTimeout:       d.heartbeat(),
		WaitForCancellation:    true,
		RetryPolicy:            retry,
	})
	var out CallOutput
	err := workflow.ExecuteActivity(actx, CallToolActivity, CallInput{Call: call, Attempt: attempt, Deadline: deadline}).Get(actx, &out)
	if err == nil {
		return callOutcome{out: &out}
	}
	var canceled *temporal.CanceledError
	var tout *temporal.TimeoutError
	var app *temporal.ApplicationError
	switch {
	case errors.As(err, &canceled) || ctx.Err() != nil:
		return callOutcome{stopped: true}
	case errors.As(err, &tout):
		if tout.TimeoutType() == enumspb.TIMEOUT_TYPE_HEARTBEAT && !d.idempotent[a.Step] {
			return callOutcome{lost: true}
		}
		if tout.TimeoutType() == enumspb.TIMEOUT_TYPE_START_TO_CLOSE && !d.idempotent[a.Step] && workflow.Now(ctx).Before(a.Deadline) {
			return callOutcome{lost: true}
		}
		return callOutcome{timeout: true}
	case errors.As(err, &app) && app.Type() == ErrPayloadTooLarge:
		return callOutcome{fatal: app.Message()}
	}
	// Any other activity failure (a worker-side error): a failed call.
	return callOutcome{out: &CallOutput{Err: err.Error()}}
}

// heartbeat is the activities' heartbeat timeout.
func (d *driver) heartbeat() time.Duration {
	if d.in.HeartbeatTimeout > 0 {
		return d.in.HeartbeatTimeout
	}
	return DefaultHeartbeatTimeout
}

// jitter draws a retry jitter in [0, 1), recorded in the history.
func (d *driver) jitter(ctx workflow.Context) float64 {
	var j float64
	enc := workflow.SideEffect(ctx, func(workflow.Context) any { return rand.Float64() })
	if enc.Get(&j) != nil {
		return 0.5
	}
	return j
}

// runElicitation waits for the answer to q until the step's deadline.
func (d *driver) runElicitation(ctx workflow.Context, a runtime.Action, q Question) {
	i := a.Step
	defer d.questions.close(q.Seq)
	if !d.in.Elicit {
		d.send(ctx, event{result: d.elicitUnanswerable(i)})
		return
	}
	var ans Answer
	ok, err := workflow.AwaitWithTimeout(ctx, a.Deadline.Sub(workflow.Now(ctx)), func() bool {
		var has bool
		ans, has = d.questions.answers[q.Seq]
		return has
	})
	switch {
	case err != nil:
		d.send(ctx, event{result: d.failed(i, d.stoppedMsg(), 1)})
	case !ok:
		res := d.m.ElicitOutcome(i, runtime.ElicitResult{}, true, workflow.Now(ctx))
		d.send(ctx, event{result: &res})
	case ans.Err != "":
		d.send(ctx, event{result: d.failed(i, "elicitation failed: "+ans.Err, 1)})
	default:
		res := d.m.ElicitOutcome(i, ans.Result, false, workflow.Now(ctx))
		d.send(ctx, event{result: &res})
	}
}

// elicitUnanswerable is the end of an elicitation step whose caller cannot
// answer: its onCancel action, as locally.
func (d *driver) elicitUnanswerable(i int) *runtime.StepResult {
	res := d.m.ElicitOutcome(i, runtime.ElicitResult{Action: runtime.ElicitCancel}, false, workflow.Now(d.root))
	if res.Note != "" {
		res.Note = "the client cannot answer elicitation requests (no elicitor)"
	}
	if res.Err != nil {
		res.Err.Msg = "the client cannot answer elicitation requests (no elicitor) (onCancel: abort)"
	}
	return &res
}

// runChild runs a workflow step's child as a child workflow, with the
// step's retry policy.
func (d *driver) runChild(ctx workflow.Context, a runtime.Action, call runtime.ToolCall) {
	i := a.Step
	step := d.m.Step(i)
	p := d.m.RetryPolicy(i)
	for attempt := 1; ; attempt++ {
		id := fmt.Sprintf("%s.%s.%d", d.in.RunID, step.ID, attempt)
		d.children = append(d.children, Child{RunID: id, Workflow: call.Tool, Step: step.ID})
		remaining := a.Deadline.Sub(workflow.Now(ctx))
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
			WorkflowID:          id,
			TaskQueue:           workflow.GetInfo(ctx).TaskQueueName,
			WorkflowRunTimeout:  remaining,
			ParentClosePolicy:   enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
			WaitForCancellation: true,
		})
		in := d.in
		in.Workflow, in.Params, in.RunID, in.ParentID, in.ParentStep = call.Tool, call.Arguments, id, d.in.RunID, step.ID
		var child runtime.Run
		err := workflow.ExecuteChildWorkflow(cctx, WorkflowName, in).Get(cctx, &child)
		var msg string
		switch {
		case err != nil && ctx.Err() != nil:
			d.send(ctx, event{result: d.failed(i, d.stoppedMsg(), attempt)})
			return
		case err != nil:
			msg = fmt.Sprintf("workflow %s: %s", call.Tool, applicationMessage(err))
		case child.Status == runtime.RunCompleted:
			d.send(ctx, event{result: &runtime.StepResult{Step: i, Status: runtime.StepCompleted, Output: child.Output, Attempts: attempt}})
			return
		default:
			msg = fmt.Sprintf("workflow %s (run %s) %s", call.Tool, child.ID, child.Status)
			if child.Error != nil {
				msg += ": " + child.Error.Error()
			}
		}
		if attempt >= p.MaxAttempts || !p.Retries(runtime.FailureToolError) {
			if attempt < p.MaxAttempts {
				msg += d.m.NotRetried(i, runtime.FailureToolError)
			}
			d.send(ctx, event{result: d.failed(i, msg, attempt)})
			return
		}
		delay := p.Delay(attempt, d.jitter(ctx))
		if workflow.Now(ctx).Add(delay).After(a.Deadline) {
			d.send(ctx, event{result: d.failed(i, msg+fmt.Sprintf(" (gave up after %d attempts: the step timeout leaves no time for the next retry)", attempt), attempt)})
			return
		}
		d.send(ctx, event{retry: true, step: i, attempt: attempt + 1, err: d.m.StepError(i, fmt.Sprintf("%s; retrying in %s", msg, delay.Round(time.Millisecond)))})
		if workflow.Sleep(ctx, delay) != nil {
			d.send(ctx, event{result: d.failed(i, d.stoppedMsg(), attempt)})
			return
		}
	}
}

// stoppedMsg says why a step was cut short by the run stopping, in the
// local driver's words (runtime/step.go interruptMsg; see
// /tmp/tasks/w2/temporal-needs.md: the run core is asked to export it).
func (d *driver) stoppedMsg() string {
	switch d.m.StopReason() {
	case runtime.StopAbort, runtime.StopInterrupted:
		return "cancelled because another step failed"
	case runtime.StopTimeout:
		return fmt.Sprintf("stopped: the workflow timed out after %s", d.m.Workflow().Timeout.D())
	}
	return "cancelled"
}

// timedOutMsg says that step a's deadline passed: the step timeout, or the
// workflow's when that came first.
func (d *driver) timedOutMsg(a runtime.Action, last runtime.Attempt, retried bool) string {
	if wt := d.m.Workflow().Timeout.D(); wt > 0 && !a.Deadline.Before(d.m.Run().StartedAt.Add(wt)) {
		return fmt.Sprintf("stopped: the workflow timed out after %s", wt)
	}
	msg := fmt.Sprintf("timed out after %s", a.Deadline.Sub(a.At))
	if retried && last.Msg != "" {
		msg += " (last error: " + last.Msg + ")"
	}
	return msg
}
