package runtime

// What a driver other than the local one needs to execute the steps a
// Machine starts without the local step executors: the call a tool step
// makes (arguments rendered from the machine's data), its retry rule,
// the classification of one attempt's outcome, an elicitation's question
// and the step end its answer gives, and the resume rule for a step whose
// call was lost. Every function here is pure: it reads the machine's data
// and the plan, and changes nothing. The local driver uses the same
// pieces (evalArgs, RetryPolicy, stepOutput, elicitAnswer), so both
// drivers word results and failures the same way.

import (
	"fmt"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

// ToolCall renders the call a started tool step i makes, from the
// machine's data as of now: its arguments evaluated, coerced to the
// tool's input schema when the engine knows it, and checked against the
// limits. For a workflow step, Backend is empty, Tool is the child
// workflow's name and Arguments are its parameters. A failure is the
// StepError the step fails with (feed it in a failed StepResult with
// Attempts 1; it is not retried).
func (m *Machine) ToolCall(i int) (ToolCall, *StepError) {
	sp := m.wp.steps[i]
	switch {
	case sp.kind == ir.StepWorkflow && sp.callee != nil:
	case sp.kind == ir.StepTool && sp.step.Tool != nil:
	default:
		return ToolCall{}, &StepError{Step: sp.id, Pos: sp.step.Pos, Msg: fmt.Sprintf("step is a %s step, not a tool or workflow step", sp.kind)}
	}
	m.lock()
	args, serr := m.evalArgs(sp, m.data)
	m.unlock()
	if serr != nil {
		return ToolCall{}, serr
	}
	call := ToolCall{Arguments: args, RunID: m.run.ID, StepID: sp.id}
	if sp.callee != nil {
		call.Tool = sp.callee.wf.Name
	} else {
		call.Backend, call.Tool = sp.step.Tool.Backend, sp.step.Tool.Name
	}
	return call, nil
}

// RetryPolicy is step i's retry rule (MaxAttempts 1 when it does not
// retry).
func (m *Machine) RetryPolicy(i int) RetryPolicy { return m.wp.steps[i].retryPolicy() }

// Attempt is the outcome of one backend call of a tool step.
type Attempt struct {
	OK      bool
	Output  any            // when OK: the step's output
	Content map[string]any // when OK: the content map
	Kind    FailureKinds   // when not OK: which retryOn kind it is
	Msg     string         // when not OK: the failure, as the run records it
}

// ToolAttempt classifies one call of tool step i: res and callErr are
// what the backend returned, attemptTimedOut that the call hit the
// step's attemptTimeout. (The backend enforces limits.maxResultBytes, as
// the local driver's mcpclient does.)
func (m *Machine) ToolAttempt(i int, res *ToolResult, callErr error, attemptTimedOut bool) Attempt {
	sp := m.wp.steps[i]
	return classifyAttempt(sp.step.Tool, sp.tuning.attemptTimeout, res, callErr, attemptTimedOut)
}

// NotRetried is the suffix the local driver adds to the message of a
// failure of kind k that retryOn does not list.
func (m *Machine) NotRetried(i int, k FailureKinds) string {
	return " (" + m.wp.steps[i].tuning.notRetried(k) + ")"
}

// StepError is a failure of step i with message msg, at the step's
// position.
func (m *Machine) StepError(i int, msg string) *StepError {
	sp := m.wp.steps[i]
	return &StepError{Step: sp.id, Pos: sp.step.Pos, Msg: msg}
}

// Elicitation renders the question a started elicitation step i asks.
// A failure (its message template) is the StepError the step fails with.
func (m *Machine) Elicitation(i int) (ElicitRequest, *StepError) {
	sp := m.wp.steps[i]
	req := ElicitRequest{RunID: m.run.ID, StepID: sp.id, Schema: sp.step.Schema}
	if sp.message != nil {
		m.lock()
		s, err := sp.message.str(m.data)
		m.unlock()
		if err != nil {
			return req, templateStepError(sp.id, sp.message, err, "message")
		}
		req.Message = s
	}
	return req, nil
}

// ElicitOutcome is the end of elicitation step i given the user's
// answer, or, with timedOut, no answer within the step's timeout. at is
// the end's time.
func (m *Machine) ElicitOutcome(i int, res ElicitResult, timedOut bool, at time.Time) StepResult {
	sp := m.wp.steps[i]
	var msg stepMsg
	if timedOut {
		msg = m.elicitOutcome(sp, sp.step.OnCancel, elicitTimeout, fmt.Sprintf("no answer within %s", sp.timeout), "onCancel")
	} else {
		msg = m.elicitAnswer(sp, res)
	}
	return msg.result(i, at)
}

// result is the StepResult of step i ending with msg at at.
func (msg stepMsg) result(i int, at time.Time) StepResult {
	return StepResult{
		Step: i, Status: msg.status, Output: msg.output, Content: msg.content, Err: msg.err,
		Attempts: msg.attempts, EndedAt: at, Note: msg.note, ForceAbort: msg.forceAbort, SkipRemaining: msg.skipRemaining,
	}
}

// Restartable reports whether step i may be started again when its call
// was lost (vmcp or a worker died while it was in flight): it is
// idempotent (idempotent: true; the backend tool's idempotentHint or
// readOnlyHint; for a loop or workflow step, every call it makes), or it
// is an elicitation, which is asked again.
func (m *Machine) Restartable(i int) bool { return m.restartable(m.wp.steps[i]) }

// Interrupt ends running step i, whose call was lost and which is not
// Restartable: it fails with an error naming it and saying why, and the
// run ends interrupted (once the other running steps have reported).
func (m *Machine) Interrupt(i int, at time.Time) []Action {
	m.acts = m.acts[:0]
	if i < 0 || i >= len(m.run.Steps) || m.run.Steps[i].Status != StepRunning {
		return m.acts
	}
	m.tick(at)
	m.interruptStep(i)
	m.next()
	return m.acts
}

// interruptStep fails running step i as lost in flight and stops the run
// with StopInterrupted.
func (m *Machine) interruptStep(i int) {
	sp := m.wp.steps[i]
	err := &StepError{Step: sp.id, Pos: sp.step.Pos, Msg: fmt.Sprintf("step %q was in flight when vmcp stopped and %s; mark it idempotent: true if calling it twice is safe", sp.id, m.whyNotRestartable(sp))}
	if m.firstErr == nil {
		m.firstErr = err
	}
	m.stopFor(StopInterrupted)
	m.settle(StepResult{Step: i, Status: StepFailed, Err: err, Attempts: m.run.Steps[i].Attempts, EndedAt: m.now, Note: noteInterrupted})
}

// ChildAttempt classifies one child run of workflow step i: child and
// err are what Engine.Run (or the driver's child workflow) returned,
// attemptTimedOut that the attempt hit attemptTimeout. Output is the
// child's result when OK.
func (m *Machine) ChildAttempt(i int, child *Run, err error, attemptTimedOut bool) Attempt {
	sp := m.wp.steps[i]
	name := ""
	if sp.callee != nil {
		name = sp.callee.wf.Name
	}
	return childAttempt(name, child, err, attemptTimedOut, sp.tuning.attemptTimeout)
}

// StoppedMsg is the message of a running step that failed because the
// run stopped (m.StopReason): "cancelled because another step failed",
// "stopped: the workflow timed out after 30m0s" or "cancelled".
func (m *Machine) StoppedMsg() string { return stoppedMsg(m.cause, m.wp.timeout) }

// StepTimedOutMsg is the message of step i that hit its own timeout;
// last, when not empty, is the last attempt's failure (a retry loop cut
// short), kept as the cause.
func (m *Machine) StepTimedOutMsg(i int, last string) string {
	msg := timedOutMsg(m.wp.steps[i].timeout)
	if last != "" {
		msg += " (last error: " + last + ")"
	}
	return msg
}

// GaveUpMsg is the suffix of a retried step's failure when the step
// timeout leaves no time for the next attempt.
func GaveUpMsg(tries int) string { return gaveUpSuffix(tries) }

// ElicitUnanswerable is the end of elicitation step i when no client can
// answer (no elicitor): its onCancel action decides.
func (m *Machine) ElicitUnanswerable(i int, at time.Time) StepResult {
	sp := m.wp.steps[i]
	return m.elicitOutcome(sp, sp.step.OnCancel, ElicitCancel, noElicitorWhy, "onCancel").result(i, at)
}

// ElicitFailed is the end of elicitation step i when asking failed with
// err (not a timeout, not a stop).
func (m *Machine) ElicitFailed(i int, err error, at time.Time) StepResult {
	return elicitFailed(m.wp.steps[i], err).result(i, at)
}

// ValidateParams checks params against the workflow's input schema and
// the input limits, as Run does before it records a run.
func (e *Engine) ValidateParams(workflow string, params map[string]any) error {
	_, _, err := e.prepareRun(workflow, params)
	return err
}

// The wording both drivers share.

// noElicitorWhy is why an elicitation takes its onCancel action when no
// client can answer.
const noElicitorWhy = "the client cannot answer elicitation requests (no elicitor)"

func elicitFailed(sp *stepPlan, err error) stepMsg {
	return failed(sp, sp.step.Pos, "elicitation failed: "+err.Error(), 1)
}

// stoppedMsg is a running step's failure when the run stopped for reason.
func stoppedMsg(reason StopReason, workflowTimeout time.Duration) string {
	switch reason {
	case StopAbort, StopInterrupted:
		return "cancelled because another step failed"
	case StopTimeout:
		return fmt.Sprintf("stopped: the workflow timed out after %s", workflowTimeout)
	}
	return "cancelled"
}

func timedOutMsg(timeout time.Duration) string { return fmt.Sprintf("timed out after %s", timeout) }

func gaveUpSuffix(tries int) string {
	return fmt.Sprintf(" (gave up after %d attempts: the step timeout leaves no time for the next retry)", tries)
}
