package runtime

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

// benchBackend answers every call at once with a small fresh structured
// result, like the cheapest possible real backend.
type benchBackend struct{}

func (benchBackend) CallTool(_ context.Context, call ToolCall) (*ToolResult, error) {
	return &ToolResult{Structured: map[string]any{"v": call.Arguments["v"]}}, nil
}

// benchSchemas are the input schemas of the benchmark's tools, as a
// backend would declare them: every call's arguments are coerced to them
// and checked against them (argschema.go).
var benchSchemas = schemaTable{
	{"svc", "x"}: M{"type": "object", "properties": M{
		"v": M{"type": "integer"}, "a": M{"type": "integer"}, "b": M{"type": "integer"}, "c": M{"type": "integer"},
	}, "required": A{"v"}},
	{"svc", "list"}: M{"type": "object", "properties": M{"v": M{"type": "array", "items": M{"type": "integer"}}}, "required": A{"v"}},
}

// schemaTable is a SchemaSource looked up by backend and tool, as vmcp
// run's (cmd/vmcp catalogHints) is: a test's schemaMap builds a
// "backend.tool" string per call, which no real source does and which
// cost the benchmark 4% of a ten-step chain.
type schemaTable map[toolKey]map[string]any

// SchemasFixed: like catalogHints, the table never changes.
func (schemaTable) SchemasFixed() {}

func (s schemaTable) InputSchema(backend, tool string) (map[string]any, bool) {
	m, ok := s[toolKey{backend, tool}]
	return m, ok
}

// benchShape is a workflow and the number of backend calls one run makes.
type benchShape struct {
	name  string
	wf    *ir.Workflow
	calls int
	// callees are the other workflows the shape's workflow steps run.
	callees []*ir.Workflow
}

func chainShape(n int) benchShape {
	steps := []step{tool("s0", "svc.x", M{"v": 1})}
	for i := 1; i < n; i++ {
		steps = append(steps, tool(fmt.Sprintf("s%d", i), "svc.x", M{"v": fmt.Sprintf("{{.steps.s%d.output.v}}", i-1)}, fmt.Sprintf("s%d", i-1)))
	}
	return benchShape{fmt.Sprintf("chain%d", n), build(fmt.Sprintf("chain%d", n), steps...), n, nil}
}

// nestedShape is a loop over outer items whose body is a loop over inner
// items whose body is two steps, the second reading the first:
// outer x inner x 2 backend calls.
func nestedShape(outer, inner int) benchShape {
	list := func(n int) *ir.Value {
		items := make([]any, n)
		for i := range items {
			items[i] = int64(i)
		}
		return val(items)
	}
	body := build("body",
		tool("fetch", "svc.x", M{"v": "{{.forEach.b}}"}),
		tool("write", "svc.x", M{"v": "{{.steps.fetch.output.v}}", "a": "{{.forEach.a}}"}, "fetch"),
	).Steps
	innerLoop := &ir.Step{ID: "inner", Type: ir.StepForEach, Pos: at(20, 5), ForEach: &ir.ForEach{
		Items: list(inner), ItemVar: "b", MaxParallel: 10, MaxIterations: 100, Steps: body, Sinks: []int{1}}}
	outerLoop := &ir.Step{ID: "outer", Type: ir.StepForEach, Pos: at(20, 5), ForEach: &ir.ForEach{
		Items: list(outer), ItemVar: "a", MaxParallel: 10, MaxIterations: 100, Steps: []*ir.Step{innerLoop}, Sinks: []int{0}}}
	name := fmt.Sprintf("nested%dx%d", outer, inner)
	return benchShape{name, build(name, step{Step: outerLoop}), outer * inner * 2, nil}
}

