package trace

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/vmcp-dev/vmcp/runtime"
)

// loopOf3 makes the spans the engine makes for a run with a loop of three
// iterations, each an attempt with a backend call; iteration 1 fails, and
// each iteration lasts at least hold.
func loopOf3(p *Provider, hold time.Duration) {
	ctx, run := p.Start(context.Background(), runtime.SpanStart{Kind: runtime.SpanRun, RunID: "r", Workflow: "w"})
	lctx, loop := p.Start(ctx, runtime.SpanStart{Kind: runtime.SpanLoop, StepID: "l"})
	for i := range 3 {
		ictx, it := p.Start(lctx, runtime.SpanStart{Kind: runtime.SpanIteration, StepID: "l", Index: i, Item: "x"})
		actx, at := p.Start(ictx, runtime.SpanStart{Kind: runtime.SpanAttempt, StepID: "s", Tool: "b.t", Attempt: 1})
		_, call := p.tracer.Start(actx, "tools/call t")
		call.End()
		var end runtime.SpanEnd
		if i == 1 {
			end = runtime.SpanEnd{Status: "failed", Err: "boom"}
		}
		at.End(end)
		time.Sleep(hold)
		it.End(end)
	}
	loop.End(runtime.SpanEnd{Status: "completed", Count: 3, Completed: 2, Failed: 1})
	run.End(runtime.SpanEnd{Status: "completed"})
}

func TestIterationFilter(t *testing.T) {
	tests := []struct {
		name       string
		slow, hold time.Duration
		iterations int // kept
	}{
		{name: "fast: only the failed iteration is kept", slow: time.Hour, iterations: 1},
		{name: "slow: every iteration is kept", slow: time.Millisecond, hold: 2 * time.Millisecond, iterations: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			p, err := New(context.Background(), Settings{ServiceName: "t", Sampling: 1}, Options{Exporter: exp, SlowIteration: tt.slow})
			if err != nil {
				t.Fatal(err)
			}
			loopOf3(p, tt.hold)
			if err := p.ForceFlush(context.Background()); err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			var errors int
			for _, s := range exp.GetSpans() {
				got[s.Name]++
				if s.Name == "vmcp.iteration l" && s.Status.Code == codes.Error {
					errors++
					for _, a := range s.Attributes {
						if a.Key == AttrLoopIndex && a.Value.AsInt64() != 1 {
							t.Errorf("the failed iteration has index %d, want 1", a.Value.AsInt64())
						}
					}
				}
			}
			n := tt.iterations
			want := map[string]int{"vmcp.run": 1, "vmcp.loop l": 1, "vmcp.iteration l": n, "vmcp.step s": n, "tools/call t": n}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%d spans %q, want %d (all: %v)", got[k], k, v, got)
				}
			}
			if errors != 1 {
				t.Errorf("%d iterations with status Error, want 1", errors)
			}
			p.filter.mu.Lock()
			held := len(p.filter.groups)
			p.filter.mu.Unlock()
			if held != 0 {
				t.Errorf("%d spans still in groups after every iteration ended", held)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name string
		set  bool
		env  func(string) string
		on   bool
		want Settings
	}{
		{name: "nothing: off", env: env()},
		{name: "the section alone", set: true, env: env(), on: true, want: Settings{Protocol: "grpc", ServiceName: "vmcp", Sampling: 1}},
		{name: "OTEL_ endpoint alone", env: env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf", "OTEL_SERVICE_NAME", "gw", "OTEL_TRACES_SAMPLER_ARG", "0.25"),
			on: true, want: Settings{Protocol: "http", ServiceName: "gw", Sampling: 0.25}},
		{name: "OTEL_SDK_DISABLED wins", set: true, env: env("OTEL_SDK_DISABLED", "true")},
		{name: "OTEL_TRACES_EXPORTER none wins", set: true, env: env("OTEL_TRACES_EXPORTER", "none")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cfg = configTelemetry(tt.set)
			s, on, err := Resolve(cfg, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if on != tt.on || s != tt.want {
				t.Errorf("Resolve = %+v, %v; want %+v, %v", s, on, tt.want, tt.on)
			}
		})
	}
	if _, _, err := Resolve(configTelemetry(true), env("OTEL_TRACES_SAMPLER_ARG", "2")); err == nil {
		t.Error("OTEL_TRACES_SAMPLER_ARG 2: no error")
	}
}
