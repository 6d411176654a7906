package temporalrun

// The Temporal driver: a vmcp run as a Temporal workflow function.
//
// The run's decisions are the run core's (runtime.Machine), the same that
// the local driver feeds; this file only performs its actions with
// Temporal's primitives and feeds back what happened. One coroutine, the
// workflow function's own, owns the machine:
//
//	start:  build the engine from the plan in the input (pure: it parses
//	        templates, nothing else), create the machine, Start(now)
//	loop:   wait (a Temporal selector) for the first of
//	          a step's end, sent by the coroutine that ran it -> StepDone
//	          a retry notice from a running step              -> Retrying
//	          the workflow's cancellation (Temporal cancel)   -> Stop(StopCancel)
//	          the workflow timeout's timer                    -> Stop(StopTimeout)
//	        and perform the actions that come back:
//	          ActionStart   run the step on a coroutine of its own (exec.go)
//	          ActionStop    cancel the running steps' context: their
//	                        activities are cancelled, and the backend
//	                        calls' contexts end on the workers
//	          ActionFinally later steps run on a disconnected context,
//	                        bounded only by their own deadlines
//	          ActionRecord  nothing: the run query reads the machine's Run
//	          ActionFinish  return the final Run
//
// Every time the machine sees is workflow.Now, every random number comes
// from workflow.SideEffect, and every wait is a Temporal timer, future or
// channel, so a replay of the history makes the same decisions. The run
// query answers the machine's Run as it stands, and the question a step
// waits on; the vmcp run process follows both (follow.go).

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// ErrPlanType is the Temporal error type of a run whose input cannot be
// run (a plan this worker cannot load). It is not retried.
const ErrPlanType = "vmcp.BadPlan"

// Workflow is a vmcp run as a Temporal workflow (see the top of the file),
// on a worker that has measured no tool: it runs no step as a local
// activity, except where a recorded history says so (the replayer).
func Workflow(ctx workflow.Context, in Input) (*runtime.Run, error) {
	return executor{}.workflow(ctx, in)
}

// executor is the workflow function of a worker whose activities time
// their calls in calls (quick.go).
type executor struct{ calls *callTimes }

func (e executor) workflow(ctx workflow.Context, in Input) (*runtime.Run, error) {
	if in.Plan == nil {
		return nil, temporal.NewNonRetryableApplicationError("the run's input has no plan", ErrPlanType, nil)
	}
	// The input's plan came through Temporal's payload converter, not
	// ir.Decode: validate it here, once, as Decode would.
	err := ir.Validate(in.Plan)
	var eng *runtime.Engine
	if err == nil {
		eng, err = runtime.New(in.Plan, engineOptions(in.Tools, in.MaxIterations, in.MaxResultBytes, nil))
	}
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("this worker cannot run the plan: %v", err), ErrPlanType, nil)
	}
	if in.RunID == "" { // a Temporal Schedule's run (schedules.go)
		in.RunID = workflow.GetInfo(ctx).WorkflowExecution.ID
	}
	m, err := eng.NewMachine(in.Workflow, in.RunID, in.Params, runtime.MachineOptions{ParentID: in.ParentID, ParentStep: in.ParentStep, Draft: in.Draft, Owner: in.Owner, Trigger: in.Trigger})
	if err != nil {
		if ie, ok := err.(*runtime.InputError); ok {
			return nil, temporal.NewNonRetryableApplicationError(ie.Error(), ErrInputType, nil, ie)
		}
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrPlanType, nil)
	}
	d := newDriver(ctx, in, eng, m)
	d.calls = e.calls
	if err := d.handlers(); err != nil {
		return nil, err
	}
	return d.run()
}

// driver is one run's Temporal driver state. Only the workflow's own
// coroutine touches it (step coroutines talk through events).
type driver struct {
	root workflow.Context
	in   Input
	eng  *runtime.Engine
	m    *runtime.Machine

	// steps is the context of top-level steps; cancelSteps ends it
	// (ActionStop). Finally steps run on finallyCtx. Both are disconnected
	// from the workflow's cancellation, which the loop turns into a Stop:
	// a cancelled context cancels its children in map order (the SDK's
	// context is Go's), so two children of the root (the steps and the
	// workflow timeout's timer) would be cancelled in a different order
	// on replay. The loop cancels them itself, steps first.
	steps       workflow.Context
	cancelSteps workflow.CancelFunc
	finallyCtx  workflow.Context
	finally     bool

	// events carries step ends and retry notices to the loop.
	events workflow.Channel
	// idempotent[i] says step i may run again on another worker (the
	// machine's start record says so: Durable is false).
	idempotent map[int]bool

	questions questions
	// children are the child runs of workflow steps, for the run query.
	children []Child
	// queued are events decided while actions were performed.
	queued []event

	// calls are the worker's call times; quick the tools that were quick
	// when the run started, as recorded (quick.go).
	calls *callTimes
	quick map[string]bool
}

