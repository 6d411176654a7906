package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

func TestLimitCallsCapsCallsAcrossRuns(t *testing.T) {
	fake := newFake(map[string]*fakeTool{"svc.x": {Latency: 10 * time.Millisecond}})
	var steps []step
	for _, id := range []string{"a", "b", "c", "d", "e", "f"} {
		steps = append(steps, tool(id, "svc.x", nil))
	}
	e := mustEngine(t, plan(build("wide", steps...)), Options{Backend: LimitCalls(fake, CallLimits{Total: 2})})
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run, err := e.Run(context.Background(), "wide", nil, RunOptions{})
			if err != nil || run.Status != RunCompleted {
				t.Errorf("Run = %v, %v; want completed", run, err)
			}
		}()
	}
	wg.Wait()
	if got := fake.MaxFlight.Load(); got != 2 {
		t.Errorf("most backend calls in flight = %d; want 2 (the limit), with 18 calls from 3 runs", got)
	}
}

func TestLimitCallsWaitEndsWithTheContext(t *testing.T) {
	fake := newFake(map[string]*fakeTool{"svc.hang": {Hang: true}})
	b := LimitCalls(fake, CallLimits{Total: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := b.CallTool(ctx, ToolCall{Backend: "svc", Tool: "hang", Arguments: map[string]any{}})
		done <- err
	}()
	for fake.InFlight.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer wcancel()
	_, err := b.CallTool(wctx, ToolCall{Backend: "svc", Tool: "hang", Arguments: map[string]any{}})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "at most 1 calls at once") {
		t.Errorf("second call while the only slot is taken: error = %v; want a deadline error naming the limit", err)
	}
	cancel()
	if err := <-done; err == nil {
		t.Errorf("cancelled hanging call returned no error")
	}
	if LimitCalls(fake, CallLimits{PerBackend: map[string]int{"svc": 0}}) != Backend(fake) {
		t.Errorf("LimitCalls(b, no limits) wraps b; want b itself")
	}
}

// nested returns a value nested levels deep ({"k": {"k": ... "s3cret"}}),
// a whole level being one object.
func nested(levels int) any {
	var v any = "s3cret"
	for i := 0; i < levels; i++ {
		v = M{"k": v}
	}
	return v
}

// TestInputLimits: the caller's arguments are measured whole, before the
// run starts, and the error names the parameter, never its value.
func TestInputLimits(t *testing.T) {
	wf := build("in", tool("a", "svc.x", M{"v": "{{.params.obj}}"}))
	e := mustEngine(t, plan(wf), Options{Backend: newFake(nil)})
	tests := []struct {
		name   string
		params M
		want   string
	}{
		// The arguments object is level 1, so obj may nest 99 levels.
		{"150 levels", M{"obj": nested(150)}, `parameter "obj" is nested deeper than 100 levels`},
		{"100 levels", M{"obj": nested(100)}, `parameter "obj" is nested deeper than 100 levels`},
		{"11 MB", M{"obj": "s3cret" + strings.Repeat("x", 11<<20), "small": "y"}, `arguments are more than 10485760 bytes as JSON (10 MB), the limit for argument values; the largest is parameter "obj"`},
		{"two halves", M{"a": strings.Repeat("s3cret", 1<<20), "obj": strings.Repeat("s3cret", 1<<20)}, `the largest is parameter "a"`},
	}
	for _, tt := range tests {
		run, err := e.Run(context.Background(), "in", tt.params, RunOptions{})
		var inErr *InputError
		if !errors.As(err, &inErr) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Run = %v, %v; want an InputError containing %q", tt.name, run, err, tt.want)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error echoes the parameter's value: %.200s", tt.name, err)
		}
	}
	if run, err := e.Run(context.Background(), "in", M{"obj": nested(99)}, RunOptions{}); err != nil || run.Status != RunCompleted {
		t.Errorf("Run with obj nested 99 levels (100 with the arguments) = %v, %v; want completed", run, err)
	}
}

