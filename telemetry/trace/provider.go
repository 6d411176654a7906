package trace

// The provider: the OpenTelemetry SDK's tracer provider (parent-based
// sampling at Settings.Sampling, the iteration filter in front of a batch
// processor, an OTLP exporter over gRPC or HTTP) and the engine's span
// hooks (runtime.Tracer), which name each span by its kind (see the
// package doc) and put vmcp's attributes on it: those known at the start
// when it starts, its outcome (status, a loop's counts) when it ends. A
// failed span records its error as an exception event and status Error.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/runtime"
)

// instrumentation is the name of vmcp's tracer (the instrumentation scope).
const instrumentation = "github.com/vmcp-dev/vmcp"

// DefaultSlowIteration is how long an iteration takes before its spans are
// exported although it succeeded.
const DefaultSlowIteration = time.Second

// Options tune a Provider beyond Settings.
type Options struct {
	// SlowIteration: a successful iteration that took less is not
	// exported (see the package doc); 0 means DefaultSlowIteration.
	SlowIteration time.Duration
	// Exporter, when set, replaces the OTLP exporter (tests, benchmarks).
	Exporter sdktrace.SpanExporter
	// Version is vmcp's version (service.version).
	Version string
	// InstanceID names this process among the service's
	// (service.instance.id): a Temporal worker's identity. Empty: none.
	InstanceID string
}

// Provider makes vmcp's spans and exports them. It implements
// runtime.Tracer.
type Provider struct {
	settings Settings
	tp       *sdktrace.TracerProvider
	tracer   oteltrace.Tracer
	prop     propagation.TextMapPropagator
	filter   *iterationFilter
}

// New starts the exporter and the SDK's tracer provider for s.
func New(ctx context.Context, s Settings, opts Options) (*Provider, error) {
	exp := opts.Exporter
	if exp == nil {
		var err error
		if exp, err = exporter(ctx, s); err != nil {
			return nil, err
		}
	}
	attrs := []attribute.KeyValue{semconv.ServiceName(s.ServiceName), semconv.ServiceVersion(opts.Version)}
	if opts.InstanceID != "" {
		attrs = append(attrs, semconv.ServiceInstanceID(opts.InstanceID))
	}
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithAttributes(attrs...))
	if err != nil && res == nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	slow := opts.SlowIteration
	if slow <= 0 {
		slow = DefaultSlowIteration
	}
	sampler := sdktrace.ParentBased(sdktrace.TraceIDRatioBased(s.Sampling))
	filter := newIterationFilter(sdktrace.NewBatchSpanProcessor(exp), slow)
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sampler),
		sdktrace.WithSpanProcessor(filter),
	)
	return &Provider{
		filter:   filter,
		settings: s,
		tp:       tp,
		tracer:   tp.Tracer(instrumentation),
		prop:     propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}, nil
}

// exporter is the OTLP exporter of s.
func exporter(ctx context.Context, s Settings) (sdktrace.SpanExporter, error) {
	url := strings.HasPrefix(s.Endpoint, "http://") || strings.HasPrefix(s.Endpoint, "https://")
	if s.Protocol == config.OTLPHTTP {
		var o []otlptracehttp.Option
		switch {
		case url:
			o = append(o, otlptracehttp.WithEndpointURL(withTracesPath(s.Endpoint)))
		case s.Endpoint != "":
			o = append(o, otlptracehttp.WithEndpoint(s.Endpoint))
		}
		if s.Insecure {
			o = append(o, otlptracehttp.WithInsecure())
		}
		return otlptracehttp.New(ctx, o...)
	}
	var o []otlptracegrpc.Option
	switch {
	case url:
		o = append(o, otlptracegrpc.WithEndpointURL(s.Endpoint))
	case s.Endpoint != "":
		o = append(o, otlptracegrpc.WithEndpoint(s.Endpoint))
	}
	if s.Insecure {
		o = append(o, otlptracegrpc.WithInsecure())
	}
	return otlptracegrpc.New(ctx, o...)
}

// withTracesPath adds OTLP's /v1/traces to a URL without a path, as
// OTEL_EXPORTER_OTLP_ENDPOINT is read.
func withTracesPath(u string) string {
	rest := u[strings.Index(u, "//")+2:]
	if !strings.Contains(rest, "/") {
		return strings.TrimRight(u, "/") + "/v1/traces"
	}
	return u
}

// Settings are the provider's settings.
func (p *Provider) Settings() Settings { return p.settings }

// Tracer is the provider's tracer (vmcp's instrumentation scope), and
// Propagator the propagator it injects and extracts with (W3C trace
// context and baggage): what an adapter's own instrumentation needs to
// join vmcp's traces (temporalrun.TracingInterceptor).
func (p *Provider) Tracer() oteltrace.Tracer { return p.tracer }