func benchShapes() []benchShape {
	var wide []step
	for i := 0; i < 100; i++ {
		wide = append(wide, tool(fmt.Sprintf("w%d", i), "svc.x", M{"v": "{{.params.x}}"}))
	}
	wideWF := build("wide100", wide...)
	wideWF.InputSchema = M{"type": "object", "properties": M{"x": M{"type": "integer", "default": int64(1)}}}

	fan := build("fanout3_fanin1",
		tool("root", "svc.x", M{"v": 1}),
		tool("a", "svc.x", M{"v": "{{.steps.root.output.v}}"}, "root"),
		tool("b", "svc.x", M{"v": "{{.steps.root.output.v}}"}, "root"),
		tool("c", "svc.x", M{"v": "{{.steps.root.output.v}}"}, "root"),
		tool("join", "svc.x", M{"v": "{{.steps.a.output.v}}", "b": "{{.steps.b.output.v}}", "c": "{{.steps.c.output.v}}"}, "a", "b", "c"),
	)

	// a -> {b, c} -> d
	diamond := build("diamond",
		tool("a", "svc.x", M{"v": 1}),
		tool("b", "svc.x", M{"v": "{{.steps.a.output.v}}"}, "a"),
		tool("c", "svc.x", M{"v": "{{.steps.a.output.v}}"}, "a"),
		tool("d", "svc.x", M{"v": "{{.steps.b.output.v}}", "c": "{{.steps.c.output.v}}"}, "b", "c"),
	)

	items := make([]any, 100)
	for i := range items {
		items[i] = int64(i)
	}
	fe := build("foreach100",
		tool("list", "svc.list", M{"v": val(items)}),
		forEach("each", "{{.steps.list.output.v}}", "n", tool("", "svc.x", M{"v": "{{.forEach.n}}"}), "list").With(func(s *ir.Step) {
			s.ForEach.MaxIterations = 100
		}),
	)
	// A chain of 10 workflow steps, each a child run of a one-step leaf.
	leaf := build("leaf", tool("only", "svc.x", M{"v": "{{.params.v}}"}))
	leaf.InputSchema = M{"type": "object", "properties": M{"v": M{"type": "integer"}}}
	leaf.Timeout = ir.Duration(30 * time.Minute)
	sub := []step{{Step: &ir.Step{ID: "w0", Type: ir.StepWorkflow, Pos: at(40, 5), Workflow: &ir.WorkflowRef{Name: "leaf"}, Arguments: val(M{"v": 1})}}}
	for i := 1; i < 10; i++ {
		sub = append(sub, step{Step: &ir.Step{ID: fmt.Sprintf("w%d", i), Type: ir.StepWorkflow, Pos: at(40, 5), Workflow: &ir.WorkflowRef{Name: "leaf"},
			Arguments: val(M{"v": fmt.Sprintf("{{.steps.w%d.output.v}}", i-1)})}, After: []string{fmt.Sprintf("w%d", i-1)}})
	}
	return []benchShape{
		nestedShape(10, 10),
		chainShape(10),
		chainShape(100),
		{"wide100", wideWF, 100, nil},
		{"fanout3_fanin1", fan, 5, nil},
		{"diamond", diamond, 4, nil},
		{"foreach100", fe, 101, nil},
		{"subworkflow_chain10", build("subworkflow_chain10", sub...), 10, []*ir.Workflow{leaf}},
	}
}

// processCPU is the CPU time (user and system, all threads, GC included)
// the test process has used. On a shared machine wall time per step
// includes waiting for a CPU; CPU time does not.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRun measures the engine's cost per step at zero backend latency.
// ns/step and allocs/step divide a whole run (validation, store writes,
// result) by the number of backend calls it makes. The tools declare input
// schemas (benchSchemas), so each call's arguments are coerced and checked. The store keeps the last
// 16 runs: with the default 1000 retained runs, the garbage collector
// rescans every retained output on each cycle, which BenchmarkRunRetained
// shows separately.
func BenchmarkRun(b *testing.B) { benchmarkRun(b, 16) }

// BenchmarkRunRetained is BenchmarkRun with the default in-memory store,
// which keeps DefaultMaxRuns runs (and their outputs) alive.
func BenchmarkRunRetained(b *testing.B) { benchmarkRun(b, DefaultMaxRuns) }

func benchmarkRun(b *testing.B, keep int) { benchmarkRunWith(b, keep, nil) }

