package thvshapes

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/runtime"
)

// shapesDir holds the shapes both engines load (a test binary runs in its
// package's directory).
const shapesDir = "../toolhive/shapes"

// shapes are the six shapes, with the backend calls one run makes.
var shapes = []struct {
	name  string
	calls int
}{
	{"chain10", 10}, {"chain100", 100}, {"wide100", 100},
	{"fanout3_fanin1", 5}, {"diamond", 4}, {"foreach100", 101},
}

// backend answers every call at once with a small fresh structured result
// {"v": <the call's argument v>}, like runtime's benchBackend. While
// record is set (only in the check run, never while timed) it keeps the
// calls.
type backend struct {
	record bool
	mu     sync.Mutex // the check run may run steps in parallel
	calls  []runtime.ToolCall
}

func (b *backend) CallTool(_ context.Context, call runtime.ToolCall) (*runtime.ToolResult, error) {
	if b.record {
		b.mu.Lock()
		b.calls = append(b.calls, call)
		b.mu.Unlock()
	}
	return &runtime.ToolResult{Structured: map[string]any{"v": call.Arguments["v"]}}, nil
}

// catalogSnapshot is a catalog that never changes once loaded, which is
// how vmcp run gives its catalog to the engine (a FixedSchemaSource: the
// engine asks for a tool step's schema once).
type catalogSnapshot struct{ *catalog.Catalog }

func (catalogSnapshot) SchemasFixed() {}

// loadSchemas reads the tools' input schemas ("backend.tool": schema,
// tools.json) into a catalog, the schema source vmcp run gives the engine.
func loadSchemas(tb testing.TB) catalogSnapshot {
	tb.Helper()
	src, err := os.ReadFile(filepath.Join(shapesDir, "tools.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var s map[string]map[string]any
	if err := json.Unmarshal(src, &s); err != nil {
		tb.Fatalf("tools.json: %v", err)
	}
	cat := catalog.New()
	for _, ref := range slices.Sorted(maps.Keys(s)) {
		backend, tool, ok := strings.Cut(ref, ".")
		if !ok {
			tb.Fatalf("tools.json: %q is not backend.tool", ref)
		}
		if cat.Backends[backend] == nil {
			cat.Backends[backend] = &catalog.Backend{}
		}
		cat.Backends[backend].Tools = append(cat.Backends[backend].Tools, &catalog.Tool{Name: tool, InputSchema: s[ref]})
	}
	return catalogSnapshot{cat}
}

// newEngine compiles the shape's file and builds an engine over it.
func newEngine(tb testing.TB, name string, be *backend) *runtime.Engine {
	tb.Helper()
	srcs, err := compiler.Load([]string{filepath.Join(shapesDir, name+".yaml")})
	if err != nil {
		tb.Fatal(err)
	}
	plan, diags := compiler.Compile(srcs, compiler.Options{})
	if plan == nil {
		tb.Fatalf("compile %s: %v", name, diags)
	}
	e, err := runtime.New(plan, runtime.Options{Backend: be, Schemas: loadSchemas(tb), Store: runtime.NewMemoryStore(16)})
	if err != nil {
		tb.Fatalf("runtime.New: %v", err)
	}
	return e
}

// isInt reports whether v is the integer want, of any Go integer type or
// an integral float64 (a number parsed from JSON).
func isInt(v any, want int64) bool {
	switch n := v.(type) {
	case int:
		return int64(n) == want
	case int64:
		return n == want
	case float64:
		return n == float64(want)
	}
	return false
}

// checkCalls checks the calls of one run: their number, and their values
// (every argument of svc.x the integer 1, except in foreach100, whose
// svc.x calls get the items 0..99 once each; the joins got every branch).
func checkCalls(name string, want int, calls []runtime.ToolCall) error {
	if len(calls) != want {
		return fmt.Errorf("%d backend calls, want %d", len(calls), want)
	}
	var items []int
	joined := false
	for _, c := range calls {
		switch tool := c.Backend + "." + c.Tool; {
		case tool == "svc.list":
			if l, _ := c.Arguments["v"].([]any); len(l) != 100 {
				return fmt.Errorf("svc.list got v = %#v", c.Arguments["v"])
			}
		case tool != "svc.x":
			return fmt.Errorf("unexpected call of %s", tool)
		case name == "foreach100":
			v, ok := c.Arguments["v"].(int64)
			if !ok {
				if f, isF := c.Arguments["v"].(float64); isF && f == float64(int64(f)) {
					v, ok = int64(f), true
				}
			}
			if !ok {
				return fmt.Errorf("svc.x got v = %#v, want an integer item", c.Arguments["v"])
			}
			items = append(items, int(v))
		default:
			for k, v := range c.Arguments {
				if !isInt(v, 1) {
					return fmt.Errorf("svc.x got %s = %#v, want the integer 1", k, v)
				}
			}
			_, b := c.Arguments["b"]
			_, cc := c.Arguments["c"]
			joined = joined || (name == "fanout3_fanin1" && b && cc) || (name == "diamond" && cc)
		}
	}
	if name == "foreach100" {
		sort.Ints(items)
		for i, v := range items {
			if v != i {
				return fmt.Errorf("svc.x items %v, want 0..99 once each", items)
			}
		}
	}
	if (name == "fanout3_fanin1" || name == "diamond") && !joined {
		return fmt.Errorf("no join call got all its branches")
	}
	return nil
}

// checkShape runs the shape once with the backend recording and checks it.
func checkShape(e *runtime.Engine, be *backend, name string, calls int) error {
	be.record, be.calls = true, nil
	defer func() { be.record, be.calls = false, nil }()
	run, err := e.Run(context.Background(), name, nil, runtime.RunOptions{})
	if err != nil {
		return fmt.Errorf("Run: %w", err)
	}
	if run.Status != runtime.RunCompleted {
		return fmt.Errorf("status %s, error %v", run.Status, run.Error)
	}
	return checkCalls(name, calls, be.calls)
}

// TestShapes runs every shape once and checks its calls.
func TestShapes(t *testing.T) {
	for _, sh := range shapes {
		t.Run(sh.name, func(t *testing.T) {
			be := &backend{}
			if err := checkShape(newEngine(t, sh.name, be), be, sh.name, sh.calls); err != nil {
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

// BenchmarkVMCP measures vmcp's runtime per step at zero backend latency
// on the shapes ToolHive's engine runs from the same files
// (BenchmarkToolHive in bench/toolhive).
func BenchmarkVMCP(b *testing.B) {
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			be := &backend{}
			e := newEngine(b, sh.name, be)
			if err := checkShape(e, be, sh.name, sh.calls); err != nil {
				b.Fatalf("%s: %v", sh.name, err)
			}
			ctx := context.Background()
			var before, after goruntime.MemStats
			goruntime.ReadMemStats(&before)
			cpu0 := processCPU()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := e.Run(ctx, sh.name, nil, runtime.RunOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			cpu := processCPU() - cpu0
			goruntime.ReadMemStats(&after)
			steps := float64(b.N * sh.calls)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/steps, "ns/step")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/steps, "allocs/step")
			b.ReportMetric(float64(cpu.Nanoseconds())/steps, "cpu-ns/step")
		})
	}
}
