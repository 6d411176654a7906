package toolhivebench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stacklok/toolhive-core/env"
	"github.com/stacklok/toolhive/pkg/vmcp"
	"github.com/stacklok/toolhive/pkg/vmcp/composer"
	"github.com/stacklok/toolhive/pkg/vmcp/config"
	"github.com/stacklok/toolhive/pkg/vmcp/router"
	"github.com/stacklok/toolhive/pkg/vmcp/server"
)

// The engine logs three slog.Info records per workflow (start, execution
// plan, completion) and slog.Debug records per step. The benchmark measures
// the engine, not a log writer: records below Error are dropped by the
// handler's level check; errors (only on failure paths) still reach stderr.
func init() {
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
}

// seenCall is a backend call as the fake saw it.
type seenCall struct {
	tool string
	args map[string]any
}

// fakeBackend answers every tool call at once with a small fresh structured
// result {"v": <the call's argument v>}, as vmcp's benchBackend does. While
// record is set (only in the check run, never while timed) it keeps the calls.
type fakeBackend struct {
	record bool
	mu     sync.Mutex // the check run may run steps in parallel
	calls  []seenCall
}

var errNotUsed = errors.New("not used by the benchmark")

func (f *fakeBackend) CallTool(_ context.Context, _ *vmcp.BackendTarget, tool string, args map[string]any,
	_ map[string]any, _ map[string]string) (*vmcp.ToolCallResult, error) {
	if f.record {
		f.mu.Lock()
		f.calls = append(f.calls, seenCall{tool, args})
		f.mu.Unlock()
	}
	return &vmcp.ToolCallResult{StructuredContent: map[string]any{"v": args["v"]}}, nil
}

func (*fakeBackend) ReadResource(context.Context, *vmcp.BackendTarget, string) (*vmcp.ResourceReadResult, error) {
	return nil, errNotUsed
}

func (*fakeBackend) GetPrompt(context.Context, *vmcp.BackendTarget, string, map[string]any) (*vmcp.PromptGetResult, error) {
	return nil, errNotUsed
}

func (*fakeBackend) Complete(context.Context, *vmcp.BackendTarget, vmcp.CompletionRef, string, string,
	map[string]string) (*vmcp.CompletionResult, error) {
	return nil, errNotUsed
}

func (*fakeBackend) ListCapabilities(context.Context, *vmcp.BackendTarget) (*vmcp.CapabilityList, error) {
	return nil, errNotUsed
}

var _ vmcp.BackendClient = (*fakeBackend)(nil)

// newEngine builds ToolHive's workflow engine as its server builds one for
// each composite-tool call (pkg/vmcp/core): the session router over a
// routing table with the two tools, and the session's tool list, whose input
// schemas drive the engine's argument coercion (template expansion yields
// strings; the schema turns "1" back into the integer 1). No elicitation
// handler, state store or auditor: NewWorkflowEngine allows nil for each and
// then skips them.
func newEngine(be vmcp.BackendClient) composer.Composer {
	target := &vmcp.BackendTarget{WorkloadID: "svc", WorkloadName: "svc", BaseURL: "http://127.0.0.1:1", TransportType: "streamable-http"}
	rt := &vmcp.RoutingTable{Tools: map[string]*vmcp.BackendTarget{"svc.x": target, "svc.list": target}}
	integer := map[string]any{"type": "integer"}
	tools := []vmcp.Tool{
		{Name: "svc.x", BackendID: "svc", InputSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"v": integer, "a": integer, "b": integer, "c": integer},
		}},
		{Name: "svc.list", BackendID: "svc", InputSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"v": map[string]any{"type": "array", "items": integer}},
		}},
	}
	return composer.NewWorkflowEngine(router.NewSessionRouter(rt), be, nil, nil, nil, tools)
}

// benchShape is a workflow, the number of backend calls one run makes, and
// a check of a run's result and of the calls it made.
type benchShape struct {
	name  string
	def   *composer.WorkflowDefinition
	calls int
	check func(res *composer.WorkflowResult, calls []seenCall) error
}

type args = map[string]any

func toolStep(id, tool string, a args, after ...string) composer.WorkflowStep {
	return composer.WorkflowStep{ID: id, Type: composer.StepTypeTool, Tool: tool, Arguments: a, DependsOn: after}
}

// isInt reports whether v is the integer want: an int where the
// definition has a literal, an int64 where the schema coerced a template's
// string (not the string itself).
func isInt(v any, want int64) bool {
	switch n := v.(type) {
	case int:
		return int64(n) == want
	case int64:
		return n == want
	}
	return false
}

// stepV checks that each of the steps completed with output v the integer 1.
func stepV(res *composer.WorkflowResult, ids ...string) error {
	for _, id := range ids {
		sr, ok := res.Steps[id]
		if !ok {
			return fmt.Errorf("step %s has no result", id)
		}
		if sr.Status != composer.StepStatusCompleted {
			return fmt.Errorf("step %s: status %s, error %v", id, sr.Status, sr.Error)
		}
		if v := sr.Output["v"]; !isInt(v, 1) {
			return fmt.Errorf("step %s: output v = %#v, want the integer 1", id, v)
		}
	}
	return nil
}

