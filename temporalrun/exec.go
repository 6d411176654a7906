package temporalrun

// Executing the steps a Machine starts, with Temporal's primitives. Each
// started step runs on a workflow coroutine of its own and reports back
// through the driver's event channel; the machine's driver API
// (runtime/driverapi.go) renders the call and words the outcome, so both
// drivers say the same things.
//
// Tool steps. One activity per attempt (activity.go), on any worker; a
// quick step that may run twice runs as a local activity instead, in the
// workflow task that started it (quick.go). The
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
// forEach steps run whole, as one activity (vmcp.executeStep) that runs
// the local executors on the worker over a snapshot of the data the step
// reads (Machine.StepInput, Engine.ExecuteStep): iterations, bodies,
// nested loops and their retries behave exactly as locally. A worker lost
// mid-loop re-runs the whole loop elsewhere only when every call in it is
// idempotent (Machine.Restartable); otherwise the run is interrupted there.

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// started is a step the machine started: its index, its start and the
// time by which it must end.
type started struct {
	step         int
	at, deadline time.Time
}

// start runs the step of a (an ActionStart).
func (d *driver) start(ctx workflow.Context, a runtime.Action) {
	s := started{step: a.Step, at: a.At, deadline: d.m.Deadline(a.Step)}
	i := a.Step
	fail := func(serr *runtime.StepError) {
		d.later(event{result: &runtime.StepResult{Step: i, Status: runtime.StepFailed, Err: serr, Attempts: 1}})
	}
	switch d.m.Step(i).Type {
	case ir.StepTool, "", ir.StepWorkflow:
		call, serr := d.m.ToolCall(i)
		if serr != nil {
			fail(serr)
			return
		}
		once := d.callOnce // an activity per attempt
		if d.m.Step(i).Type == ir.StepWorkflow {
			once = d.childOnce // a child workflow per attempt
		}
		workflow.Go(ctx, func(ctx workflow.Context) {
			d.withRetries(ctx, s, func(ctx workflow.Context, n int, deadline time.Time, byAttempt bool) (runtime.Attempt, callOutcome) {
				return once(ctx, s, call, n, deadline, byAttempt)
			})
		})
	case ir.StepElicitation:
		req, serr := d.m.Elicitation(i)
		if serr != nil {
			fail(serr)
			return
		}
		q := d.questions.ask(req)
		workflow.Go(ctx, func(ctx workflow.Context) { d.runElicitation(ctx, s, q) })
	default: // forEach
		in, err := encodeStepInput(d.m.StepInput(i))
		if err != nil {
			fail(d.m.StepError(i, err.Error()))
			return
		}
		workflow.Go(ctx, func(ctx workflow.Context) { d.runWhole(ctx, s, in) })
	}
}

// later queues an event decided while the machine's actions are being
// performed (the loop feeds it once they are done).
func (d *driver) later(ev event) { d.queued = append(d.queued, ev) }

// failed is a failed end of step i.
func (d *driver) failed(i int, msg string, attempts int) *runtime.StepResult {
	return &runtime.StepResult{Step: i, Status: runtime.StepFailed, Err: d.m.StepError(i, msg), Attempts: attempts}
}

// callOutcome is how one attempt ended when it did not end in an answer
// the machine classifies.
type callOutcome struct {
	lost    bool   // the worker went away mid-call (no heartbeat)
	stopped bool   // the step's context was cancelled (the run stopped)
	timeout bool   // the step's deadline passed
	fatal   string // an error that ends the step at once (payload limit)
}

func (oc callOutcome) decided() bool { return oc.lost || oc.stopped || oc.timeout || oc.fatal != "" }

// attemptFunc makes attempt n, bounded by deadline (byAttempt: that is
// attemptTimeout's, not the step's).
type attemptFunc func(ctx workflow.Context, n int, deadline time.Time, byAttempt bool) (runtime.Attempt, callOutcome)

