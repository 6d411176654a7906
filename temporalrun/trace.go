package temporalrun

// Tracing on Temporal. The runner makes each run's span (vmcp.run) with
// RunnerOptions.Tracer, as the local engine does, and starts the
// workflow with that span in its context. The Temporal SDK's OpenTelemetry
// interceptor (go.temporal.io/sdk/contrib/opentelemetry, which
// TracingInterceptor makes for the client's options, and so for the
// workers made from that client) writes the span into the workflow's header and makes the
// SDK's spans under it:
//
//	vmcp.run                           the runner (vmcp run)
//	  StartWorkflow:vmcp.run           the runner's client
//	    RunWorkflow:vmcp.run           a worker's workflow, one per worker
//	                                   that loaded it (a replay too)
//	      StartActivity:vmcp.callTool  the workflow schedules a call
//	        RunActivity:vmcp.callTool  one attempt, on the worker that ran it
//	          tools/call <tool>        the backend call (trace.Backend)
//
// (vmcp.executeStep for a step run whole.) The runner's queries of the
// workflow are not traced (one per workflow task would bury the run).
// Each attempt's RunActivity span gets vmcp's attributes here: the run,
// the step, the tool, vmcp's attempt and Temporal's (from 1; a worker
// that died in the call makes Temporal try again, on another worker).
// Which worker ran it is the span's process (service.instance.id, the
// worker's identity, set by vmcp worker). A SIGKILLed worker never ends
// the spans it had open, its RunWorkflow and its attempt in flight, so
// those are lost: what it ended (its StartActivity spans, finished
// attempts) stays in the trace, under its lost RunWorkflow, and the
// attempt it died in shows as the gap before the next one, whose Temporal
// attempt is 2, under the same StartActivity.

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	oteltrace "go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/activity"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"

	"github.com/vmcp-dev/vmcp/runtime"
)

// Attribute keys on the activity spans: the same as telemetry/trace's
// (AttrRunID, AttrStepID, AttrStepTool, AttrAttempt, AttrBackend), which
// this adapter does not import.
const (
	attrRunID    = "vmcp.run.id"
	attrStepID   = "vmcp.step.id"
	attrStepTool = "vmcp.step.tool"
	attrAttempt  = "vmcp.step.attempt"
	attrBackend  = "vmcp.backend"
	// attrActivityAttempt is Temporal's attempt of the activity.
	attrActivityAttempt = "temporal.activity.attempt"
)

// TracingInterceptor is the interceptor to put in a Temporal client's
// Interceptors when vmcp traces: the SDK's OpenTelemetry interceptor over
// vmcp's tracer and propagator (telemetry/trace Provider.Tracer and
// Propagator). It is also a worker interceptor, so the workers made from
// that client make their workflow and activity spans from the header,
// under the run's span.
func TracingInterceptor(tracer oteltrace.Tracer, prop propagation.TextMapPropagator) (interceptor.ClientInterceptor, error) {
	return temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{
		Tracer:            tracer,
		TextMapPropagator: prop,
		// The runner queries the workflow after each of its tasks
		// (follow.go): a span per query would bury the run's.
		DisableQueryTracing: true,
	})
}

// startSpan starts run's span when the runner traces and records its
// trace id on run.
func (r *Runner) startSpan(ctx context.Context, run *runtime.Run) (context.Context, runtime.Span) {
	if r.opts.Tracer == nil {
		return ctx, nil
	}
	ctx, span := r.opts.Tracer.Start(ctx, runtime.SpanStart{
		Kind: runtime.SpanRun, RunID: run.ID, Workflow: run.Workflow,
		ParentRunID: run.ParentID, ParentStep: run.ParentStep, Trigger: run.Trigger,
	})
	run.TraceID = span.TraceID()
	if s, ok := span.(interface{ SpanID() string }); ok {
		run.SpanID = s.SpanID()
	}
	return ctx, span
}

// endSpan ends a run's span with the run's outcome, or with err when
// there is no final run (the runner stopped following it, or it could
// not start).
func endSpan(span runtime.Span, final *runtime.Run, err error) {
	if span == nil {
		return
	}
	switch {
	case final != nil:
		span.End(runtime.SpanEnd{Status: string(final.Status), Err: errString(final.Error)})
	case err == ErrDetached:
		span.End(runtime.SpanEnd{Status: string(runtime.RunInterrupted), Err: err.Error()})
	default:
		span.End(runtime.SpanEnd{Status: string(runtime.RunFailed), Err: err.Error()})
	}
}

// annotateAttempt puts vmcp's attributes on the activity attempt's span
// (the interceptor's RunActivity span, in ctx), when there is one.
// attempt is vmcp's attempt (0 when the activity runs a step whole).
func annotateAttempt(ctx context.Context, runID, stepID, backend, tool string, attempt int) {
	span := oteltrace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{
		attribute.String(attrRunID, runID), attribute.String(attrStepID, stepID),
		attribute.Int(attrActivityAttempt, int(activity.GetInfo(ctx).Attempt)),
	}
	if attempt > 0 {
		attrs = append(attrs, attribute.Int(attrAttempt, attempt))
	}
	if tool != "" {
		attrs = append(attrs, attribute.String(attrBackend, backend), attribute.String(attrStepTool, backend+"."+tool))
	}
	span.SetAttributes(attrs...)
}