// TestArgumentLimits: the arguments of each backend call are measured
// whole, whatever made them, and the error names the step and the part.
func TestArgumentLimits(t *testing.T) {
	big := strings.Repeat("s3cret", 1<<20) // 6 MB
	tools := map[string]*fakeTool{
		"svc.deep": {Result: func(map[string]any) any { return M{"tree": nested(150)} }},
		"svc.big":  {Result: func(map[string]any) any { return M{"big": big, "bigger": big + strings.Repeat("s3cret", 100)} }},
	}
	wholeArgs := tool("b", "svc.x", nil, "a")
	wholeArgs.Arguments = &ir.Value{Kind: ir.KindTemplate, Template: &ir.Template{Source: "{{.steps.a.output}}", Single: true, Pos: at(7, 18)}}
	items := make([]any, 3)
	for i := range items {
		items[i] = int64(i)
	}
	tests := []struct {
		name   string
		wf     *ir.Workflow
		errPos ir.Pos
		errHas string
	}{
		{
			name: "a single-action template passes a deep step output",
			wf: build("deep", tool("a", "svc.deep", nil),
				tool("b", "svc.x", M{"payload": "{{.steps.a.output.tree}}", "n": 1}, "a")),
			errPos: at(1, 1),
			errHas: `step "b" (wf.yaml:1:1): arguments.payload is nested deeper than 100 levels, the limit for argument values`,
		},
		{
			name:   "a whole-arguments template is over 10 MB",
			wf:     build("whole", tool("a", "svc.big", nil), wholeArgs),
			errPos: at(7, 18),
			errHas: `step "b" (wf.yaml:7:18): arguments are more than 10485760 bytes as JSON (10 MB), the limit for argument values`,
		},
		{
			name: "two single-action templates add up to over 10 MB",
			wf: build("sum", tool("a", "svc.big", nil),
				tool("b", "svc.x", M{"x": "{{.steps.a.output.bigger}}", "y": M{"z": A{1, "{{.steps.a.output.big}}"}}}, "a")),
			errPos: at(1, 1),
			errHas: `step "b" (wf.yaml:1:1): arguments are more than 10485760 bytes as JSON (10 MB), the limit for argument values; the largest part is arguments.x`,
		},
		{
			name: "a template inside an array passes a deep value",
			wf: build("arr", tool("a", "svc.deep", nil),
				tool("b", "svc.x", M{"list": A{"ok", M{"t": "{{.steps.a.output.tree.k}}"}}}, "a")),
			errHas: `arguments.list[1].t is nested deeper than 100 levels`,
		},
		{
			name: "a forEach iteration's arguments",
			wf: build("loop", tool("a", "svc.deep", nil),
				// One iteration at a time, so iteration 0 is the one that fails.
				forEach("each", "{{.params.items}}", "n", tool("", "svc.x", M{"v": "{{.steps.a.output.tree}}"}), "a").With(func(s *ir.Step) { s.ForEach.MaxParallel = 1 })),
			errHas: `step "each" (wf.yaml:1:1): iteration 0 (0): arguments.v is nested deeper than 100 levels`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := newFake(tools)
			e := mustEngine(t, plan(tt.wf), Options{Backend: fake})
			run, err := e.Run(context.Background(), tt.wf.Name, M{"items": items}, RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if run.Status != RunFailed || run.Error == nil || !strings.Contains(run.Error.Error(), tt.errHas) {
				t.Fatalf("Run = %s, %v; want failed with %q", run.Status, run.Error, tt.errHas)
			}
			if strings.Contains(run.Error.Error(), "s3cret") {
				t.Errorf("the error echoes a value: %.200s", run.Error)
			}
			if tt.errPos.IsValid() && run.Error.Pos != tt.errPos {
				t.Errorf("error position = %v; want %v (the template's)", run.Error.Pos, tt.errPos)
			}
			for _, id := range []string{"b", "each"} {
				if n := len(fake.CallsTo(id)); n != 0 {
					t.Errorf("step %q called its backend %d times; want none (its arguments are over a limit)", id, n)
				}
			}
		})
	}
}

func BenchmarkMeasureArguments(b *testing.B) {
	args := M{"v": int64(1), "name": "a name", "list": A{int64(1), 2.5, "x", M{"k": true}}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, r := measureValue(args, 0); r != withinLimits {
			b.Fatal(r)
		}
	}
}

// TestValueMeterSize: for strings without escapes, integers and nesting,
// the meter counts what encoding/json writes.
func TestValueMeterSize(t *testing.T) {
	for _, v := range []any{
		M{}, A{}, "", "abc", int64(0), int64(7), int64(-15), int64(math.MaxInt64), int64(math.MinInt64),
		M{"a": int64(1), "bb": A{"x", int64(-300), M{"c": "d"}}, "e": A{}},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if n, r := measureValue(v, 0); n != len(b) || r != withinLimits {
			t.Errorf("measureValue(%s) = %d, %v; want %d (len of its JSON), within limits", b, n, r, len(b))
		}
	}
}

// TestLimitCallsPerBackendKeepsSlotsForOthers: a backend that never
// answers holds only its own slots; a call to another backend still gets
// one of the total.
func TestLimitCallsPerBackendKeepsSlotsForOthers(t *testing.T) {
	fake := newFake(map[string]*fakeTool{"stuck.hang": {Hang: true}, "ok.x": {}})
	b := LimitCalls(fake, CallLimits{Total: 4, PerBackend: map[string]int{"stuck": 2, "ok": 2}})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.CallTool(ctx, ToolCall{Backend: "stuck", Tool: "hang", Arguments: map[string]any{}})
		}()
	}
	for fake.InFlight.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	// Five calls to stuck: two hang, three wait for its slots, none takes
	// more of the total.
	octx, ocancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer ocancel()
	if _, err := b.CallTool(octx, ToolCall{Backend: "ok", Tool: "x", Arguments: map[string]any{}}); err != nil {
		t.Errorf("call to ok while stuck holds its slots: %v; want it to run", err)
	}
	if got := fake.InFlight.Load(); got != 2 {
		t.Errorf("calls in flight at stuck = %d; want 2 (its maxParallel)", got)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer wcancel()
	_, err := b.CallTool(wctx, ToolCall{Backend: "stuck", Tool: "hang", Arguments: map[string]any{}})
	if want := `waiting for a free call slot of backend "stuck" (at most 2 calls at once, backends.stuck.maxParallel)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("another call to stuck: error = %v; want it to name %q", err, want)
	}
	cancel()
	wg.Wait()
}