// callArgs finds the call that has all of keys among its arguments (the
// join step's, whose extra arguments are its other reads) and checks that
// each is the integer 1.
func callArgs(calls []seenCall, keys ...string) error {
	for _, c := range calls {
		all := true
		for _, k := range keys {
			if _, ok := c.args[k]; !ok {
				all = false
			}
		}
		if !all {
			continue
		}
		for _, k := range keys {
			if !isInt(c.args[k], 1) {
				return fmt.Errorf("call with %v: argument %s = %#v, want the integer 1", keys, k, c.args[k])
			}
		}
		return nil
	}
	return fmt.Errorf("no call has arguments %v", keys)
}

func chainShape(n int) benchShape {
	steps := []composer.WorkflowStep{toolStep("s0", "svc.x", args{"v": 1})}
	ids := []string{"s0"}
	for i := 1; i < n; i++ {
		id := fmt.Sprintf("s%d", i)
		steps = append(steps, toolStep(id, "svc.x", args{"v": fmt.Sprintf("{{.steps.s%d.output.v}}", i-1)}, fmt.Sprintf("s%d", i-1)))
		ids = append(ids, id)
	}
	name := fmt.Sprintf("chain%d", n)
	return benchShape{name, &composer.WorkflowDefinition{Name: name, Steps: steps}, n,
		func(res *composer.WorkflowResult, _ []seenCall) error {
			if v := res.Output["v"]; !isInt(v, 1) {
				return fmt.Errorf("workflow output v = %#v, want the integer 1", v)
			}
			return stepV(res, ids...)
		}}
}

// loadDef loads shapes/<name>.yaml, the file vmcp's side
// (bench/thvshapes) compiles too, as ToolHive's server loads a vMCP
// config: config.NewYAMLLoader, then ConvertConfigToWorkflowDefinitions.
func loadDef(name string) *composer.WorkflowDefinition {
	cfg, err := config.NewYAMLLoader("shapes/"+name+".yaml", &env.OSReader{}).Load()
	if err != nil {
		panic(fmt.Sprintf("load %s: %v", name, err))
	}
	defs, err := server.ConvertConfigToWorkflowDefinitions(cfg.CompositeTools)
	if err != nil || defs[name] == nil {
		panic(fmt.Sprintf("convert %s: %v", name, err))
	}
	return defs[name]
}

func benchShapes() []benchShape {
	var wide []composer.WorkflowStep
	var wideIDs []string
	for i := 0; i < 100; i++ {
		id := fmt.Sprintf("w%d", i)
		wide = append(wide, toolStep(id, "svc.x", args{"v": "{{.params.x}}"}))
		wideIDs = append(wideIDs, id)
	}
	wideDef := &composer.WorkflowDefinition{Name: "wide100", Steps: wide,
		Parameters: args{"type": "object", "properties": args{"x": args{"type": "integer", "default": int64(1)}}}}

	fan := &composer.WorkflowDefinition{Name: "fanout3_fanin1", Steps: []composer.WorkflowStep{
		toolStep("root", "svc.x", args{"v": 1}),
		toolStep("a", "svc.x", args{"v": "{{.steps.root.output.v}}"}, "root"),
		toolStep("b", "svc.x", args{"v": "{{.steps.root.output.v}}"}, "root"),
		toolStep("c", "svc.x", args{"v": "{{.steps.root.output.v}}"}, "root"),
		toolStep("join", "svc.x", args{"v": "{{.steps.a.output.v}}", "b": "{{.steps.b.output.v}}", "c": "{{.steps.c.output.v}}"}, "a", "b", "c"),
	}}

	// a -> {b, c} -> d
	diamond := &composer.WorkflowDefinition{Name: "diamond", Steps: []composer.WorkflowStep{
		toolStep("a", "svc.x", args{"v": 1}),
		toolStep("b", "svc.x", args{"v": "{{.steps.a.output.v}}"}, "a"),
		toolStep("c", "svc.x", args{"v": "{{.steps.a.output.v}}"}, "a"),
		toolStep("d", "svc.x", args{"v": "{{.steps.b.output.v}}", "c": "{{.steps.c.output.v}}"}, "b", "c"),
	}}

	// One list step returning 100 items, then a forEach over them with one
	// tool call per item reading the item. ToolHive's collection is a
	// template that must render a JSON array (its own tests use the json
	// function); the parsed items are float64, and the inner step's
	// "{{.forEach.n}}" renders each as a string that the schema turns back
	// into an integer.
	items := make([]any, 100)
	for i := range items {
		items[i] = int64(i)
	}
	fe := &composer.WorkflowDefinition{Name: "foreach100", Steps: []composer.WorkflowStep{
		toolStep("list", "svc.list", args{"v": items}),
		{
			ID: "each", Type: composer.StepTypeForEach, DependsOn: []string{"list"},
			Collection: "{{json .steps.list.output.v}}", ItemVar: "n", MaxIterations: 100,
			InnerStep: &composer.WorkflowStep{ID: "one", Type: composer.StepTypeTool, Tool: "svc.x", Arguments: args{"v": "{{.forEach.n}}"}},
		},
	}}

	// The definitions above only name the steps the checks read; what
	// runs is each shape's file, the text vmcp's side compiles too.
	shs := []benchShape{
		chainShape(10),
		chainShape(100),
		{"wide100", wideDef, 100, func(res *composer.WorkflowResult, _ []seenCall) error { return stepV(res, wideIDs...) }},
		{"fanout3_fanin1", fan, 5, func(res *composer.WorkflowResult, calls []seenCall) error {
			if err := stepV(res, "root", "a", "b", "c", "join"); err != nil {
				return err
			}
			return callArgs(calls, "v", "b", "c")
		}},
		{"diamond", diamond, 4, func(res *composer.WorkflowResult, calls []seenCall) error {
			if err := stepV(res, "a", "b", "c", "d"); err != nil {
				return err
			}
			return callArgs(calls, "v", "c")
		}},
		{"foreach100", fe, 101, checkForEach},
	}
	for i := range shs {
		shs[i].def = loadDef(shs[i].name)
	}
	return shs
}