// benchmarkRunWith is benchmarkRun with the engine's options changed by
// tune, when set (the tracing benchmark, trace_bench_test.go).
func benchmarkRunWith(b *testing.B, keep int, tune func(*Options)) {
	for _, sh := range benchShapes() {
		sh.wf.Timeout = ir.Duration(30 * time.Minute) // the default, so step timers are real
		b.Run(sh.name, func(b *testing.B) {
			opts := Options{Backend: benchBackend{}, Schemas: benchSchemas, Store: NewMemoryStore(keep)}
			if tune != nil {
				tune(&opts)
			}
			e := mustEngine(b, plan(append([]*ir.Workflow{sh.wf}, sh.callees...)...), opts)
			ctx := context.Background()
			// Check once that the shape really runs.
			if run, err := e.Run(ctx, sh.wf.Name, nil, RunOptions{}); err != nil || run.Status != RunCompleted {
				b.Fatalf("Run(%s) = %v, %v", sh.name, run, err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			cpu0 := processCPU()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := e.Run(ctx, sh.wf.Name, nil, RunOptions{}); err != nil {
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

// BenchmarkSchedulingProbe runs the design's probe with real latencies:
// slow (50ms) and fast (5ms) without dependencies, after_fast (5ms) after
// fast, join (5ms) after slow and after_fast. It reports how long after
// fast's end after_fast started (a level-barrier scheduler would wait for
// slow, about 45ms) and the makespan against the 55ms critical path.
func BenchmarkSchedulingProbe(b *testing.B) {
	wf, fb := probeShape()
	e := mustEngine(b, plan(wf), Options{Backend: fb})
	var lag, makespan, afterStart time.Duration
	for i := 0; i < b.N; i++ {
		run, err := e.Run(context.Background(), "probe", nil, RunOptions{})
		if err != nil || run.Status != RunCompleted {
			b.Fatalf("Run = %v, %v", run, err)
		}
		var fast, after StepState
		for _, s := range run.Steps {
			switch s.ID {
			case "fast":
				fast = s
			case "after_fast":
				after = s
			}
		}
		lag += after.StartedAt.Sub(fast.EndedAt)
		afterStart += after.StartedAt.Sub(run.StartedAt)
		makespan += run.EndedAt.Sub(run.StartedAt)
	}
	n := float64(b.N) * float64(time.Millisecond)
	b.ReportMetric(float64(lag)/n, "after_fast-lag-ms")
	b.ReportMetric(float64(afterStart)/n, "after_fast-start-ms")
	b.ReportMetric(float64(makespan)/n, "makespan-ms")
}

// BenchmarkFloor measures what a step costs below the engine: the fake
// backend's call alone (a fresh result map), the maps of a forEach
// iteration, starting a goroutine while the caller goes on (what a
// fan-out pays when its steps must not wait for each other), and handing
// a job to an idle goroutine parked on a channel and hearing back.
func BenchmarkFloor(b *testing.B) {
	b.Run("backend_call", func(b *testing.B) {
		var be benchBackend
		call := ToolCall{Backend: "svc", Tool: "x", Arguments: map[string]any{"v": 1}}
		b.ReportAllocs()
		for range b.N {
			res, err := be.CallTool(context.Background(), call)
			if err != nil {
				b.Fatal(err)
			}
			floorSink = res
		}
	})
	// The two maps a forEach iteration must build besides the backend's
	// result: its call's arguments (one key here) and its record in
	// .output.iterations (five keys). A Go map of up to 8 entries costs
	// two allocations, its header and one 8-slot group.
	b.Run("iteration_maps", func(b *testing.B) {
		var item any = int64(7) // the items are in the collection already
		b.ReportAllocs()
		for i := range b.N {
			args := map[string]any{"v": item}
			floorMap = map[string]any{"index": int64(i % 100), "item": item, "status": "completed", "output": floorMap["output"], "error": ""}
			floorMap["output"] = args
		}
	})
	// Starting a goroutine while the caller works on (as a fan-out does
	// for a step whose siblings must not wait for it) and waiting for it.
	b.Run("goroutine_start", func(b *testing.B) {
		var wg sync.WaitGroup
		var busy int
		b.ReportAllocs()
		for range b.N {
			wg.Add(1)
			go wg.Done()
			for i := range 200 { // about a step's template evaluation
				busy += i
			}
			wg.Wait()
		}
		floorInt = busy
	})
	b.Run("goroutine_handoff", func(b *testing.B) {
		jobs, done := make(chan int, 1), make(chan int, 1)
		go func() {
			for j := range jobs {
				done <- j
			}
		}()
		b.ReportAllocs()
		for i := range b.N {
			jobs <- i
			<-done
		}
		close(jobs)
	})
}

// floorSink and floorMap keep BenchmarkFloor's results on the heap, as
// the engine's are.
var (
	floorSink *ToolResult
	floorMap  map[string]any
	floorInt  int
)

// BenchmarkRunGrowth is BenchmarkRun's chain at 100 and 1,000 steps (built
// as IR: the checker caps a file's workflow at 100 steps, but loops and
// sub-workflows reach further): the engine's cost per step must not grow
// with the workflow's size.
func BenchmarkRunGrowth(b *testing.B) {
	for _, sh := range []benchShape{chainShape(100), chainShape(1000)} {
		sh.wf.Timeout = ir.Duration(30 * time.Minute)
		b.Run(sh.name, func(b *testing.B) {
			e := mustEngine(b, plan(sh.wf), Options{Backend: benchBackend{}, Schemas: benchSchemas, Store: NewMemoryStore(16)})
			ctx := context.Background()
			cpu0 := processCPU()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if run, err := e.Run(ctx, sh.wf.Name, nil, RunOptions{}); err != nil || run.Status != RunCompleted {
					b.Fatalf("Run(%s) = %v, %v", sh.name, run, err)
				}
			}
			b.StopTimer()
			steps := float64(b.N * sh.calls)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/steps, "ns/step")
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/steps, "cpu-ns/step")
		})
	}
}

// BenchmarkLoopRetained measures what a finished loop keeps per iteration
// while its run is retained by the store: a loop over n integers whose
// body is one call answering {"v": n}. retained-B/iter is the live heap
// after a collection, with the run kept, over n, less what the items
// themselves take.
func BenchmarkLoopRetained(b *testing.B) {
	body := build("body",
		tool("fetch", "svc.x", M{"v": "{{.forEach.n}}"}),
		tool("write", "svc.x", M{"v": "{{.steps.fetch.output.v}}"}, "fetch"),
	).Steps
	for _, c := range []struct {
		n    int
		body bool
	}{{1000, false}, {100_000, false}, {100_000, true}} {
		n := c.n
		name := fmt.Sprintf("items%d", n)
		if c.body {
			name += "_body2"
		}
		b.Run(name, func(b *testing.B) {
			items := make([]any, n)
			for i := range items {
				items[i] = int64(i)
			}
			wf := build("loop",
				forEach("each", "{{.params.items}}", "n", tool("", "svc.x", M{"v": "{{.forEach.n}}"})).With(func(s *ir.Step) {
					s.ForEach.MaxIterations = n
					if c.body {
						s.ForEach.Step, s.ForEach.Steps, s.ForEach.Sinks = nil, body, []int{1}
					}
				}),
			)
			wf.InputSchema = M{"type": "object", "properties": M{"items": M{"type": "array"}}}
			store := NewMemoryStore(1)
			e := mustEngine(b, plan(wf), Options{Backend: benchBackend{}, Schemas: benchSchemas, Store: store, MaxIterations: n})
			var retained float64
			for i := 0; i < b.N; i++ {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				run, err := e.Run(context.Background(), "loop", map[string]any{"items": items}, RunOptions{})
				if err != nil || run.Status != RunCompleted {
					b.Fatalf("Run = %v, %v", run, err)
				}
				run = nil
				runtime.GC()
				runtime.ReadMemStats(&after)
				retained += float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
			}
			runtime.KeepAlive(items)
			b.ReportMetric(retained/float64(b.N), "retained-B/iter")
		})
	}
}

// BenchmarkRunNoSchemas is BenchmarkRun without the tools' input schemas,
// as the first wave's engine (which checked none) ran it: the engine's own
// cost without the argument checks (bench/vs.sh compares it with that
// build's BenchmarkRun).
func BenchmarkRunNoSchemas(b *testing.B) {
	benchmarkRunWith(b, 16, func(o *Options) { o.Schemas = nil })
}

// BenchmarkRunFixedCost runs chains of 1, 10 and 100 steps without input
// schemas: ns/op of the one-step chain is a run's fixed cost (its set-up,
// record, store entry and end), and the slope from 10 to 100 steps the
// cost of one more step. It uses only what every build since the first
// wave's has (chainShape, mustEngine, plan, benchBackend), so the same
// function copied into an older revision's runtime package measures that
// build alike (docs/performance.md, 2026-12-04).
func BenchmarkRunFixedCost(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		sh := chainShape(n)
		sh.wf.Timeout = ir.Duration(30 * time.Minute)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			e := mustEngine(b, plan(sh.wf), Options{Backend: benchBackend{}, Store: NewMemoryStore(16)})
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := e.Run(ctx, sh.wf.Name, nil, RunOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
