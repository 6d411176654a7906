package trace

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/vmcp-dev/vmcp/runtime"
)

// TestResumedRunContinuesItsTrace: a run's span started with the trace
// and span of its earlier process (SpanStart.Resumed*) is in that trace,
// the child of that span, with the event vmcp.resumed; its SpanID is
// its own. A record whose trace cannot be read starts a new trace.
func TestResumedRunContinuesItsTrace(t *testing.T) {
	const traceID, earlier = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	exp := tracetest.NewInMemoryExporter()
	p, err := New(context.Background(), Settings{ServiceName: "t", Sampling: 1}, Options{Exporter: exp})
	if err != nil {
		t.Fatal(err)
	}
	_, span := p.Start(context.Background(), runtime.SpanStart{Kind: runtime.SpanRun, RunID: "r1", Workflow: "wf", ResumedTraceID: traceID, ResumedSpanID: earlier})
	own := span.(interface{ SpanID() string }).SpanID()
	span.End(runtime.SpanEnd{Status: "completed"})
	_, fresh := p.Start(context.Background(), runtime.SpanStart{Kind: runtime.SpanRun, RunID: "r2", Workflow: "wf", ResumedTraceID: "garbage", ResumedSpanID: earlier})
	fresh.End(runtime.SpanEnd{Status: "completed"})
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	s := spans[0]
	if s.SpanContext.TraceID().String() != traceID || s.Parent.SpanID().String() != earlier || s.SpanContext.SpanID().String() != own || own == earlier {
		t.Errorf("resumed span: trace %s parent %s id %s (SpanID %s); want trace %s, parent %s, an id of its own",
			s.SpanContext.TraceID(), s.Parent.SpanID(), s.SpanContext.SpanID(), own, traceID, earlier)
	}
	if len(s.Events) != 1 || s.Events[0].Name != EventResumed || len(s.Events[0].Attributes) != 1 || s.Events[0].Attributes[0].Value.AsString() != earlier {
		t.Errorf("resumed span's events %v; want one %s from %s", s.Events, EventResumed, earlier)
	}
	if f := spans[1]; f.SpanContext.TraceID().String() == traceID || f.Parent.IsValid() {
		t.Errorf("a record with an unreadable trace: trace %s parent %v; want a new trace", f.SpanContext.TraceID(), f.Parent)
	}
}
