// Package trace exports vmcp's runs as OpenTelemetry traces over OTLP
// (design.md "Tracing (OpenTelemetry)").
//
// In: the telemetry: section of vmcp.yaml (config.Telemetry) and the
// standard OTEL_* variables (Resolve); the engine's span hooks
// (runtime.Tracer); each backend call (Backend, a toolcall.Backend
// decorator); the caller's trace context of an MCP request (Extract).
// Out: spans, through the OpenTelemetry SDK's batch processor and its
// OTLP exporter (gRPC or HTTP), to a collector or a Jaeger; the W3C
// trace context of each backend call (toolcall.WithTrace), which
// mcpclient sends in params._meta and as HTTP headers; trace_id and
// span_id on the log lines made with a traced context (LogHandler).
//
// The spans of a run:
//
//	vmcp.run                       the run (vmcp.workflow, vmcp.run.id, status)
//	  vmcp.step <id>               one attempt of a tool or workflow step
//	    tools/call <tool>          the backend call, a client span (MCP semconv)
//	    vmcp.run                   a workflow step's child run
//	  vmcp.loop <id>               a forEach step, with its iteration counts
//	    vmcp.iteration <id>        an iteration that failed or was slow
//	      vmcp.step <inner id>     ... and what it ran
//	  vmcp.elicitation <id>        the wait for the user's answer
//
// Loops: a forEach of thousands of iterations would bury the trace under
// thousands of identical, fast, successful subtrees, so an iteration's
// subtree is exported only when the iteration failed or took at least
// the slow threshold (default 1s, Options.SlowIteration); the loop's span
// counts them all (vmcp.loop.count, completed, failed, skipped). The
// iteration's spans are held in memory until it ends (iterationFilter).
// A backend that traces still gets the trace context of each call, so
// its own spans of a dropped iteration point at a parent that is not in
// the trace.
//
// A run that Resume continues after a crash continues its trace: its
// span is the child of the stopped process's run span, whose trace and
// span ids the run's record keeps, with the event vmcp.resumed
// (startResumed). On the Temporal executor,
// temporalrun.TracingInterceptor puts the Temporal SDK's OpenTelemetry
// interceptor over this provider's Tracer and Propagator: the workers'
// workflow and activity spans join the run's trace (temporalrun/trace.go
// draws that tree). It lives there so that tracing does not link the
// Temporal SDK into every program that traces.
//
// Off (no section, no OTEL_* endpoint) nothing of this package is
// called: the engine's Tracer and the Backend decorator are not
// installed.
//
// Entry points: Resolve, New, Provider.Backend, Provider.Tracer,
// Extract, LogHandler.
package trace
