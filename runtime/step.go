package runtime

// Executing one step, on the goroutine that started it (see scheduler.go). A tool step evaluates
// its arguments (under the run's read lock), coerces them to the tool's
// input schema when it is known, and calls the backend inside a context
// bounded by the step timeout. With onError retry, failed attempts are
// retried by cenkalti/backoff/v5 with an exponential backoff (retry.go:
// initial interval retryDelay, default 1s; multiplier, default 1.5;
// randomisation 0.5; interval capped at maxDelay, default 60s; each
// attempt bounded by attemptTimeout; only the failure kinds of retryOn),
// at most maxRetries more attempts, and never past the step timeout. maxRetries applies whatever the action: once the
// retries are spent, abort or continue decides, and retry (or no action)
// leaves it to the workflow's failureMode. Argument errors are not retried: they cannot change.
//
// An elicitation step renders its message and asks RunOptions.Elicitor;
// accept makes the answer's content the output, decline and cancel (and no
// answer within the step timeout, which counts as cancel) take the step's
// onDecline/onCancel action: abort fails the run whatever the failure mode,
// continue skips the step (readers see defaultResults), skip_remaining also
// skips every step that has not started and ends the run as completed.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/vmcp-dev/vmcp/ir"
)

// attemptError is the failure of one backend call.
type attemptError struct {
	msg   string
	cause error      // the backend's error, if any
	kind  retryKinds // which retryOn kind it is (retry.go)
}

func (e *attemptError) Error() string { return e.msg }
func (e *attemptError) Unwrap() error { return e.cause }

func failed(sp *stepPlan, pos ir.Pos, msg string, attempts int) stepMsg {
	return stepMsg{status: StepFailed, attempts: attempts, err: &StepError{Step: sp.id, Pos: posOr(pos, sp.step.Pos), Msg: msg}}
}

func (r *runState) runTool(ctx context.Context, sp *stepPlan) stepMsg {
	r.mu.RLock()
	args, serr := r.evalArgs(sp, r.data)
	r.mu.RUnlock()
	if serr != nil {
		return stepMsg{status: StepFailed, attempts: 1, err: serr}
	}
	// Retry notices are recorded at once. The method value is made only
	// for a step that may retry.
	var notify func(stepMsg)
	if sp.maxRetries > 0 {
		notify = r.notify
	}
	out, attempts, msg := r.callTool(ctx, sp, sp, args, notify, sp.timeout)
	if msg != "" {
		return failed(sp, sp.step.Pos, msg, attempts)
	}
	return stepMsg{status: StepCompleted, output: out, attempts: attempts}
}

// evalArgs evaluates a tool step's arguments and coerces them to the tool's
// input schema. Callers hold the read lock.
func (r *runState) evalArgs(sp *stepPlan, data map[string]any) (map[string]any, *StepError) {
	var args map[string]any
	if sp.args != nil {
		v, err := sp.args.eval(data)
		if err != nil {
			return nil, r.argError(sp, err)
		}
		switch x := v.(type) {
		case nil:
		case map[string]any:
			if sp.args.kind == ir.KindObject {
				args = x
			} else {
				// A whole-arguments template may yield a shared output map.
				args = make(map[string]any, len(x))
				for k, e := range x {
					args[k] = e
				}
			}
		default:
			return nil, &StepError{Step: sp.id, Pos: sp.step.Pos, Msg: fmt.Sprintf("arguments must be an object; they are %s", typeName(v))}
		}
	}
	if args == nil {
		args = map[string]any{}
	}
	if r.e.schemas != nil && sp.step.Tool != nil {
		if schema, ok := r.e.schemas.InputSchema(sp.step.Tool.Backend, sp.step.Tool.Name); ok {
			if err := coerceArgs(args, schema); err != nil {
				return nil, &StepError{Step: sp.id, Pos: sp.step.Pos, Msg: err.Error()}
			}
		}
	}
	return args, nil
}

func (r *runState) argError(sp *stepPlan, err error) *StepError {
	var te *templateError
	if errors.As(err, &te) {
		return &StepError{Step: sp.id, Pos: posOr(te.pos, sp.step.Pos), Msg: "arguments: " + te.msg}
	}
	return &StepError{Step: sp.id, Pos: sp.step.Pos, Msg: "arguments: " + err.Error()}
}

