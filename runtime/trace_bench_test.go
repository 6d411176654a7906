package runtime_test

// BenchmarkRunTracing is BenchmarkRun's shapes with tracing off (no
// Tracer: what vmcp runs without telemetry:) and on, with sampling 1 and
// 0.01, through the real OpenTelemetry SDK (telemetry/trace, its batch
// processor and the iteration filter) to an exporter that discards the
// spans, so the numbers are vmcp's and the SDK's cost, not a network's.
// Compare "off" with BenchmarkRun of a build without the hooks to see
// that off costs nothing; the per-span cost is (on - off) / spans per run.

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/telemetry/trace"
)

func BenchmarkRunTracing(b *testing.B) {
	b.Run("off", func(b *testing.B) { runtime.RunBenchmark(b, nil) })
	for _, c := range []struct {
		name     string
		sampling float64
	}{{"sampling=1", 1}, {"sampling=0.01", 0.01}} {
		b.Run(c.name, func(b *testing.B) {
			p, err := trace.New(context.Background(), trace.Settings{ServiceName: "bench", Sampling: c.sampling},
				trace.Options{Exporter: tracetest.NewNoopExporter()})
			if err != nil {
				b.Fatal(err)
			}
			defer p.Shutdown(context.Background())
			runtime.RunBenchmark(b, func(o *runtime.Options) {
				o.Tracer = p
				o.Backend = p.Backend(o.Backend)
			})
		})
	}
}