// Propagator: see Tracer.
func (p *Provider) Propagator() propagation.TextMapPropagator { return p.prop }

// Shutdown exports the spans still held and stops the exporter.
func (p *Provider) Shutdown(ctx context.Context) error { return p.tp.Shutdown(ctx) }

// ForceFlush exports the spans ended so far.
func (p *Provider) ForceFlush(ctx context.Context) error { return p.tp.ForceFlush(ctx) }

// Attribute keys of vmcp's spans.
const (
	AttrRunID       = "vmcp.run.id"
	AttrWorkflow    = "vmcp.workflow"
	AttrRunStatus   = "vmcp.run.status"
	AttrParentRun   = "vmcp.run.parent_id"
	AttrParentStep  = "vmcp.run.parent_step"
	AttrTrigger     = "vmcp.run.trigger" // schedule:NAME, rerun:ID
	AttrStepID      = "vmcp.step.id"
	AttrStepTool    = "vmcp.step.tool"
	AttrAttempt     = "vmcp.step.attempt"
	AttrStepStatus  = "vmcp.step.status"
	AttrLoopIndex   = "vmcp.loop.index"
	AttrLoopItem    = "vmcp.loop.item"
	AttrLoopCount   = "vmcp.loop.count"
	AttrLoopDone    = "vmcp.loop.completed"
	AttrLoopFailed  = "vmcp.loop.failed"
	AttrLoopSkipped = "vmcp.loop.skipped"
	AttrBackend     = "vmcp.backend"
	AttrElicit      = "vmcp.elicitation.action"
	// AttrResumedFrom is, on a resumed run's span and its vmcp.resumed
	// event, the span id of the run's span in the process that stopped.
	AttrResumedFrom = "vmcp.run.resumed_from"
)

// EventResumed is the event at the start of a resumed run's span.
const EventResumed = "vmcp.resumed"

// startResumed starts the span of a run that Resume continues after the
// process that ran it stopped (a crash, a SIGKILL): the earlier span never
// ended, so it was never exported, but its trace id and span id are in the
// run's record. The new span is in that trace, the child of that span
// (so the steps the earlier process finished and the ones resumed are
// one tree), and starts with the event vmcp.resumed. (Not also a link to
// it: Jaeger keeps one reference per span, and shows a link to the
// parent as the only one, FOLLOWS_FROM, losing the parent.) A record
// whose trace cannot be read starts a new trace.
func (p *Provider) startResumed(ctx context.Context, s runtime.SpanStart, attrs []attribute.KeyValue) (context.Context, runtime.Span) {
	tid, terr := oteltrace.TraceIDFromHex(s.ResumedTraceID)
	sid, serr := oteltrace.SpanIDFromHex(s.ResumedSpanID)
	if terr == nil && serr == nil {
		earlier := oteltrace.NewSpanContext(oteltrace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: oteltrace.FlagsSampled, Remote: true})
		ctx = oteltrace.ContextWithRemoteSpanContext(ctx, earlier)
		attrs = append(attrs, attribute.String(AttrResumedFrom, s.ResumedSpanID))
	}
	ctx, span := p.tracer.Start(ctx, "vmcp.run", oteltrace.WithAttributes(attrs...))
	span.AddEvent(EventResumed, oteltrace.WithAttributes(attribute.String(AttrResumedFrom, s.ResumedSpanID)))
	return ctx, &engineSpan{span: span, kind: runtime.SpanRun}
}

// iterationKey holds, in an iteration's context, its index and label,
// which the attempts started in it carry.
type iterationKey struct{}

type iteration struct {
	index int
	item  string
}