// withRetries runs a tool or workflow step's attempts with its retry
// policy (see the top of the file; the local loop is runtime/step.go
// withRetries, and the wording is the machine's).
func (d *driver) withRetries(ctx workflow.Context, s started, attempt attemptFunc) {
	i := s.step
	p := d.m.RetryPolicy(i)
	last := ""
	for n := 1; ; n++ {
		deadline, byAttempt := s.deadline, false
		if now := workflow.Now(ctx); p.AttemptTimeout > 0 && now.Add(p.AttemptTimeout).Before(deadline) {
			deadline, byAttempt = now.Add(p.AttemptTimeout), true
		}
		att, oc := attempt(ctx, n, deadline, byAttempt)
		switch {
		case oc.stopped:
			d.send(ctx, event{result: d.failed(i, d.m.StoppedMsg(), n)})
			return
		case oc.lost:
			d.send(ctx, event{interrupt: true, step: i})
			return
		case oc.fatal != "":
			d.send(ctx, event{result: d.failed(i, oc.fatal, n)})
			return
		case oc.timeout:
			d.send(ctx, event{result: d.failed(i, d.timedOutMsg(s, last), n), workflowTimeout: d.atWorkflowDeadline(s)})
			return
		}
		if att.OK {
			d.send(ctx, event{result: &runtime.StepResult{Step: i, Status: runtime.StepCompleted, Output: att.Output, Content: att.Content, Attempts: n}})
			return
		}
		last = att.Msg
		if n >= p.MaxAttempts {
			d.send(ctx, event{result: d.failed(i, att.Msg, n)})
			return
		}
		if !p.Retries(att.Kind) {
			d.send(ctx, event{result: d.failed(i, att.Msg+d.m.NotRetried(i, att.Kind), n)})
			return
		}
		delay := p.Delay(n, d.jitter(ctx))
		if workflow.Now(ctx).Add(delay).After(s.deadline) {
			d.send(ctx, event{result: d.failed(i, att.Msg+runtime.GaveUpMsg(n), n)})
			return
		}
		d.send(ctx, event{retry: true, step: i, attempt: n + 1,
			err: d.m.StepError(i, att.Msg+"; retrying in "+delay.Round(time.Millisecond).String())})
		if err := workflow.Sleep(ctx, delay); err != nil {
			d.send(ctx, event{result: d.failed(i, d.m.StoppedMsg(), n)})
			return
		}
	}
}

// activityOptions are the Temporal options of an activity of step s that
// must end by s's deadline: a worker's silence for the heartbeat timeout
// loses the attempt; a step that may run twice is tried again on another
// worker, any other is not.
func (d *driver) activityOptions(ctx workflow.Context, s started) (workflow.Context, bool) {
	remaining := s.deadline.Sub(workflow.Now(ctx))
	if remaining <= 0 {
		return ctx, false
	}
	retry := &temporal.RetryPolicy{MaximumAttempts: 1}
	if d.idempotent[s.step] {
		retry = &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 10 * time.Second,
			NonRetryableErrorTypes: []string{ErrPayloadTooLarge}}
	}
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ScheduleToCloseTimeout: remaining,
		StartToCloseTimeout:    remaining,
		HeartbeatTimeout:       d.heartbeat(),
		WaitForCancellation:    true,
		RetryPolicy:            retry,
	}), true
}

// activityFailure sorts an activity's failure: the run stopped, the worker
// was lost, the deadline passed, or a fatal error; ok false means none of
// these (an ordinary failed call).
func (d *driver) activityFailure(ctx workflow.Context, s started, err error) (callOutcome, bool) {
	var canceled *temporal.CanceledError
	var tout *temporal.TimeoutError
	var app *temporal.ApplicationError
	switch {
	case errors.As(err, &canceled) || ctx.Err() != nil:
		return callOutcome{stopped: true}, true
	case errors.As(err, &tout):
		// Only a heartbeat timeout before the step's deadline is a lost
		// worker; any other timeout is the deadline itself.
		worker := tout.TimeoutType() == enumspb.TIMEOUT_TYPE_HEARTBEAT && workflow.Now(ctx).Before(s.deadline)
		if worker && !d.idempotent[s.step] {
			return callOutcome{lost: true}, true
		}
		return callOutcome{timeout: true}, true
	case errors.As(err, &app) && app.Type() == ErrPayloadTooLarge:
		return callOutcome{fatal: app.Message()}, true
	}
	return callOutcome{}, false
}

// callOnce runs one attempt of a tool step: as a local activity when the
// step is quick and may run twice (quick.go), else as an activity.
func (d *driver) callOnce(ctx workflow.Context, s started, call runtime.ToolCall, n int, deadline time.Time, byAttempt bool) (runtime.Attempt, callOutcome) {
	in := CallInput{Call: call, Attempt: n, Deadline: deadline}
	out, oc, done := CallOutput{}, callOutcome{}, false
	if d.local(s) { // a quick step that may run twice (quick.go)
		out, oc, done = d.callLocal(ctx, s, in)
	}
	if !done {
		out, oc = d.callActivity(ctx, s, in)
	}
	if oc.decided() {
		return runtime.Attempt{}, oc
	}
	if out.TimedOut && !byAttempt {
		return runtime.Attempt{}, callOutcome{timeout: true}
	}
	var callErr error
	if out.Err != "" {
		callErr = errors.New(out.Err)
	}
	return d.m.ToolAttempt(s.step, out.Result, callErr, out.TimedOut), callOutcome{}
}

// callActivity runs one attempt of a tool step as a regular activity.
func (d *driver) callActivity(ctx workflow.Context, s started, in CallInput) (CallOutput, callOutcome) {
	actx, ok := d.activityOptions(ctx, s)
	if !ok {
		return CallOutput{}, callOutcome{timeout: true}
	}
	var out CallOutput
	err := workflow.ExecuteActivity(actx, CallToolActivity, in).Get(actx, &out)
	if err != nil {
		if oc, ok := d.activityFailure(ctx, s, err); ok {
			return CallOutput{}, oc
		}
		out = CallOutput{Err: err.Error()} // a worker-side error: a failed call
	}
	return out, callOutcome{}
}