// event is what a step coroutine tells the loop: a step's end, a retry
// notice (the attempt that follows and why), or that the step's worker
// went away and the step may not run again (interrupt).
type event struct {
	result    *runtime.StepResult
	retry     bool
	interrupt bool
	// workflowTimeout: the step was cut short by the workflow's deadline;
	// the run stops with StopTimeout before the step's end is fed, and the
	// step fails with the stop's message, as locally.
	workflowTimeout bool
	step            int
	attempt         int
	err             *runtime.StepError
}

func newDriver(ctx workflow.Context, in Input, eng *runtime.Engine, m *runtime.Machine) *driver {
	d := &driver{root: ctx, in: in, eng: eng, m: m, events: workflow.NewChannel(ctx), idempotent: map[int]bool{}}
	base, _ := workflow.NewDisconnectedContext(ctx)
	d.steps, d.cancelSteps = workflow.WithCancel(base)
	d.questions.answers = map[int]Answer{}
	return d
}

// handlers registers the run query and the answer update.
func (d *driver) handlers() error {
	if err := workflow.SetQueryHandler(d.root, QueryRun, func() (Snapshot, error) {
		return Snapshot{Run: d.m.Run(), Questions: d.questions.list(), Children: d.children}, nil
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(d.root, UpdateAnswer,
		func(ctx workflow.Context, a Answer) error {
			d.questions.answers[a.Seq] = a
			return nil
		},
		workflow.UpdateHandlerOptions{Validator: d.questions.validate})
}

// run is the loop at the top of the file.
func (d *driver) run() (*runtime.Run, error) {
	wf := d.m.Workflow()
	start := workflow.Now(d.root)
	var timeout workflow.Future
	cancelTimeout := func() {}
	if t := wf.Timeout.D(); t > 0 {
		base, _ := workflow.NewDisconnectedContext(d.root)
		var tctx workflow.Context
		tctx, cancelTimeout = workflow.WithCancel(base)
		timeout = workflow.NewTimer(tctx, t)
	}
	d.recordQuick(d.root)
	d.perform(d.m.Start(start))
	cancelled := false
	for !d.m.Done() {
		if len(d.queued) > 0 {
			ev := d.queued[0]
			d.queued = d.queued[1:]
			d.handle(ev)
			continue
		}
		sel := workflow.NewSelector(d.root)
		sel.AddReceive(d.events, func(c workflow.ReceiveChannel, _ bool) {
			var ev event
			c.Receive(d.root, &ev)
			d.handle(ev)
		})
		if !cancelled {
			sel.AddReceive(d.root.Done(), func(workflow.ReceiveChannel, bool) {
				cancelled = true
				d.perform(d.m.Stop(runtime.StopCancel, workflow.Now(d.root)))
				d.cancelSteps() // also when the machine had stopped already
				cancelTimeout()
			})
		}
		if timeout != nil {
			sel.AddFuture(timeout, func(f workflow.Future) {
				timeout = nil
				if f.Get(d.root, nil) == nil { // fired, not cancelled
					d.perform(d.m.Stop(runtime.StopTimeout, workflow.Now(d.root)))
				}
			})
		}
		sel.Select(d.root)
	}
	run := d.m.Run()
	if n := jsonSize(run); n > PayloadLimit {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the run's record (its steps' outputs together) is %d bytes, over Temporal's payload limit of %d bytes; have the steps return less", n, PayloadLimit),
			ErrPayloadTooLarge, nil)
	}
	return run, nil
}

// handle feeds one event to the machine.
func (d *driver) handle(ev event) {
	now := workflow.Now(d.root)
	switch {
	case ev.result != nil:
		res := *ev.result
		res.EndedAt = now
		if ev.workflowTimeout {
			d.perform(d.m.Stop(runtime.StopTimeout, now))
			res.Err = d.m.StepError(res.Step, d.m.StoppedMsg())
		}
		d.perform(d.m.StepDone(res))
	case ev.retry:
		d.perform(d.m.Retrying(ev.step, ev.attempt, ev.err))
	case ev.interrupt:
		d.perform(d.m.Interrupt(ev.step, now))
	}
}

// perform carries out the machine's actions in order.
func (d *driver) perform(acts []runtime.Action) {
	for _, a := range acts {
		switch a.Kind {
		case runtime.ActionRecord:
			if a.Event == runtime.EventStepStarted {
				d.idempotent[a.Step] = !a.Durable
			}
		case runtime.ActionStart:
			ctx := d.steps
			if d.finally {
				ctx = d.finallyCtx
			}
			d.start(ctx, a)
		case runtime.ActionStop:
			d.cancelSteps()
		case runtime.ActionFinally:
			d.finally = true
			d.finallyCtx, _ = workflow.NewDisconnectedContext(d.root)
		}
	}
}

// send hands an event to the loop; ctx is the sending coroutine's own
// context (a coroutine blocks only on its own).
func (d *driver) send(ctx workflow.Context, ev event) { d.events.Send(ctx, ev) }

// remaining is the time until deadline, as of the workflow's clock.
func (d *driver) remaining(ctx workflow.Context, deadline time.Time) time.Duration {
	if deadline.IsZero() {
		return 0
	}
	return deadline.Sub(workflow.Now(ctx))
}