// Start implements runtime.Tracer. Under a span that is not sampled
// (sampling < 1 said no for this trace), it starts nothing: the
// children of an unsampled span are not recorded either (the sampler is
// parent-based), and the calls below go on with the unsampled parent's
// context, so a backend hears that the trace is not sampled.
func (p *Provider) Start(ctx context.Context, s runtime.SpanStart) (context.Context, runtime.Span) {
	if unsampled(ctx) {
		if s.Kind == runtime.SpanRun {
			return ctx, unsampledSpan{ctx}
		}
		return ctx, noSpan{} // no allocation
	}
	var name string
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, attribute.String(AttrRunID, s.RunID), attribute.String(AttrWorkflow, s.Workflow))
	switch s.Kind {
	case runtime.SpanRun:
		name = "vmcp.run"
		if s.ParentRunID != "" {
			attrs = append(attrs, attribute.String(AttrParentRun, s.ParentRunID), attribute.String(AttrParentStep, s.ParentStep))
		}
		if s.Trigger != "" {
			attrs = append(attrs, attribute.String(AttrTrigger, s.Trigger))
		}
		if s.ResumedTraceID != "" {
			return p.startResumed(ctx, s, attrs)
		}
	case runtime.SpanAttempt:
		name = "vmcp.step " + s.StepID
		attrs = append(attrs, attribute.String(AttrStepID, s.StepID), attribute.String(AttrStepTool, s.Tool), attribute.Int(AttrAttempt, s.Attempt))
		if it, ok := ctx.Value(iterationKey{}).(iteration); ok {
			attrs = append(attrs, attribute.Int(AttrLoopIndex, it.index), attribute.String(AttrLoopItem, it.item))
		}
	case runtime.SpanLoop:
		name = "vmcp.loop " + s.StepID
		attrs = append(attrs, attribute.String(AttrStepID, s.StepID))
	case runtime.SpanIteration:
		name = iterationPrefix + s.StepID
		attrs = append(attrs, attribute.String(AttrStepID, s.StepID), attribute.Int(AttrLoopIndex, s.Index), attribute.String(AttrLoopItem, s.Item))
		ctx = context.WithValue(ctx, iterationKey{}, iteration{s.Index, s.Item})
	case runtime.SpanElicitation:
		name = "vmcp.elicitation " + s.StepID
		attrs = append(attrs, attribute.String(AttrStepID, s.StepID))
	default:
		name = "vmcp.span"
	}
	ctx, span := p.tracer.Start(ctx, name, oteltrace.WithAttributes(attrs...))
	return ctx, &engineSpan{span: span, kind: s.Kind}
}

// iterationPrefix starts the name of an iteration's span; the filter
// knows iterations by it.
const iterationPrefix = "vmcp.iteration "

type engineSpan struct {
	span oteltrace.Span
	kind runtime.SpanKind
}

// SpanID is the span's id, which the engine records on the run.
func (s *engineSpan) SpanID() string {
	sc := s.span.SpanContext()
	if !sc.HasSpanID() {
		return ""
	}
	return sc.SpanID().String()
}

func (s *engineSpan) TraceID() string {
	sc := s.span.SpanContext()
	if !sc.HasTraceID() {
		return ""
	}
	return sc.TraceID().String()
}

func (s *engineSpan) End(e runtime.SpanEnd) {
	sp := s.span
	if !sp.IsRecording() {
		sp.End()
		return
	}
	switch s.kind {
	case runtime.SpanRun:
		sp.SetAttributes(attribute.String(AttrRunStatus, e.Status))
	case runtime.SpanLoop:
		sp.SetAttributes(attribute.String(AttrStepStatus, e.Status),
			attribute.Int64(AttrLoopCount, e.Count), attribute.Int64(AttrLoopDone, e.Completed),
			attribute.Int64(AttrLoopFailed, e.Failed), attribute.Int64(AttrLoopSkipped, e.Skipped))
	case runtime.SpanElicitation:
		sp.SetAttributes(attribute.String(AttrElicit, e.Status))
	default:
		sp.SetAttributes(attribute.String(AttrStepStatus, e.Status))
	}
	if e.Err != "" || e.Status == string(runtime.RunFailed) || e.Status == string(runtime.RunTimedOut) || e.Status == string(runtime.RunCancelled) || e.Status == string(runtime.RunInterrupted) {
		msg := e.Err
		if msg == "" {
			msg = e.Status
		}
		sp.RecordError(errors.New(msg))
		sp.SetStatus(codes.Error, msg)
	}
	sp.End()
}

// unsampled reports whether ctx holds a span that is not sampled.
func unsampled(ctx context.Context) bool {
	sc := oteltrace.SpanContextFromContext(ctx)
	return sc.IsValid() && !sc.IsSampled()
}

// unsampledSpan stands for a span not started under an unsampled parent.
type unsampledSpan struct{ ctx context.Context }

func (unsampledSpan) End(runtime.SpanEnd) {}

// noSpan is unsampledSpan for the spans whose trace id nobody asks.
type noSpan struct{}

func (noSpan) End(runtime.SpanEnd)      {}
func (noSpan) TraceID() string          { return "" }
func (s unsampledSpan) TraceID() string { return TraceID(s.ctx) }

// TraceID is the trace id (hex) of the span in ctx, or "".
func TraceID(ctx context.Context) string {
	sc := oteltrace.SpanContextFromContext(ctx)
	if !sc.HasTraceID() {
		return ""
	}
	return sc.TraceID().String()
}
