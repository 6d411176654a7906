package trace

// The Temporal executor's spans: the Temporal SDK's OpenTelemetry
// interceptor (go.temporal.io/sdk/contrib/opentelemetry) over this
// provider's tracer and propagator. Set on a Temporal client's options,
// it makes the client's spans (StartWorkflow, ...) and carries the span
// in the caller's context into the workflow's header; the workers made
// from that client use it too (it is also a worker interceptor), and make
// the workflow's and the activities' spans from the header, so the
// workers' spans, on any worker, join the run's trace
// (temporalrun/trace.go draws the tree).

import (
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
)

// TemporalInterceptor is the interceptor to put in a Temporal client's
// Interceptors.
func (p *Provider) TemporalInterceptor() (interceptor.ClientInterceptor, error) {
	return temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{
		Tracer:            p.tracer,
		TextMapPropagator: p.prop,
		// The runner queries the workflow after each of its tasks
		// (temporalrun/follow.go): a span per query would bury the run's.
		DisableQueryTracing: true,
	})
}
