package runtime

// Tracing hooks. The engine does not know OpenTelemetry: it tells a
// Tracer (Options.Tracer) where the spans of a run begin and end, and the
// Tracer (telemetry/trace) makes them. The spans nest through the
// contexts Start returns: the run's context holds the run's span, each
// step's attempts start from it, a backend call made with an attempt's
// context is that attempt's child (the Backend decorator of
// telemetry/trace makes the client span), and a workflow step's child run
// starts from its attempt's context, so it is that attempt's child.
//
// With no Tracer (the default) every hook is one nil check: nothing is
// allocated and no context is made.
//
// Spans, by kind:
//   SpanRun          a run, from newRunState to finishRun
//   SpanAttempt      one attempt of a tool or workflow step (the inner
//                    step of a forEach and a body's steps too)
//   SpanLoop         a forEach step; it ends with the iteration counts
//   SpanIteration    one iteration of a forEach (the Tracer may drop the
//                    fast, successful ones: see telemetry/trace)
//   SpanElicitation  the wait for a user's answer to an elicitation step

import "context"

// Tracer starts the spans of runs. Implementations must be safe for
// concurrent use.
type Tracer interface {
	// Start begins a span as a child of the span in ctx (or of the
	// caller's trace it carries) and returns the context that holds the
	// new span, and the span.
	Start(ctx context.Context, s SpanStart) (context.Context, Span)
}

// Span is a started span.
type Span interface {
	// End ends the span with its outcome.
	End(SpanEnd)
	// TraceID is the span's trace id, in hex ("" when none).
	TraceID() string
}

// A Span may also have a SpanID() string method: its own id, in hex,
// which the engine records on a run (Run.SpanID) so that a resumed run
// continues the trace.

// SpanKind says what a span stands for.
type SpanKind uint8

const (
	SpanRun SpanKind = iota + 1
	SpanAttempt
	SpanLoop
	SpanIteration
	SpanElicitation
)

// SpanStart describes a span when it starts.
type SpanStart struct {
	Kind     SpanKind
	RunID    string
	Workflow string
	// StepID is the step's id (empty for SpanRun).
	StepID string
	// Tool is what an attempt calls: the backend tool (backend.tool), or
	// for a workflow step the callee workflow's name.
	Tool string
	// Attempt counts a step's attempts from 1.
	Attempt int
	// Index and Item are an iteration's index and its label
	// (IterationLabel).
	Index int
	Item  string
	// ParentRunID and ParentStep link a child run to its parent's step.
	ParentRunID, ParentStep string
	// Trigger is a run's Trigger: what started it when no client's call
	// did (schedule:NAME, rerun:ID).
	Trigger string
	// ResumedTraceID and ResumedSpanID are, for a run that Resume
	// continues, the trace and span of the run's span in the process that
	// stopped (Run.TraceID, Run.SpanID, from the store): the Tracer
	// continues that trace.
	ResumedTraceID, ResumedSpanID string
}

// SpanEnd is a span's outcome: the status ("completed", "failed",
// "cancelled"... a StepStatus or RunStatus) and the error when it
// failed; a loop's iteration counts.
type SpanEnd struct {
	Status string
	Err    string
	// Count, Completed, Failed and Skipped are a loop's iterations.
	Count, Completed, Failed, Skipped int64
}

// startSpan starts a span when the engine has a tracer; otherwise it
// returns ctx and a nil Span.
func (r *Machine) startSpan(ctx context.Context, s SpanStart) (context.Context, Span) {
	t := r.e.tracer
	if t == nil {
		return ctx, nil
	}
	s.RunID, s.Workflow = r.run.ID, r.wp.wf.Name
	return t.Start(ctx, s)
}

// attemptEnd is the outcome of an attempt.
func attemptEnd(err error) SpanEnd {
	if err != nil {
		return SpanEnd{Status: string(StepFailed), Err: err.Error()}
	}
	return SpanEnd{Status: string(StepCompleted)}
}

// loopEnd is a forEach step's outcome with its iteration counts.
func loopEnd(m stepMsg) SpanEnd {
	end := SpanEnd{Status: string(m.status)}
	if m.err != nil {
		end.Err = m.err.Msg
	}
	if out, ok := m.output.(map[string]any); ok {
		end.Count, _ = out["count"].(int64)
		end.Completed, _ = out["completed"].(int64)
		end.Failed, _ = out["failed"].(int64)
		end.Skipped, _ = out["skipped"].(int64)
	}
	return end
}

// toolName is what an attempt of sp calls.
func (sp *stepPlan) toolName() string {
	if sp.callee != nil {
		return sp.callee.wf.Name
	}
	if sp.step.Tool != nil {
		return sp.step.Tool.String()
	}
	return ""
}

// iterationEnd is an iteration's outcome.
func iterationEnd(skipped bool, serr *StepError) SpanEnd {
	switch {
	case serr != nil:
		return SpanEnd{Status: string(StepFailed), Err: serr.Msg}
	case skipped:
		return SpanEnd{Status: string(StepSkipped)}
	}
	return SpanEnd{Status: string(StepCompleted)}
}
