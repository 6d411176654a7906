package e2e

// Tracing on Temporal end to end: a real Temporal dev server, two real
// `vmcp worker` processes and a real `vmcp run`, all exporting to one
// real Jaeger. The chain's middle step is held by the gate backend while
// the test SIGKILLs the worker inside it; the other worker finishes the
// run. Jaeger then holds one trace: the run's span (vmcp run), the SDK's
// StartWorkflow and RunWorkflow spans, each step's StartActivity and the
// RunActivity attempts under it (the surviving worker's retry of step two
// is Temporal attempt 2, in that worker's process), and each backend call
// under its attempt. The killed worker's attempt of step two never ended,
// so its span is not in Jaeger; the traceparent the backend received from
// it names the run's trace and a parent span that is not there.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// Ports of the tracing tests added after the first ones.
const traceNewLo, traceNewHi = 17780, 17799

func TestTracingJaegerTemporalKilledWorker(t *testing.T) {
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100") // the processes export every 100ms
	j := testenv.StartJaeger(t, traceNewLo, traceNewHi)
	ts := testenv.StartTemporal(t, traceNewLo, traceNewHi)
	g := startGateBackendIn(t, traceNewLo, traceNewHi)
	telemetry := fmt.Sprintf("telemetry:\n  otlp: {endpoint: %q, protocol: grpc, insecure: true}\n  serviceName: vmcp-e2e\n", j.OTLPGRPC)
	cfg := temporalConfig(t, ts.Address, g.url, strings.ReplaceAll(chainWorkflows, "IDEMPOTENT", "idempotent: true"), telemetry)
	workers := twoWorkers(t, cfg)
	t.Setenv("VMCP_WORKER", "vmcp-run")
	c, stderr := stdioVMCP(t, cfg)
	done := callAsync(t, c, "chain", map[string]any{"tag": "k"})
	in := g.waitEntered(t) // step two is on a worker, inside the backend call
	victim := workers[in.worker]
	if victim == nil {
		t.Fatalf("the gate was called by %q, not a worker", in.worker)
	}
	first := g.traceparents("two-k")
	if len(first) != 1 || len(strings.Split(first[0], "-")) != 4 {
		t.Fatalf("the gate's first call came with traceparent %q", first)
	}
	traceID, killedParent := strings.Split(first[0], "-")[1], strings.Split(first[0], "-")[2]
	// What the victim ended before it dies is exported within 100ms:
	// wait for step one's attempt, so that it is in the trace if the
	// victim made it.
	waitFor(t, "step one's attempt in Jaeger", func() bool {
		tr, err := j.Trace(traceID)
		return err == nil && len(spansWhere(tr, "RunActivity:", "one")) == 1
	})
	// Other spans the victim ended before the call it is held in (the
	// StartActivity of step two, when its workflow task scheduled it) may
	// still sit in its batch: it exports every 100ms, so three intervals
	// later they are in Jaeger too (in CI one was not, and the trace had
	// 11 spans of the 12 counted below).
	time.Sleep(300 * time.Millisecond)
	victim.kill(t)
	g.open("two-k") // the call again, on the other worker, goes through
	res := (<-done).res
	if res == nil || res.IsError {
		t.Fatalf("chain after SIGKILL of %s: %v\nvmcp stderr:\n%s", in.worker, res, stderr.String())
	}
	if got := res.Meta.AdditionalFields["vmcp/traceId"]; got != traceID {
		t.Errorf("_meta vmcp/traceId = %v, want the trace the backend saw, %s", got, traceID)
	}
	survivor := "w1"
	if in.worker == "w1" {
		survivor = "w2"
	}

	// run, StartWorkflow, RunWorkflow, 3 StartActivity, 3 RunActivity
	// that ended, 3 backend calls.
	tr := j.WaitTrace(t, traceID, 12)
	waitFor(t, "the run's span in Jaeger (it ends after the workflow)", func() bool {
		tr, _ = j.Trace(traceID)
		return len(spansNamed(tr, "vmcp.run")) == 1
	})
	defer func() {
		if t.Failed() {
			for _, s := range tr.Spans {
				t.Logf("span %s %q parent %s worker %q attempt %s", s.SpanID, s.OperationName, s.Parent(), tr.Processes[s.ProcessID].Tag("service.instance.id"), s.Tag("temporal.activity.attempt"))
			}
		}
	}()
	byID := map[string]testenv.JaegerSpan{}
	for _, s := range tr.Spans {
		byID[s.SpanID] = s
	}
	parentOf := func(s testenv.JaegerSpan) testenv.JaegerSpan { return byID[s.Parent()] }
	worker := func(s testenv.JaegerSpan) string { return tr.Processes[s.ProcessID].Tag("service.instance.id") }

	runs := spansNamed(tr, "vmcp.run")
	if len(runs) != 1 || runs[0].Parent() != "" || runs[0].Tag("vmcp.run.status") != "completed" {
		t.Fatalf("want one root vmcp.run, completed; have %v", runs)
	}
	starts := spansNamed(tr, "StartWorkflow:vmcp.run")
	if len(starts) != 1 || starts[0].Parent() != runs[0].SpanID {
		t.Fatalf("want one StartWorkflow:vmcp.run under the run; have %v", starts)
	}
	wfs := spansNamed(tr, "RunWorkflow:vmcp.run")
	if len(wfs) == 0 {
		t.Fatalf("no RunWorkflow:vmcp.run span; spans: %v", names(tr))
	}
	for _, w := range wfs {
		if w.Parent() != starts[0].SpanID {
			t.Errorf("RunWorkflow (worker %s) is under %q, want StartWorkflow", worker(w), parentOf(w).OperationName)
		}
	}
	// The only holes in the tree are the victim's spans that never ended
	// (its RunWorkflow, its attempt of step two): every span whose parent
	// is not in Jaeger is the victim's, and each StartActivity is under
	// a RunWorkflow or such a hole.
	for _, s := range tr.Spans {
		p, ok := byID[s.Parent()]
		switch {
		case s.Parent() == "":
		case !ok && worker(s) != in.worker:
			t.Errorf("%s (worker %q) is under span %s, which is not in Jaeger; only the killed %s's spans may be", s.OperationName, worker(s), s.Parent(), in.worker)
		case ok && strings.HasPrefix(s.OperationName, "StartActivity:") && !strings.HasPrefix(p.OperationName, "RunWorkflow:"):
			t.Errorf("%s is under %q, want RunWorkflow", s.OperationName, p.OperationName)
		}
	}
	for _, step := range []string{"one", "two", "three"} {
		attempts := spansWhere(tr, "RunActivity:", step)
		if len(attempts) != 1 {
			t.Errorf("step %s: %d attempts in Jaeger, want 1 (the killed worker's never ended)", step, len(attempts))
			continue
		}
		a := attempts[0]
		if sa := parentOf(a); !strings.HasPrefix(sa.OperationName, "StartActivity:") {
			t.Errorf("step %s: the attempt is under %q, want StartActivity", step, sa.OperationName)
		}
		if a.Tag("vmcp.step.tool") == "" || a.Tag("vmcp.run.id") == "" {
			t.Errorf("step %s: the attempt's tags %v lack vmcp.step.tool or vmcp.run.id", step, a.Tags)
		}
		calls := 0
		for _, s := range tr.Spans {
			if s.Parent() == a.SpanID && strings.HasPrefix(s.OperationName, "tools/call ") && s.Tag("span.kind") == "client" {
				calls++
			}
		}
		if calls != 1 {
			t.Errorf("step %s: %d backend call spans under its attempt, want 1", step, calls)
		}
		if step == "two" {
			if got := a.Tag("temporal.activity.attempt"); got != "2" {
				t.Errorf("step two's attempt in Jaeger is Temporal attempt %s, want 2 (the retry after the kill)", got)
			}
			if got := worker(a); got != survivor {
				t.Errorf("step two's retry ran on %q, want the survivor %s", got, survivor)
			}
		}
		if step == "three" && worker(a) != survivor {
			t.Errorf("step three ran on %q, want the survivor %s", worker(a), survivor)
		}
		if step == "one" && !strings.HasPrefix(strings.Join(g.log2(), " "), "one-k@"+worker(a)) {
			t.Errorf("step one's attempt is in worker %q's process; the backend says %v", worker(a), g.log2())
		}
	}
	// The killed worker's attempt of step two: the backend got the run's
	// trace, under a span the victim never exported.
	if _, ok := byID[killedParent]; ok {
		t.Errorf("the killed attempt's span %s is in Jaeger; its worker was SIGKILLed inside it", killedParent)
	}
	second := g.traceparents("two-k")
	if len(second) != 2 || !strings.Contains(second[1], traceID) {
		t.Errorf("the gate's calls of step two came with %v, want two in trace %s", second, traceID)
	}
}

// spansNamed are the trace's spans of that operation name.
func spansNamed(tr testenv.JaegerTrace, name string) []testenv.JaegerSpan {
	var out []testenv.JaegerSpan
	for _, s := range tr.Spans {
		if s.OperationName == name {
			out = append(out, s)
		}
	}
	return out
}

// spansWhere are the spans whose name starts with prefix and whose
// vmcp.step.id is step.
func spansWhere(tr testenv.JaegerTrace, prefix, step string) []testenv.JaegerSpan {
	var out []testenv.JaegerSpan
	for _, s := range tr.Spans {
		if strings.HasPrefix(s.OperationName, prefix) && s.Tag("vmcp.step.id") == step {
			out = append(out, s)
		}
	}
	return out
}

// names are the trace's span names, for failure messages.
func names(tr testenv.JaegerTrace) []string {
	var out []string
	for _, s := range tr.Spans {
		out = append(out, s.OperationName)
	}
	return out
}
