package runtime

// Executing one step, on the goroutine that started it (see scheduler.go). A tool step evaluates
// its arguments (under the run's read lock), coerces them to the tool's
// input schema when it is known, and calls the backend inside a context
// bounded by the step timeout. With onError retry, failed attempts are
// retried by cenkalti/backoff/v5 with an exponential backoff (retry.go:
// initial interval retryDelay, default 1s; multiplier, default 1.5;
// randomisation 0.5; interval capped at maxDelay, default 60s; each
// attempt bounded by attemptTimeout; only the failure kinds of retryOn),
// at most maxRetries more attempts, and never past the step timeout. As in
// ToolHive, only action retry retries (prepareStep drops maxRetries under
// any other action, so continue never calls a possibly unsafe tool twice);
// once the retries are spent, the workflow's failureMode decides. Argument
// errors are not retried: they cannot change.
//
// An elicitation step renders its message and asks RunOptions.Elicitor.
// Its output is ToolHive's: accept gives {action: accept, content: answer}.
// Decline, cancel and no answer within the step timeout (reason
// "timeout", handled by onCancel) take the step's onDecline/onCancel
// action: abort fails the run whatever the failure mode; continue
// completes the step with {action: <reason>}, plus the content of its
// defaultResults when they have one; skip_remaining completes it with
// {action: <reason>, skipped: true}, then every step that has not started
// is skipped and the run ends as completed.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

// attemptError is the failure of one backend call.
type attemptError struct {
	msg   string
	cause error        // the backend's error, if any
	kind  FailureKinds // which retryOn kind it is (retry.go)
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
	var notify func(index, attempt int, err *StepError)
	if sp.maxRetries > 0 {
		notify = r.notify
	}
	res, attempts, msg := r.call(ctx, sp, sp, args, notify, sp.timeout)
	if msg != "" {
		return failed(sp, sp.step.Pos, msg, attempts)
	}
	return stepMsg{status: StepCompleted, output: res.output, content: res.content, attempts: attempts}
}

// evalArgs evaluates a tool step's arguments, coerces them to the tool's
// input schema and checks them against it (argschema.go). Callers hold
// the read lock.
func (r *Machine) evalArgs(sp *stepPlan, data map[string]any) (map[string]any, *StepError) {
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
				omitNullActions(sp.args, args)
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
	var (
		schema map[string]any
		known  bool
		as     *argSchema
	)
	if r.e.fixedSchemas && sp.callee == nil {
		as = sp.argSchema.Load() // the schema the source gave this step, for good
	}
	if as != nil {
		schema, known = as.schema, true
	} else if schema, known = r.inputSchema(sp); known && sp.callee == nil {
		// A callee validates its parameters itself (validateParams).
		as = r.e.toolArgSchema(&sp.argSchema, sp.step.Tool.Backend, sp.step.Tool.Name, schema)
	}
	// A tool's arguments that surely match its schema need neither
	// coercion nor the validator (argSchema.surelyValid): one pass.
	matched := as != nil && sp.argsSurelyValid(as, args)
	if known && !matched {
		if err := coerceArgs(args, schema); err != nil {
			return nil, &StepError{Step: sp.id, Pos: sp.step.Pos, Msg: err.Error()}
		}
	}
	if serr := checkArgLimits(sp, args); serr != nil {
		return nil, serr
	}
	if as != nil && !matched {
		if msg := as.check(sp.step.Tool.Backend, sp.step.Tool.Name, args); msg != "" {
			return nil, &StepError{Step: sp.id, Pos: sp.step.Pos, Msg: msg}
		}
	}
	return args, nil
}

// argsSurelyValid is as.surelyValid(args) by the step's own check
// (plannedCheck), made on the first call with as.
func (sp *stepPlan) argsSurelyValid(as *argSchema, args map[string]any) bool {
	pc := sp.argCheck.Load()
	if pc == nil || pc.schema != as {
		pc = newPlannedCheck(sp.args, as)
		sp.argCheck.Store(pc)
	}
	return pc.surelyValid(sp.args, args)
}

// omitNullActions leaves out of a tool call each argument that is exactly
// one parameter, {{.params.P}}, when P is null: a declared parameter that
// the caller left out and that has no default (design.md "Templates").
// Servers that validate their input commonly accept a missing optional
// argument but reject a null one. Other nulls (a step output's null
// field) are passed as null.
func omitNullActions(plan *valuePlan, args map[string]any) {
	if !plan.paramFields {
		return
	}
	for i, k := range plan.keys {
		if f := plan.fields[i]; f != nil && f.t != nil && f.t.isParam() && args[k] == nil {
			delete(args, k)
		}
	}
}