// callTool calls the backend with the retry policy of policy (the step, or
// for forEach iterations the inner step). It returns the output, the number
// of attempts and, on failure, a message. notify, when set, passes retry
// notices to the scheduler.
func (r *runState) callTool(ctx context.Context, sp, policy *stepPlan, args map[string]any, notify func(stepMsg), timeout time.Duration) (any, int, string) {
	tool := sp.step.Tool
	call := ToolCall{Backend: tool.Backend, Tool: tool.Name, Arguments: args, RunID: r.run.ID, StepID: sp.id}
	attempt := func() (any, error) {
		actx, cancel := policy.tuning.attemptContext(ctx)
		defer cancel()
		res, err := r.e.backend.CallTool(actx, call)
		if err != nil {
			if ctx.Err() == nil && actx.Err() != nil {
				return nil, &attemptError{msg: fmt.Sprintf("calling %s: the attempt timed out after %s (attemptTimeout)", tool, policy.tuning.attemptTimeout), cause: err, kind: retryOnTimeout}
			}
			return nil, &attemptError{msg: fmt.Sprintf("calling %s: %v", tool, err), cause: err, kind: retryOnError}
		}
		out, msg, ok := stepOutput(res)
		if !ok {
			return nil, &attemptError{msg: fmt.Sprintf("%s returned an error: %s", tool, msg), kind: retryOnToolError}
		}
		return out, nil
	}
	// maxRetries retries whatever the action: `{action: abort, maxRetries: 2}`
	// (as ToolHive's examples write it) retries twice, then aborts.
	if policy.maxRetries == 0 {
		out, err := attempt()
		if err != nil {
			return nil, 1, r.failureMsg(ctx, timeout, err)
		}
		return out, 1, ""
	}
	b := policy.tuning.backOff(policy.retryDelay)
	tries := 0
	var last error
	opts := []backoff.RetryOption{
		backoff.WithBackOff(b),
		backoff.WithMaxTries(uint(policy.maxRetries + 1)),
		backoff.WithMaxElapsedTime(0),
	}
	if notify != nil {
		opts = append(opts, backoff.WithNotify(func(err error, next time.Duration) {
			notify(stepMsg{index: sp.index, retry: true, attempts: tries + 1, err: &StepError{Step: sp.id, Pos: sp.step.Pos, Msg: fmt.Sprintf("%v; retrying in %s", err, next.Round(time.Millisecond))}})
		}))
	}
	if dl, ok := ctx.Deadline(); ok {
		opts = append(opts, backoff.WithMaxElapsedTime(time.Until(dl)))
	}
	out, err := backoff.Retry(ctx, func() (any, error) {
		tries++
		v, err := attempt()
		if err != nil {
			last = err
			var ae *attemptError
			if ctx.Err() != nil || (errors.As(err, &ae) && !policy.tuning.retries(ae.kind)) {
				return nil, backoff.Permanent(err)
			}
		}
		return v, err
	}, opts...)
	if err != nil {
		if last == nil {
			last = err
		}
		msg := r.failureMsg(ctx, timeout, last)
		var ae *attemptError
		if errors.As(last, &ae) && !policy.tuning.retries(ae.kind) {
			msg += " (" + policy.tuning.notRetried(ae.kind) + ")"
		} else if ctx.Err() == nil && tries <= policy.maxRetries {
			msg += fmt.Sprintf(" (gave up after %d attempts: the step timeout leaves no time for the next retry)", tries)
		}
		return nil, tries, msg
	}
	return out, tries, ""
}

// failureMsg explains a failed call, preferring the reason the context
// ended (timeout, cancel, abort) over the transport's own error, which is
// then only a symptom.
func (r *runState) failureMsg(ctx context.Context, timeout time.Duration, err error) string {
	m := r.interruptMsg(ctx, timeout)
	switch {
	case m == "":
		return err.Error()
	case r.ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled):
		// The step's own timeout ended a retry loop: keep the cause.
		return m + " (last error: " + err.Error() + ")"
	}
	return m
}

// interruptMsg says why ctx ended, or "" when it has not.
func (r *runState) interruptMsg(ctx context.Context, timeout time.Duration) string {
	r.noteTimeout(ctx)
	if r.ctx.Err() != nil {
		switch r.endCause() {
		case errRunAborted:
			return "cancelled because another step failed"
		case errWorkflowTimeout:
			return fmt.Sprintf("stopped: the workflow timed out after %s", r.wp.timeout)
		}
		return "cancelled"
	}
	if ctx.Err() != nil {
		return fmt.Sprintf("timed out after %s", timeout)
	}
	return ""
}

func (r *runState) runElicitation(ctx context.Context, sp *stepPlan) stepMsg {
	var message string
	if sp.message != nil {
		r.mu.RLock()
		s, err := sp.message.str(r.data)
		r.mu.RUnlock()
		if err != nil {
			return stepMsg{status: StepFailed, attempts: 1, err: r.templateStepError(sp.id, sp.message, err, "message")}
		}
		message = s
	}
	el := r.opts.Elicitor
	if el == nil {
		return r.elicitOutcome(sp, sp.step.OnCancel, "the client cannot answer elicitation requests (no elicitor)", "onCancel")
	}
	res, err := el.Elicit(ctx, ElicitRequest{RunID: r.run.ID, StepID: sp.id, Message: message, Schema: sp.step.Schema})
	if err != nil {
		r.noteTimeout(ctx)
		if r.ctx.Err() == nil && ctx.Err() != nil {
			return r.elicitOutcome(sp, sp.step.OnCancel, fmt.Sprintf("no answer within %s", sp.timeout), "onCancel")
		}
		if m := r.interruptMsg(ctx, sp.timeout); m != "" {
			return failed(sp, sp.step.Pos, m, 1)
		}
		return failed(sp, sp.step.Pos, "elicitation failed: "+err.Error(), 1)
	}
	switch res.Action {
	case ElicitAccept:
		content := res.Content
		if content == nil {
			content = map[string]any{}
		}
		return stepMsg{status: StepCompleted, output: content, attempts: 1}
	case ElicitDecline:
		return r.elicitOutcome(sp, sp.step.OnDecline, "the user declined", "onDecline")
	case ElicitCancel:
		return r.elicitOutcome(sp, sp.step.OnCancel, "the user cancelled", "onCancel")
	}
	return failed(sp, sp.step.Pos, fmt.Sprintf("the client answered with unknown action %q", res.Action), 1)
}

func (r *runState) elicitOutcome(sp *stepPlan, action, why, handler string) stepMsg {
	switch action {
	case ir.ActionContinue:
		return stepMsg{status: StepSkipped, output: sp.step.DefaultResults, attempts: 1, note: why}
	case ir.ActionSkipRemaining:
		return stepMsg{status: StepSkipped, output: sp.step.DefaultResults, attempts: 1, note: why + "; skipping the remaining steps", skipRemaining: true}
	}
	m := failed(sp, sp.step.Pos, fmt.Sprintf("%s (%s: abort)", why, handler), 1)
	m.forceAbort = true
	return m
}
