package trace_test

// The spans of real runs, exported over OTLP gRPC to a real Jaeger
// (testenv.StartJaeger) and read back through its query API: the tree
// (parents), the names, the attributes and the status of a chain, a
// parallel fan-out, a nested loop with one failing iteration, a
// sub-workflow, and a run that joins its caller's trace. The backend is
// a real MCP server over HTTP (testservers.TraceRecorder) that records
// the trace context each call brought, in params._meta and the header.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/internal/testservers"
	"github.com/vmcp-dev/vmcp/mcpclient"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/telemetry/trace"
)

// Ports: this package's tests use 17300-17399.
const portLo, portHi = 17300, 17399

const workflows = `
compositeTools:
  - name: chain
    description: chain
    steps:
      - {id: a, tool: rec.traceparent}
      - {id: b, tool: rec.work, dependsOn: [a], arguments: {n: 1}}
      - {id: c, tool: rec.work, dependsOn: [b], arguments: {n: 2}}
  - name: fanout
    description: fanout
    steps:
      - {id: root, tool: rec.work, arguments: {n: 0}}
      - {id: x, tool: rec.work, dependsOn: [root], arguments: {n: 1}}
      - {id: "y", tool: rec.work, dependsOn: [root], arguments: {n: 2}}
      - {id: z, tool: rec.work, dependsOn: [root], arguments: {n: 3}}
  - name: nested
    description: nested
    steps:
      - id: outer
        type: forEach
        collection: [1, 2, 3]
        itemVar: o
        maxParallel: 1
        onError: {action: continue}
        steps:
          - id: inner
            type: forEach
            collection: [1, 2, 3]
            itemVar: i
            maxParallel: 1
            steps:
              - id: unit
                tool: rec.work
                arguments: {n: "{{.forEach.i}}", fail: "{{and (eq .forEach.o 2) (eq .forEach.i 3)}}"}
  - name: ask
    description: ask
    steps:
      - id: approve
        type: elicitation
        message: Go on?
        schema: {type: object, properties: {ok: {type: boolean}}}
  - name: stuck
    description: stuck
    steps:
      - {id: wait, tool: rec.block}
  - name: parent
    description: parent
    steps:
      - {id: first, tool: rec.work, arguments: {n: 1}}
      - {id: child, type: workflow, workflow: chain, dependsOn: [first]}
`

type rig struct {
	mgr      *mcpclient.Manager
	jaeger   *testenv.JaegerServer
	provider *trace.Provider
	engine   *runtime.Engine
	rec      *testservers.TraceRecorder
}

// newRig starts Jaeger, the recorder backend and an engine that traces to
// Jaeger as service. Successful iterations are never slow here (the
// threshold is an hour), so which iterations are kept does not depend on
// timing.
func newRig(t *testing.T, service string) *rig {
	t.Helper()
	j := testenv.StartJaeger(t, portLo, portHi)
	rec := testservers.NewTraceRecorder()
	url := testenv.Serve(t, portLo, portHi, &http.Server{Handler: server.NewStreamableHTTPServer(rec.Server())})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	mgr, err := mcpclient.Connect(ctx, map[string]*config.Backend{
		"rec": {Name: "rec", URL: url + "/mcp", Transport: config.TransportStreamableHTTP, Timeout: 20 * time.Second, StartTimeout: 20 * time.Second},
	}, mcpclient.Options{})
	if err != nil {
		t.Fatalf("connecting to the recorder: %v", err)
	}
	t.Cleanup(func() { mgr.Close() })
	p, err := trace.New(ctx, trace.Settings{Endpoint: j.OTLPGRPC, Protocol: config.OTLPGRPC, Insecure: true, ServiceName: service, Sampling: 1},
		trace.Options{SlowIteration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Shutdown(context.Background()) })
	plan, diags := compiler.Compile([]compiler.Source{{Name: "wf.yaml", Src: []byte(workflows)}}, compiler.Options{})
	if diags.HasErrors() {
		t.Fatalf("compile: %v", diags)
	}
	eng, err := runtime.New(plan, runtime.Options{Backend: p.Backend(mgr), Tracer: p})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{mgr: mgr, jaeger: j, provider: p, engine: eng, rec: rec}
}

