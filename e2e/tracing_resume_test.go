package e2e

// A resumed run continues its trace, end to end: a real `vmcp run` with
// the SQLite store and a telemetry: section exports to a real Jaeger; it
// is SIGKILLed while step s4 of the chain is in the backend, and started
// again on the same database, where it resumes the run. The run's span of
// the killed process never ended (so Jaeger never got it), but its trace
// id and span id are in the run's record: the resumed run's span is in
// the same trace, the child of that span, with the event
// vmcp.resumed; s1-s3 (the killed process's) and s4-s5 (the resumed
// run's) are one tree under the lost span.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/runtime"
)

func TestTracingJaegerResumeAfterSIGKILL(t *testing.T) {
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100") // vmcp exports every 100ms
	j := testenv.StartJaeger(t, traceNewLo, traceNewHi)
	text := strings.NewReplacer("${S4TOOL}", "gated", "${IDEMPOTENT}", "true").Replace(resumeConfig)
	text = strings.Replace(text, "compositeTools:", fmt.Sprintf("telemetry:\n  otlp: {endpoint: %q, protocol: grpc, insecure: true}\n  serviceName: vmcp-e2e\ncompositeTools:", j.OTLPGRPC), 1)
	p, cfg, rec := killableOn(t, text, traceNewLo, traceNewHi)
	gate := filepath.Join(filepath.Dir(cfg), "open-s4")

	id := startExtensionTask(t, p.base)
	for deadline := time.Now().Add(60 * time.Second); backendCalls(t, rec)["s4"] != 1; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("s4 not in flight within 60s; backend calls %v\nstderr:\n%s", backendCalls(t, rec), p.stderr.String())
		}
	}
	var before httpapi.RunDetail
	p.getJSON(t, "/api/v1/runs/"+id, &before)
	if before.TraceID == "" || before.Status != runtime.RunRunning {
		t.Fatalf("the run before the kill: status %s, trace id %q; want running, traced", before.Status, before.TraceID)
	}
	// s1-s3 ended in the first process: wait until it exported them.
	var tr testenv.JaegerTrace
	waitFor(t, "s1-s3 of the first process in Jaeger", func() bool {
		tr, _ = j.Trace(before.TraceID)
		return len(spansNamed(tr, "vmcp.step s3")) == 1
	})
	lost := spansNamed(tr, "vmcp.step s1")[0].Parent() // the first process's run span

	p.kill(t)
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p = p.restart(t)
	after := waitFinished(t, p, id)
	if after.Status != runtime.RunCompleted || after.TraceID != before.TraceID {
		t.Fatalf("the resumed run: status %s, trace id %q; want completed, in trace %s\nstderr:\n%s", after.Status, after.TraceID, before.TraceID, p.stderr.String())
	}
	waitFor(t, "the resumed run's span in Jaeger", func() bool {
		tr, _ = j.Trace(before.TraceID)
		return len(spansNamed(tr, "vmcp.run")) == 1 && len(spansNamed(tr, "vmcp.step s5")) == 1
	})
	run := spansNamed(tr, "vmcp.run")[0]
	if _, ok := spanByID(tr, lost); ok {
		t.Errorf("the killed process's run span %s is in Jaeger; it never ended", lost)
	}
	if run.Parent() != lost || run.Tag("vmcp.run.resumed_from") != lost || run.Tag("vmcp.run.status") != "completed" {
		t.Errorf("the resumed vmcp.run (refs %v): parent %s, resumed_from %q, status %q; want the lost span %s, completed", run.References, run.Parent(), run.Tag("vmcp.run.resumed_from"), run.Tag("vmcp.run.status"), lost)
	}
	if ev := run.Event("vmcp.resumed"); ev == nil || ev["vmcp.run.resumed_from"] != lost {
		t.Errorf("the resumed vmcp.run's events %v; want vmcp.resumed from %s", run.Logs, lost)
	}
	for _, step := range []string{"s1", "s2", "s3"} {
		if s := spansNamed(tr, "vmcp.step "+step); len(s) != 1 || s[0].Parent() != lost {
			t.Errorf("vmcp.step %s: %d spans, want one, of the first process, under its run span %s", step, len(s), lost)
		}
	}
	for _, step := range []string{"s4", "s5"} {
		if s := spansNamed(tr, "vmcp.step "+step); len(s) != 1 || s[0].Parent() != run.SpanID {
			t.Errorf("vmcp.step %s: %d spans, want one under the resumed run", step, len(s))
		}
	}
}

// spanByID is the trace's span of that id.
func spanByID(tr testenv.JaegerTrace, id string) (testenv.JaegerSpan, bool) {
	for _, s := range tr.Spans {
		if s.SpanID == id {
			return s, true
		}
	}
	return testenv.JaegerSpan{}, false
}