func checkForEach(res *composer.WorkflowResult, calls []seenCall) error {
	if sr := res.Steps["list"]; sr == nil || sr.Status != composer.StepStatusCompleted || len(sr.Output["v"].([]any)) != 100 {
		return fmt.Errorf("list step: %+v", sr)
	}
	sr := res.Steps["each"]
	if sr == nil || sr.Status != composer.StepStatusCompleted {
		return fmt.Errorf("forEach step: %+v", sr)
	}
	if sr.Output["count"] != 100 || sr.Output["completed"] != 100 || sr.Output["failed"] != 0 {
		return fmt.Errorf("forEach step: count %v, completed %v, failed %v", sr.Output["count"], sr.Output["completed"], sr.Output["failed"])
	}
	iters, _ := sr.Output["iterations"].([]any)
	if len(iters) != 100 {
		return fmt.Errorf("forEach step: %d iterations", len(iters))
	}
	for i, it := range iters {
		out, _ := it.(map[string]any)["output"].(map[string]any)
		if !isInt(out["v"], int64(i)) {
			return fmt.Errorf("iteration %d: output v = %#v, want the integer %d", i, out["v"], i)
		}
	}
	n := 0
	for _, c := range calls {
		if c.tool == "svc.x" {
			n++
		}
	}
	if n != 100 {
		return fmt.Errorf("%d calls of svc.x, want 100", n)
	}
	return nil
}

// checkShape validates the definition (as ToolHive's server does once at
// startup), runs it once with the fake recording its calls, and checks
// that it completed with the right outputs and the expected call count.
func checkShape(eng composer.Composer, be *fakeBackend, sh benchShape) error {
	ctx := context.Background()
	if err := eng.ValidateWorkflow(ctx, sh.def); err != nil {
		return fmt.Errorf("ValidateWorkflow: %w", err)
	}
	be.record, be.calls = true, nil
	defer func() { be.record, be.calls = false, nil }()
	res, err := eng.ExecuteWorkflow(ctx, sh.def, nil)
	if err != nil {
		return fmt.Errorf("ExecuteWorkflow: %w", err)
	}
	if res.Status != composer.WorkflowStatusCompleted {
		return fmt.Errorf("status %s", res.Status)
	}
	if len(be.calls) != sh.calls {
		return fmt.Errorf("%d backend calls, want %d", len(be.calls), sh.calls)
	}
	return sh.check(res, be.calls)
}

// TestShapes runs every shape once and checks its result.
func TestShapes(t *testing.T) {
	for _, sh := range benchShapes() {
		t.Run(sh.name, func(t *testing.T) {
			be := &fakeBackend{}
			if err := checkShape(newEngine(be), be, sh); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// processCPU is the CPU time (user and system, all threads, GC included)
// the test process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkToolHive measures ToolHive's composite-tool engine per step at
// zero backend latency, as vmcp's BenchmarkRun measures vmcp's: ns/step and
// allocs/step divide whole ExecuteWorkflow calls by the backend calls they
// make.
func BenchmarkToolHive(b *testing.B) {
	for _, sh := range benchShapes() {
		b.Run(sh.name, func(b *testing.B) {
			be := &fakeBackend{}
			eng := newEngine(be)
			// Check once that the shape really runs, and right.
			if err := checkShape(eng, be, sh); err != nil {
				b.Fatalf("%s: %v", sh.name, err)
			}
			ctx := context.Background()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			cpu0 := processCPU()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := eng.ExecuteWorkflow(ctx, sh.def, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			cpu := processCPU() - cpu0
			runtime.ReadMemStats(&after)
			steps := float64(b.N * sh.calls)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/steps, "ns/step")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/steps, "allocs/step")
			b.ReportMetric(float64(cpu.Nanoseconds())/steps, "cpu-ns/step")
		})
	}
}
