package runtime

// One step executed outside the local driver, with the local step
// executors: a driver that cannot run them in its own process (the
// Temporal driver, whose workflow code may not start goroutines or read
// the clock) takes a snapshot of what a started step reads (StepInput),
// ships it to a worker, and there ExecuteStep runs the step exactly as
// the local driver would: a tool call with its retries, a forEach with
// its iterations and bodies, a workflow step's child run, an
// elicitation. The result goes back into the machine with StepDone.

import (
	"context"
	"fmt"
	"maps"
	"time"
)

// StepInput is what started step Step of run RunID reads: the run's
// template data as plain maps (params, vars, steps: id -> {output,
// content, status, error}, and workflow when the workflow reads it), and
// the time by which the step must end. It holds the machine's values, not
// copies: encode it (JSON) before the machine takes its next input.
type StepInput struct {
	RunID    string         `json:"runId"`
	Step     int            `json:"step"`
	Data     map[string]any `json:"data"`
	Deadline time.Time      `json:"deadline"`
	// WorkflowDeadline is the run's deadline (zero in the finally phase),
	// so a step cut short by it says so.
	WorkflowDeadline time.Time `json:"workflowDeadline,omitzero"`
}

// StepInput is the snapshot of what started step i reads.
func (m *Machine) StepInput(i int) StepInput {
	data := make(map[string]any, len(m.data))
	m.lock()
	for k, v := range m.data {
		data[k] = v
	}
	if m.steps != nil {
		steps := make(map[string]any, len(m.steps.entries))
		for _, sp := range m.wp.steps {
			steps[sp.id] = m.steps.entries[sp.index].asMap()
		}
		data["steps"] = steps
	} else {
		data["steps"] = maps.Clone(m.view)
	}
	m.unlock()
	in := StepInput{RunID: m.run.ID, Step: i, Data: data, Deadline: m.Deadline(i)}
	if m.phase == phaseMain {
		in.WorkflowDeadline = m.deadline
	}
	return in
}

// ExecuteStep runs step in.Step of workflow with the local step
// executors, on ctx (which the caller cancels to stop it) and until
// in.Deadline, reaching the world only through env (Backend, Elicitor,
// Clock; a workflow step's child runs on this engine, with its backend).
// onRetry, when set, hears each retry notice (feed it to
// Machine.Retrying). The result has EndedAt set by env's clock.
func (e *Engine) ExecuteStep(ctx context.Context, workflow string, in StepInput, env StepEnv, onRetry func(attempt int, err *StepError)) (StepResult, error) {
	wp, ok := e.lookup(workflow)
	if !ok {
		return StepResult{}, fmt.Errorf("%w %q", ErrUnknownWorkflow, workflow)
	}
	if in.Step < 0 || in.Step >= len(wp.steps) {
		return StepResult{}, fmt.Errorf("workflow %q has no step %d", workflow, in.Step)
	}
	if env.Clock == nil {
		env.Clock = SystemClock{}
	}
	if env.Backend == nil {
		env.Backend = e.backend
	}
	sp := wp.steps[in.Step]
	r := &runState{opts: RunOptions{Elicitor: env.Elicitor}, env: env, onRetry: onRetry}
	r.Machine = Machine{e: e, wp: wp, run: &Run{ID: in.RunID, Workflow: wp.wf.Name}, data: in.Data, guard: &r.mu}
	ctx = r.withQuestions(ctx) // relay.go
	r.parent = ctx
	r.ctxDeadline = in.WorkflowDeadline
	r.ctx, r.cancel = context.WithCancelCause(ctx)
	defer r.cancel(nil)
	sctx := r.ctx
	if !in.Deadline.IsZero() {
		var cancel context.CancelFunc
		sctx, cancel = context.WithDeadline(r.ctx, in.Deadline)
		defer cancel()
	}
	msg := r.runStep(sctx, sp)
	return msg.result(in.Step, env.Clock.Now()), nil
}