func (r *Machine) argError(sp *stepPlan, err error) *StepError {
	var te *templateError
	if errors.As(err, &te) {
		return &StepError{Step: sp.id, Pos: posOr(te.pos, sp.step.Pos), Msg: "arguments: " + te.msg}
	}
	return &StepError{Step: sp.id, Pos: sp.step.Pos, Msg: "arguments: " + err.Error()}
}

// inputSchema is the schema a step's arguments are coerced to: the
// backend tool's, when the engine knows it, or the callee's parameters.
func (r *Machine) inputSchema(sp *stepPlan) (map[string]any, bool) {
	if sp.callee != nil {
		return sp.callee.wf.InputSchema, sp.callee.wf.InputSchema != nil
	}
	if r.e.schemas != nil && sp.step.Tool != nil {
		return r.e.schemas.InputSchema(sp.step.Tool.Backend, sp.step.Tool.Name)
	}
	return nil, false
}

// toolOutput is what a successful tool or workflow step gives: its output
// and, for a tool call, its content map (see output.go).
type toolOutput struct {
	output  any
	content map[string]any
}

// call runs a tool or workflow step's work (sp is the step, or for forEach
// iterations the inner step) with the retry policy of policy (the step, or
// the inner step). It returns the output, the number of attempts and, on
// failure, a message. notify, when set, passes retry notices to the
// scheduler.
func (r *runState) call(ctx context.Context, sp, policy *stepPlan, args map[string]any, notify func(index, attempt int, err *StepError), timeout time.Duration) (toolOutput, int, string) {
	if sp.callee != nil {
		return r.withRetries(ctx, sp, policy, notify, timeout, func(ctx context.Context) (toolOutput, error) {
			out, err := r.runChild(ctx, sp, policy, args)
			return toolOutput{output: out}, err
		})
	}
	tool := sp.step.Tool
	call := ToolCall{Backend: tool.Backend, Tool: tool.Name, Arguments: args, RunID: r.run.ID, StepID: sp.id}
	return r.withRetries(ctx, sp, policy, notify, timeout, func(ctx context.Context) (toolOutput, error) {
		actx, cancel := policy.tuning.attemptContext(ctx)
		defer cancel()
		var res *ToolResult
		var err error
		if r.updates != nil { // a store that outlives the process (dispatch.go)
			res, err = r.callStoring(actx, call)
		} else {
			res, err = r.env.Backend.CallTool(actx, call)
		}
		a := classifyAttempt(tool, policy.tuning.attemptTimeout, res, err, err != nil && ctx.Err() == nil && actx.Err() != nil)
		if !a.OK {
			return toolOutput{}, &attemptError{msg: a.Msg, cause: err, kind: a.Kind}
		}
		return toolOutput{a.Output, a.Content}, nil
	})
}

// classifyAttempt is the outcome of one call of tool: res and err are
// what the backend returned, timedOut that the call hit attemptTimeout.
func classifyAttempt(tool *ir.ToolRef, attemptTimeout time.Duration, res *ToolResult, err error, timedOut bool) Attempt {
	if err != nil {
		if timedOut {
			return Attempt{Kind: FailureTimeout, Msg: fmt.Sprintf("calling %s: the attempt timed out after %s (attemptTimeout)", tool, attemptTimeout)}
		}
		return Attempt{Kind: FailureError, Msg: fmt.Sprintf("calling %s: %v", tool, err)}
	}
	out, content, msg, ok := stepOutput(res)
	if !ok {
		return Attempt{Kind: FailureToolError, Msg: fmt.Sprintf("%s returned an error: %s", tool, msg)}
	}
	return Attempt{OK: true, Output: out, Content: content}
}