// childOnce runs one attempt of a workflow step: its child run as a child
// workflow, whose id is its run id.
func (d *driver) childOnce(ctx workflow.Context, s started, call runtime.ToolCall, n int, deadline time.Time, byAttempt bool) (runtime.Attempt, callOutcome) {
	step := d.m.Step(s.step)
	id := d.in.RunID + "." + step.ID + "." + strconv.Itoa(n)
	d.children = append(d.children, Child{RunID: id, Workflow: call.Tool, Step: step.ID})
	remaining := deadline.Sub(workflow.Now(ctx))
	if remaining <= 0 {
		return runtime.Attempt{}, callOutcome{timeout: true}
	}
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
	if err != nil && ctx.Err() != nil {
		return runtime.Attempt{}, callOutcome{stopped: true}
	}
	var tout *temporal.TimeoutError
	if errors.As(err, &tout) {
		if !byAttempt {
			return runtime.Attempt{}, callOutcome{timeout: true}
		}
		return d.m.ChildAttempt(s.step, &runtime.Run{ID: id, Status: runtime.RunTimedOut}, nil, true), callOutcome{}
	}
	if err != nil {
		return d.m.ChildAttempt(s.step, nil, errors.New(applicationMessage(err)), false), callOutcome{}
	}
	return d.m.ChildAttempt(s.step, &child, nil, false), callOutcome{}
}

// runWhole runs a step whole on a worker (vmcp.executeStep).
func (d *driver) runWhole(ctx workflow.Context, s started, in []byte) {
	actx, ok := d.activityOptions(ctx, s)
	if !ok {
		d.send(ctx, event{result: d.failed(s.step, d.timedOutMsg(s, ""), 1), workflowTimeout: d.atWorkflowDeadline(s)})
		return
	}
	var res runtime.StepResult
	err := workflow.ExecuteActivity(actx, ExecuteStepActivity, StepCall{
		Plan: d.in.Plan, Tools: d.in.Tools, Workflow: d.in.Workflow, MaxIterations: d.in.MaxIterations, MaxResultBytes: d.in.MaxResultBytes, Input: in,
	}).Get(actx, &res)
	if err != nil {
		oc, known := d.activityFailure(ctx, s, err)
		switch {
		case !known:
			d.send(ctx, event{result: d.failed(s.step, applicationMessage(err), 1)})
		case oc.stopped:
			d.send(ctx, event{result: d.failed(s.step, d.m.StoppedMsg(), 1)})
		case oc.lost:
			d.send(ctx, event{interrupt: true, step: s.step})
		case oc.fatal != "":
			d.send(ctx, event{result: d.failed(s.step, oc.fatal, 1)})
		default:
			d.send(ctx, event{result: d.failed(s.step, d.timedOutMsg(s, ""), 1), workflowTimeout: d.atWorkflowDeadline(s)})
		}
		return
	}
	res.Step = s.step
	d.send(ctx, event{result: &res})
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
func (d *driver) runElicitation(ctx workflow.Context, s started, q Question) {
	i := s.step
	defer d.questions.close(q.Seq)
	if !d.in.Elicit {
		res := d.m.ElicitUnanswerable(i, workflow.Now(ctx))
		d.send(ctx, event{result: &res})
		return
	}
	var ans Answer
	ok, err := workflow.AwaitWithTimeout(ctx, s.deadline.Sub(workflow.Now(ctx)), func() bool {
		var has bool
		ans, has = d.questions.answers[q.Seq]
		return has
	})
	var res runtime.StepResult
	switch {
	case err != nil:
		res = *d.failed(i, d.m.StoppedMsg(), 1)
	case !ok:
		res = d.m.ElicitOutcome(i, runtime.ElicitResult{}, true, workflow.Now(ctx))
	case ans.Err != "":
		res = d.m.ElicitFailed(i, errors.New(ans.Err), workflow.Now(ctx))
	default:
		res = d.m.ElicitOutcome(i, ans.Result, false, workflow.Now(ctx))
	}
	d.send(ctx, event{result: &res})
}

// atWorkflowDeadline reports whether step s's deadline is the workflow's
// (the step timeout would have ended later).
func (d *driver) atWorkflowDeadline(s started) bool {
	wt := d.m.Workflow().Timeout.D()
	return wt > 0 && !d.finally && !s.deadline.Before(d.m.Run().StartedAt.Add(wt))
}

// timedOutMsg says that step s's own timeout passed (a cut by the
// workflow's deadline gets the stop's message instead, see handle).
func (d *driver) timedOutMsg(s started, last string) string {
	return d.m.StepTimedOutMsg(s.step, last)
}
