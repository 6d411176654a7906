package console

import (
	"context"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/runtime"
)

// fixedTracer gives every run the same trace id, as a tracer would.
type fixedTracer struct{}

const fixedTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"

func (fixedTracer) Start(ctx context.Context, _ runtime.SpanStart) (context.Context, runtime.Span) {
	return ctx, fixedSpan{}
}

type fixedSpan struct{}

func (fixedSpan) End(runtime.SpanEnd) {}
func (fixedSpan) TraceID() string     { return fixedTraceID }

// TestRunPageLinksItsTrace: with TraceURL, a traced run's page links its
// trace; without it, the page names the trace id.
func TestRunPageLinksItsTrace(t *testing.T) {
	plan, diags := compiler.Compile([]compiler.Source{{Name: "wf.yaml", Src: []byte(testWorkflows)}}, compiler.Options{})
	if diags.HasErrors() {
		t.Fatalf("compile: %v", diags)
	}
	for _, withURL := range []bool{true, false} {
		f := &fixture{store: runtime.NewMemoryStore(0), backend: &fakeBackend{release: make(chan struct{}), started: make(chan struct{}, 10)}}
		eng, err := runtime.New(plan, runtime.Options{Backend: f.backend, Store: f.store, Tracer: fixedTracer{}})
		if err != nil {
			t.Fatal(err)
		}
		f.engine = eng
		opts := Options{Engine: eng, Store: f.store, Now: f.clock}
		if withURL {
			opts.TraceURL = func(id string) string { return "http://jaeger.example/trace/" + id }
		}
		if f.c, err = New(opts); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(f.c.Close)
		run := f.run(t, "other", map[string]any{"who": "ada"})
		if run.TraceID != fixedTraceID {
			t.Fatalf("run trace id %q, want %s", run.TraceID, fixedTraceID)
		}
		html := body(t, f.get(t, "/ui/runs/"+run.ID))
		want := `<dd class="mono" data-trace="` + fixedTraceID + `">` + fixedTraceID + `</dd>`
		if withURL {
			want = `<a class="mono" href="http://jaeger.example/trace/` + fixedTraceID + `" data-trace="` + fixedTraceID + `">`
		}
		if !strings.Contains(html, want) {
			t.Errorf("withURL %v: the run's page lacks %s:\n%s", withURL, want, html)
		}
	}
}