// withRetries makes attempts until one succeeds or policy's retries are
// spent (see the top of the file). Only action retry has maxRetries (see
// prepareStep). Delays come from RetryPolicy.Delay with the clock's
// jitter, and the clock sleeps them.
func (r *runState) withRetries(ctx context.Context, sp, policy *stepPlan, notify func(index, attempt int, err *StepError), timeout time.Duration, attempt func(context.Context) (toolOutput, error)) (toolOutput, int, string) {
	p := policy.retryPolicy()
	clock := r.env.Clock
	tries := 0
	var last error
	gaveUp := false
	for {
		tries++
		var out toolOutput
		var err error
		if r.e.tracer == nil {
			out, err = attempt(ctx)
		} else {
			actx, span := r.startSpan(ctx, SpanStart{Kind: SpanAttempt, StepID: sp.id, Tool: sp.toolName(), Attempt: tries})
			out, err = attempt(actx)
			span.End(attemptEnd(err))
		}
		if err == nil {
			return out, tries, ""
		}
		last = err
		if tries >= p.MaxAttempts || ctx.Err() != nil {
			break
		}
		var ae *attemptError
		if errors.As(err, &ae) && !p.Retries(ae.kind) {
			return toolOutput{}, tries, r.failureMsg(ctx, timeout, err) + " (" + policy.tuning.notRetried(ae.kind) + ")"
		}
		delay := p.Delay(tries, clock.Jitter())
		if dl, ok := ctx.Deadline(); ok && clock.Now().Add(delay).After(dl) {
			gaveUp = true
			break
		}
		if notify != nil {
			notify(sp.index, tries+1, &StepError{Step: sp.id, Pos: sp.step.Pos, Msg: fmt.Sprintf("%v; retrying in %s", err, delay.Round(time.Millisecond))})
		}
		if clock.Sleep(ctx, delay) != nil {
			break
		}
	}
	msg := r.failureMsg(ctx, timeout, last)
	if gaveUp && ctx.Err() == nil {
		msg += gaveUpSuffix(tries)
	}
	return toolOutput{}, tries, msg
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
		return stoppedMsg(causeReason(r.endCause()), r.wp.timeout)
	}
	if ctx.Err() != nil {
		return timedOutMsg(timeout)
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
			return stepMsg{status: StepFailed, attempts: 1, err: templateStepError(sp.id, sp.message, err, "message")}
		}
		message = s
	}
	el := r.env.Elicitor
	if el == nil {
		return r.elicitOutcome(sp, sp.step.OnCancel, ElicitCancel, noElicitorWhy, "onCancel")
	}
	ectx, span := r.startSpan(ctx, SpanStart{Kind: SpanElicitation, StepID: sp.id})
	res, err := el.Elicit(ectx, ElicitRequest{RunID: r.run.ID, StepID: sp.id, Message: message, Schema: sp.step.Schema})
	if span != nil {
		end := SpanEnd{Status: res.Action}
		if err != nil {
			end = attemptEnd(err)
		}
		span.End(end)
	}
	if err != nil {
		r.noteTimeout(ctx)
		if r.ctx.Err() == nil && ctx.Err() != nil {
			return r.elicitOutcome(sp, sp.step.OnCancel, elicitTimeout, fmt.Sprintf("no answer within %s", sp.timeout), "onCancel")
		}
		if m := r.interruptMsg(ctx, sp.timeout); m != "" {
			return failed(sp, sp.step.Pos, m, 1)
		}
		return elicitFailed(sp, err)
	}
	return r.elicitAnswer(sp, res)
}

// elicitAnswer turns the user's answer into the step's end, recording
// who answered when that was not the client asked (res.By).
func (r *Machine) elicitAnswer(sp *stepPlan, res ElicitResult) stepMsg {
	m := r.elicitEnd(sp, res)
	if res.By == "" {
		return m
	}
	switch out, ok := m.output.(map[string]any); {
	case ok:
		out["answeredBy"] = res.By
	case m.err != nil:
		m.err.Msg += " (answered by " + res.By + ")"
	}
	return m
}

// elicitEnd is the step's end for the user's answer.
func (r *Machine) elicitEnd(sp *stepPlan, res ElicitResult) stepMsg {
	switch res.Action {
	case ElicitAccept:
		content := res.Content
		if content == nil {
			content = map[string]any{}
		}
		if err := checkAnswer(sp.answer, content); err != nil {
			return failed(sp, sp.step.Pos, err.Error(), 1)
		}
		return stepMsg{status: StepCompleted, output: map[string]any{"action": ElicitAccept, "content": content}, attempts: 1}
	case ElicitDecline:
		return r.elicitOutcome(sp, sp.step.OnDecline, ElicitDecline, "the user declined", "onDecline")
	case ElicitCancel:
		return r.elicitOutcome(sp, sp.step.OnCancel, ElicitCancel, "the user cancelled", "onCancel")
	}
	return failed(sp, sp.step.Pos, fmt.Sprintf("the client answered with unknown action %q", res.Action), 1)
}

// elicitTimeout is the action an elicitation's output records when no
// answer came within the step timeout (ToolHive's "timeout").
const elicitTimeout = "timeout"

// elicitOutcome applies a decline, cancel or timeout handler. reason is
// what the output's action records (decline, cancel or timeout).
func (r *Machine) elicitOutcome(sp *stepPlan, action, reason, why, handler string) stepMsg {
	switch action {
	case ir.ActionContinue:
		out := map[string]any{"action": reason}
		if d, ok := sp.step.DefaultResults.(map[string]any); ok {
			if c, has := d["content"]; has {
				out["content"] = deepCopy(c)
			}
		}
		return stepMsg{status: StepCompleted, output: out, attempts: 1, note: why}
	case ir.ActionSkipRemaining:
		out := map[string]any{"action": reason, "skipped": true}
		return stepMsg{status: StepCompleted, output: out, attempts: 1, note: why + "; skipping the remaining steps", skipRemaining: true}
	}
	m := failed(sp, sp.step.Pos, fmt.Sprintf("%s (%s: abort)", why, handler), 1)
	m.forceAbort = true
	m.note = noteElicitAbort
	return m
}