// session is the recorder's MCP session id.
func (r *rig) session() string { return r.mgr.SessionID("rec") }

// run runs workflow from ctx, flushes the spans and returns the run and
// its trace once Jaeger holds want spans of it.
func (r *rig) run(t *testing.T, ctx context.Context, workflow string, want int) (*runtime.Run, testenv.JaegerTrace) {
	t.Helper()
	return r.runWith(t, ctx, workflow, want, runtime.RunOptions{})
}

func (r *rig) runWith(t *testing.T, ctx context.Context, workflow string, want int, opts runtime.RunOptions) (*runtime.Run, testenv.JaegerTrace) {
	t.Helper()
	run, err := r.engine.Run(ctx, workflow, map[string]any{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if run.TraceID == "" {
		t.Fatalf("run %s has no trace id", run.ID)
	}
	if err := r.provider.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	tr := r.jaeger.WaitTrace(t, run.TraceID, want)
	if len(tr.Spans) != want {
		t.Errorf("trace of %s has %d spans, want %d:\n%s", workflow, len(tr.Spans), want, dump(tr))
	}
	return run, tr
}

// tree indexes a trace's spans.
type tree struct {
	t      *testing.T
	tr     testenv.JaegerTrace
	byID   map[string]testenv.JaegerSpan
	byName map[string][]testenv.JaegerSpan
}

func index(t *testing.T, tr testenv.JaegerTrace) *tree {
	x := &tree{t: t, tr: tr, byID: map[string]testenv.JaegerSpan{}, byName: map[string][]testenv.JaegerSpan{}}
	for _, s := range tr.Spans {
		x.byID[s.SpanID] = s
		x.byName[s.OperationName] = append(x.byName[s.OperationName], s)
	}
	return x
}

// one returns the only span named name.
func (x *tree) one(name string) testenv.JaegerSpan {
	x.t.Helper()
	ss := x.byName[name]
	if len(ss) != 1 {
		x.t.Fatalf("%d spans named %q, want 1:\n%s", len(ss), name, dump(x.tr))
	}
	return ss[0]
}

// parentIs checks that child's parent is parent.
func (x *tree) parentIs(child, parent testenv.JaegerSpan) {
	x.t.Helper()
	if child.Parent() != parent.SpanID {
		x.t.Errorf("%s (%s): parent %s, want %s (%s)", child.OperationName, child.SpanID, child.Parent(), parent.OperationName, parent.SpanID)
	}
}

// tags checks the span's attributes.
func (x *tree) tags(s testenv.JaegerSpan, want map[string]string) {
	x.t.Helper()
	for k, v := range want {
		if got := s.Tag(k); got != v {
			x.t.Errorf("%s: %s = %q, want %q", s.OperationName, k, got, v)
		}
	}
}

func dump(tr testenv.JaegerTrace) string {
	var b strings.Builder
	for _, s := range tr.Spans {
		fmt.Fprintf(&b, "  %s %s parent=%s", s.SpanID, s.OperationName, s.Parent())
		for _, tg := range s.Tags {
			if strings.HasPrefix(tg.Key, "vmcp.") || tg.Key == "otel.status_code" || tg.Key == "span.kind" {
				fmt.Fprintf(&b, " %s=%v", tg.Key, tg.Value)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestJaegerTraces(t *testing.T) {
	r := newRig(t, "vmcp-test")

	t.Run("scheduled", func(t *testing.T) {
		// A run a schedule started says so on its span.
		run, tr := r.runWith(t, context.Background(), "chain", 7, runtime.RunOptions{Trigger: "schedule:nightly", Owner: "schedule:nightly"})
		x := index(t, tr)
		x.tags(x.one("vmcp.run"), map[string]string{"vmcp.run.id": run.ID, "vmcp.run.trigger": "schedule:nightly"})
	})

	t.Run("chain", func(t *testing.T) {
		before := len(r.rec.Calls())
		run, tr := r.run(t, context.Background(), "chain", 7)
		x := index(t, tr)
		root := x.one("vmcp.run")
		if root.Parent() != "" {
			t.Errorf("the run's span has parent %s; want a root", root.Parent())
		}
		x.tags(root, map[string]string{"vmcp.workflow": "chain", "vmcp.run.id": run.ID, "vmcp.run.status": "completed"})
		for i, id := range []string{"a", "b", "c"} {
			step := x.one("vmcp.step " + id)
			x.parentIs(step, root)
			tool := "work"
			if id == "a" {
				tool = "traceparent"
			}
			x.tags(step, map[string]string{"vmcp.step.id": id, "vmcp.step.tool": "rec." + tool, "vmcp.step.attempt": "1", "vmcp.step.status": "completed"})
			var call testenv.JaegerSpan
			for _, c := range x.byName["tools/call "+tool] {
				if c.Parent() == step.SpanID {
					call = c
				}
			}
			if call.SpanID == "" {
				t.Fatalf("no tools/call span under step %s:\n%s", id, dump(tr))
			}
			x.tags(call, map[string]string{"span.kind": "client", "mcp.method.name": "tools/call", "gen_ai.tool.name": tool, "vmcp.backend": "rec", "vmcp.step.id": id})
			if sid := call.Tag("mcp.session.id"); sid == "" || sid != r.session() {
				t.Errorf("step %s: mcp.session.id %q, want the backend session's %q", id, sid, r.session())
			}
			// The backend got the client span's context, in _meta and
			// in the header.
			got := r.rec.Calls()[before+i]
			want := "00-" + run.TraceID + "-" + call.SpanID + "-01"
			if got.Meta != want || got.Header != want {
				t.Errorf("step %s: the backend got traceparent %q in _meta and %q in the header; want %q", id, got.Meta, got.Header, want)
			}
		}
		// Sequential: each step starts after the one before ended.
		a, b := x.one("vmcp.step a"), x.one("vmcp.step b")
		if b.StartTime < a.StartTime+a.Duration {
			t.Errorf("step b started at %d, before step a ended at %d", b.StartTime, a.StartTime+a.Duration)
		}
	})

	t.Run("fan-out", func(t *testing.T) {
		_, tr := r.run(t, context.Background(), "fanout", 9)
		x := index(t, tr)
		root := x.one("vmcp.run")
		for _, id := range []string{"root", "x", "y", "z"} {
			x.parentIs(x.one("vmcp.step "+id), root)
		}
		if n := len(x.byName["tools/call work"]); n != 4 {
			t.Errorf("%d tools/call spans, want 4", n)
		}
		rs := x.one("vmcp.step root")
		for _, id := range []string{"x", "y", "z"} {
			if s := x.one("vmcp.step " + id); s.StartTime < rs.StartTime+rs.Duration {
				t.Errorf("step %s started before root ended", id)
			}
		}
	})

	t.Run("nested loop with a failing iteration", func(t *testing.T) {
		// Kept: the run, the outer loop, its failed iteration (o=2,
		// index 1), that iteration's inner loop, the inner loop's failed
		// iteration (i=3, index 2), its attempt and its call. The other
		// 8 iterations succeeded fast: dropped, counted on their loops.
		run, tr := r.run(t, context.Background(), "nested", 7)
		if run.Status != runtime.RunCompleted {
			t.Fatalf("run %s, want completed (onError continue): %v", run.Status, run.Error)
		}
		x := index(t, tr)
		root := x.one("vmcp.run")
		outer := x.one("vmcp.loop outer")
		x.parentIs(outer, root)
		x.tags(outer, map[string]string{"vmcp.loop.count": "3", "vmcp.loop.completed": "2", "vmcp.loop.failed": "1", "vmcp.step.status": "completed"})
		oi := x.one("vmcp.iteration outer")
		x.parentIs(oi, outer)
		x.tags(oi, map[string]string{"vmcp.loop.index": "1", "vmcp.loop.item": "iteration 1 (2)", "otel.status_code": "ERROR"})
		inner := x.one("vmcp.loop inner")
		x.parentIs(inner, oi)
		x.tags(inner, map[string]string{"vmcp.loop.count": "3", "vmcp.loop.completed": "2", "vmcp.loop.failed": "1", "vmcp.step.status": "failed", "otel.status_code": "ERROR"})
		ii := x.one("vmcp.iteration inner")
		x.parentIs(ii, inner)
		x.tags(ii, map[string]string{"vmcp.loop.index": "2", "otel.status_code": "ERROR"})
		unit := x.one("vmcp.step unit")
		x.parentIs(unit, ii)
		x.tags(unit, map[string]string{"vmcp.step.status": "failed", "vmcp.loop.index": "2", "otel.status_code": "ERROR"})
		call := x.one("tools/call work")
		x.parentIs(call, unit)
		x.tags(call, map[string]string{"error.type": "tool_error", "otel.status_code": "ERROR"})
	})

	t.Run("sub-workflow", func(t *testing.T) {
		run, tr := r.run(t, context.Background(), "parent", 11)
		x := index(t, tr)
		var top, child testenv.JaegerSpan
		for _, s := range x.byName["vmcp.run"] {
			if s.Tag("vmcp.workflow") == "parent" {
				top = s
			} else {
				child = s
			}
		}
		step := x.one("vmcp.step child")
		x.parentIs(step, top)
		x.tags(step, map[string]string{"vmcp.step.tool": "chain"})
		x.parentIs(child, step)
		x.tags(child, map[string]string{"vmcp.workflow": "chain", "vmcp.run.parent_id": run.ID, "vmcp.run.parent_step": "child", "vmcp.run.status": "completed"})
		for _, id := range []string{"a", "b", "c"} {
			x.parentIs(x.one("vmcp.step "+id), child)
		}
	})

	t.Run("elicitation", func(t *testing.T) {
		_, tr := r.runWith(t, context.Background(), "ask", 2, runtime.RunOptions{Elicitor: accept{}})
		x := index(t, tr)
		el := x.one("vmcp.elicitation approve")
		x.parentIs(el, x.one("vmcp.run"))
		x.tags(el, map[string]string{"vmcp.elicitation.action": "accept", "vmcp.step.id": "approve"})
	})

	t.Run("cancelled run", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		calls := len(r.rec.Calls())
		go func() {
			// Cancel once the backend has the call.
			for len(r.rec.Calls()) == calls {
				time.Sleep(5 * time.Millisecond)
			}
			cancel()
		}()
		run, tr := r.run(t, ctx, "stuck", 3)
		if run.Status != runtime.RunCancelled {
			t.Fatalf("run %s, want cancelled", run.Status)
		}
		x := index(t, tr)
		x.tags(x.one("vmcp.run"), map[string]string{"vmcp.run.status": "cancelled", "otel.status_code": "ERROR"})
		x.tags(x.one("vmcp.step wait"), map[string]string{"vmcp.step.status": "failed", "otel.status_code": "ERROR"})
		x.tags(x.one("tools/call block"), map[string]string{"error.type": "call_error", "otel.status_code": "ERROR"})
	})

	t.Run("the caller's trace", func(t *testing.T) {
		const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
		ctx := r.provider.Extract(context.Background(), map[string]any{"traceparent": "00-" + callerTrace + "-" + callerSpan + "-01"}, nil)
		run, tr := r.run(t, ctx, "chain", 7)
		if run.TraceID != callerTrace {
			t.Errorf("run trace id %s, want the caller's %s", run.TraceID, callerTrace)
		}
		x := index(t, tr)
		if got := x.one("vmcp.run").Parent(); got != callerSpan {
			t.Errorf("the run's span has parent %q, want the caller's span %s", got, callerSpan)
		}
		// The header form, when _meta has none.
		hctx := r.provider.Extract(context.Background(), nil, http.Header{"Traceparent": {"00-" + callerTrace + "-" + callerSpan + "-01"}}.Get)
		if got := trace.TraceID(hctx); got != callerTrace {
			t.Errorf("from the header: trace id %q, want %s", got, callerTrace)
		}
	})
}

// accept answers every elicitation with accept.
type accept struct{}

func (accept) Elicit(context.Context, runtime.ElicitRequest) (runtime.ElicitResult, error) {
	return runtime.ElicitResult{Action: runtime.ElicitAccept, Content: map[string]any{"ok": true}}, nil
}
