package runtime

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
)

// TestUndeclaredArguments: an argument the parameters do not declare is
// rejected, naming the declared ones, also when the schema does not say
// additionalProperties: false (as the compiler leaves it); a schema that
// allows extra properties accepts them.
func TestUndeclaredArguments(t *testing.T) {
	cases := []struct {
		name     string
		schema   M
		params   M
		problems []string
	}{
		{name: "misspelt", schema: M{"type": "object", "properties": M{"who": M{"type": "string"}, "count": M{"type": "integer"}}},
			params: M{"who": "x", "cuont": int64(2)}, problems: []string{`parameter "cuont" is not declared (the declared parameters are count, who)`}},
		{name: "no parameters", schema: M{"type": "object", "properties": M{}},
			params: M{"extra": true}, problems: []string{`parameter "extra" is not declared (the workflow declares no parameters)`}},
		{name: "extra properties allowed", schema: M{"type": "object", "properties": M{}, "additionalProperties": M{"type": "boolean"}},
			params: M{"extra": true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wf := build("input", tool("a", "svc.x", M{}))
			wf.InputSchema = c.schema
			e := mustEngine(t, plan(wf), Options{Backend: newFake(nil)})
			_, err := e.Run(context.Background(), "input", c.params, RunOptions{})
			var ie *InputError
			if c.problems == nil {
				if err != nil {
					t.Fatalf("Run(%v) error = %v; want none", c.params, err)
				}
				return
			}
			if !errors.As(err, &ie) {
				t.Fatalf("Run(%v) error = %v; want *InputError", c.params, err)
			}
			if diff := cmp.Diff(c.problems, ie.Problems); diff != "" {
				t.Errorf("InputError.Problems mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInputValidation(t *testing.T) {
	wf := build("input", tool("a", "svc.x", M{"p": "{{.params.count}}", "mode": "{{.params.mode}}", "opts": "{{.params.opts}}"}))
	wf.InputSchema = M{
		"type": "object",
		"properties": M{
			"count": M{"type": "integer", "minimum": int64(1)},
			"mode":  M{"type": "string", "default": "fast", "enum": A{"fast", "slow"}},
			"token": M{"type": "string", "pattern": "^tk_"},
			"opts":  M{"type": "object", "default": M{}, "properties": M{"depth": M{"type": "integer", "default": int64(2)}}},
		},
		"required":             A{"count"},
		"additionalProperties": false,
	}
	cases := []struct {
		name     string
		params   M
		problems []string
		output   any
	}{
		{name: "defaults applied", params: M{"count": int64(3)}, output: M{"args": M{"p": int64(3), "mode": "fast", "opts": M{"depth": int64(2)}}}},
		{name: "nested defaults inside a given object", params: M{"count": float64(3), "opts": M{}}, output: M{"args": M{"p": float64(3), "mode": "fast", "opts": M{"depth": int64(2)}}}},
		{name: "missing required", params: M{}, problems: []string{`parameter "count" is required`}},
		{name: "wrong type", params: M{"count": "many"}, problems: []string{`parameter "count" must be integer (got string)`}},
		{name: "below minimum", params: M{"count": int64(0)}, problems: []string{`parameter "count" must be >= 1`}},
		{name: "enum", params: M{"count": int64(1), "mode": "s3cret-mode"}, problems: []string{`parameter "mode" must be one of the values its enum allows`}},
		{name: "pattern never echoes the value", params: M{"count": int64(1), "token": "s3cret-token"}, problems: []string{`parameter "token" does not match the pattern ^tk_`}},
		{name: "undeclared", params: M{"count": int64(1), "s3cret": true}, problems: []string{`parameter "s3cret" is not declared (the declared parameters are count, mode, opts, token)`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fb := newFake(nil)
			e := mustEngine(t, plan(wf), Options{Backend: fb})
			run, err := e.Run(context.Background(), "input", c.params, RunOptions{})
			if c.problems == nil {
				if err != nil {
					t.Fatalf("Run(%v) error = %v; want none", c.params, err)
				}
				if diff := cmp.Diff(c.output, run.Output); diff != "" {
					t.Errorf("output mismatch (-want +got):\n%s", diff)
				}
				return
			}
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("Run(%v) error = %v; want *InputError", c.params, err)
			}
			if diff := cmp.Diff(c.problems, ie.Problems); diff != "" {
				t.Errorf("InputError.Problems mismatch (-want +got):\n%s", diff)
			}
			for _, v := range c.params {
				if s, ok := v.(string); ok && strings.Contains(err.Error(), s) {
					t.Errorf("InputError %q echoes the value %q", err, s)
				}
			}
			if n := len(fb.Calls()); n != 0 {
				t.Errorf("backend calls = %d; want none before validation passes", n)
			}
		})
	}
}

// A run given no parameters gets its defaults from what the workflow's
// preparation validated once (checkParams): each run has its own copy, so
// what one run's caller does to its Params never reaches the next run.
func TestRunsWithoutParamsGetTheirOwnDefaults(t *testing.T) {
	wf := build("defaults", tool("a", "svc.x", M{"opts": "{{.params.opts}}", "mode": "{{.params.mode}}", "n": "{{.params.n}}"}))
	wf.InputSchema = M{"type": "object", "properties": M{
		"mode": M{"type": "string", "default": "fast"},
		"opts": M{"type": "object", "default": M{"depth": int64(2)}},
		"n":    M{"type": "integer"},
	}}
	fb := newFake(nil)
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	want := M{"args": M{"mode": "fast", "opts": M{"depth": int64(2)}}} // a null argument is left out
	for i := range 3 {
		params := M(nil)
		if i == 2 {
			params = M{} // empty, not nil: the same
		}
		run, err := e.Run(context.Background(), "defaults", params, RunOptions{})
		if err != nil || run.Status != RunCompleted {
			t.Fatalf("run %d = %v, %v", i, run, err)
		}
		if diff := cmp.Diff(want, run.Output); diff != "" {
			t.Fatalf("run %d output mismatch (-want +got):\n%s", i, diff)
		}
		if n, ok := run.Params["n"]; !ok || n != nil {
			t.Fatalf("run %d: Params[n] = %v, %v; want a declared parameter left out to be null", i, n, ok)
		}
		run.Params["opts"].(map[string]any)["depth"] = int64(99)
		run.Params["mode"] = "changed"
	}
}

// scriptedElicitor answers with a fixed result, or waits for the context.
type scriptedElicitor struct {
	res  ElicitResult
	hang bool
	mu   sync.Mutex
	reqs []ElicitRequest
}

func (s *scriptedElicitor) Elicit(ctx context.Context, req ElicitRequest) (ElicitResult, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	if s.hang {
		<-ctx.Done()
		return ElicitResult{}, ctx.Err()
	}
	return s.res, nil
}

// TestReadyQueuePriority: with one slot, the ready step with the longest
// remaining path starts first, whatever its index.
func TestReadyQueuePriority(t *testing.T) {
	wf := build("prio",
		tool("short", "svc.x", nil),
		tool("long1", "svc.x", nil),
		tool("long2", "svc.x", nil, "long1"),
		tool("long3", "svc.x", nil, "long2"),
		tool("mid1", "svc.x", nil),
		tool("mid2", "svc.x", nil, "mid1"),
	)
	wf.MaxParallel = 1
	var log eventLog
	e := mustEngine(t, plan(wf), Options{Backend: newFake(nil)})
	if _, err := e.Run(context.Background(), "prio", nil, RunOptions{OnEvent: log.add}); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, ev := range log.events {
		if ev.Kind == EventStepStarted {
			order = append(order, ev.StepID)
		}
	}
	// long1 (remaining 3) first; then long2 and mid1 (2 each, lower index
	// first); then short, long3 and mid2 (1 each, by index).
	want := []string{"long1", "long2", "mid1", "short", "long3", "mid2"}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("start order mismatch (-want +got):\n%s", diff)
	}
}

// TestMaxParallel: never more than maxParallel backend calls at once.
func TestMaxParallel(t *testing.T) {
	var steps []step
	for i := 0; i < 12; i++ {
		steps = append(steps, tool(fmt.Sprintf("s%d", i), "svc.slow", nil))
	}
	wf := build("par", steps...)
	wf.MaxParallel = 4
	fb := newFake(map[string]*fakeTool{"svc.slow": {Latency: 5 * time.Millisecond}})
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	if _, err := e.Run(context.Background(), "par", nil, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := fb.MaxFlight.Load(); got != 4 {
		t.Errorf("most concurrent calls = %d; want maxParallel 4", got)
	}
}

// TestSchedulingProbe is the design's probe: slow (50ms) and fast (5ms),
// after_fast (5ms) after fast, join after both. A ready-queue scheduler
// starts after_fast as soon as fast ends, long before slow ends. The
// assertion is on event order, not on timing; the offsets are logged.
func TestSchedulingProbe(t *testing.T) {
	wf, fb := probeShape()
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	var log eventLog
	run, err := e.Run(context.Background(), "probe", nil, RunOptions{OnEvent: log.add})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v", run, err)
	}
	idx := func(kind EventKind, id string) int {
		for i, ev := range log.events {
			if ev.Kind == kind && ev.StepID == id {
				return i
			}
		}
		t.Fatalf("no %s event for %s", kind, id)
		return -1
	}
	if a, s := idx(EventStepStarted, "after_fast"), idx(EventStepCompleted, "slow"); a > s {
		t.Errorf("after_fast started (event %d) after slow completed (event %d); a ready queue starts it when fast ends", a, s)
	}
	if j, a := idx(EventStepStarted, "join"), idx(EventStepCompleted, "after_fast"); j < a {
		t.Errorf("join started before after_fast completed")
	}
	byID := map[string]StepState{}
	for _, s := range run.Steps {
		byID[s.ID] = s
	}
	t0 := run.StartedAt
	for _, id := range []string{"slow", "fast", "after_fast", "join"} {
		s := byID[id]
		t.Logf("%-10s start %6.2fms end %6.2fms", id, ms(s.StartedAt.Sub(t0)), ms(s.EndedAt.Sub(t0)))
	}
	t.Logf("after_fast started %.3fms after fast ended; makespan %.2fms vs 55ms critical path (slow 50 + join 5)",
		ms(byID["after_fast"].StartedAt.Sub(byID["fast"].EndedAt)), ms(run.EndedAt.Sub(t0)))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// settleGoroutines waits until the goroutine count drops to base (or a
// generous deadline passes) and returns the last count.
func settleGoroutines(base int) int {
	n := runtime.NumGoroutine()
	for i := 0; i < 200 && n > base; i++ {
		time.Sleep(5 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	return n
}

func TestCancelStopsBackendCalls(t *testing.T) {
	base := runtime.NumGoroutine()
	wf := build("cancel",
		tool("h1", "svc.hang", nil),
		tool("h2", "svc.hang", nil),
		tool("after", "svc.x", nil, "h1", "h2"),
	)
	fb := newFake(map[string]*fakeTool{"svc.hang": {Hang: true}})
	fb.Started = make(chan string, 4)
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	done := make(chan *Run)
	go func() {
		run, _ := e.Run(context.Background(), "cancel", nil, RunOptions{RunID: "run-1"})
		done <- run
	}()
	<-fb.Started
	<-fb.Started
	st, err := e.Status(context.Background(), "run-1")
	if err != nil || st.Status != RunRunning || stepStatuses(st)["h1"] != StepRunning {
		t.Fatalf("Status while running = %+v, %v; want running with h1 running", st, err)
	}
	if err := e.Cancel(context.Background(), "run-1"); err != nil {
		t.Fatalf("Cancel = %v", err)
	}
	run := <-done
	if run.Status != RunCancelled {
		t.Errorf("status = %s; want cancelled", run.Status)
	}
	if got := fb.SawCancel.Load(); got != 2 {
		t.Errorf("backend calls that saw their context cancelled = %d; want 2", got)
	}
	if n := len(fb.CallsTo("after")); n != 0 {
		t.Errorf("step after ran %d times after cancel; want 0", n)
	}
	if err := e.Cancel(context.Background(), "run-1"); err != nil {
		t.Errorf("Cancel of a finished run = %v; want nil", err)
	}
	if err := e.Cancel(context.Background(), "nope"); !errors.Is(err, ErrRunNotFound) {
		t.Errorf("Cancel(unknown) = %v; want ErrRunNotFound", err)
	}
	stored, err := e.Status(context.Background(), "run-1")
	if err != nil || stored.Status != RunCancelled {
		t.Errorf("stored status = %v, %v; want cancelled", stored, err)
	}
	if n := settleGoroutines(base); n > base {
		t.Errorf("goroutines = %d after the run; want at most %d (baseline)", n, base)
	}
}

func TestParentContextCancel(t *testing.T) {
	wf := build("parent", tool("h", "svc.hang", nil))
	fb := newFake(map[string]*fakeTool{"svc.hang": {Hang: true}})
	fb.Started = make(chan string, 1)
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-fb.Started; cancel() }()
	run, err := e.Run(ctx, "parent", nil, RunOptions{})
	if err != nil || run.Status != RunCancelled || fb.SawCancel.Load() != 1 {
		t.Errorf("Run with cancelled context = %v (%v), sawCancel %d; want cancelled, 1", run.Status, err, fb.SawCancel.Load())
	}
}

func TestTimeouts(t *testing.T) {
	base := runtime.NumGoroutine()
	// The other timeout cases are in the shared suite (semantictest,
	// cases_stops.go).
	t.Run("step timeout bounds retries", func(t *testing.T) {
		wf := build("rto", tool("f", "svc.down", nil).With(timeout(60*time.Millisecond)).With(func(s *ir.Step) {
			s.OnError = ir.OnError{Action: ir.ActionRetry, MaxRetries: 10, RetryDelay: ir.Duration(25 * time.Millisecond)}
		}))
		fb := newFake(map[string]*fakeTool{"svc.down": {Fail: true}})
		e := mustEngine(t, plan(wf), Options{Backend: fb})
		start := time.Now()
		run, _ := e.Run(context.Background(), "rto", nil, RunOptions{})
		if run.Status != RunFailed || run.Steps[0].Attempts >= 11 {
			t.Errorf("status %s after %d attempts; want failed before all 11 attempts", run.Status, run.Steps[0].Attempts)
		}
		if e := run.Steps[0].Error; !strings.Contains(e, "backend unavailable") || !(strings.Contains(e, "timed out after 60ms") || strings.Contains(e, "gave up after")) {
			t.Errorf("step error = %q; want the cause and why retries stopped", e)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("retries ran for %v; the 60ms step timeout must bound them", el)
		}
	})
	if n := settleGoroutines(base); n > base {
		t.Errorf("goroutines = %d after timeouts; want at most %d", n, base)
	}
}

// TestRaceFailuresWhileSiblingsRead: many parallel steps fail (continue)
// while siblings read the outputs of earlier steps; run with -race.
func TestRaceFailuresWhileSiblingsRead(t *testing.T) {
	steps := []step{tool("root", "svc.data", nil)}
	for i := 0; i < 40; i++ {
		if i%2 == 0 {
			steps = append(steps, tool(fmt.Sprintf("f%d", i), "svc.bad", nil, "root").With(onError(ir.ActionContinue, 0)).With(defaults(M{"v": int64(i)})))
		} else {
			steps = append(steps, tool(fmt.Sprintf("r%d", i), "svc.echo", M{"v": "{{.steps.root.output.v}}", "t": "n={{.steps.root.output.v}}"}, "root"))
		}
	}
	var readers []string
	for i := 1; i < 40; i += 2 {
		readers = append(readers, fmt.Sprintf("r%d", i))
	}
	steps = append(steps, tool("sum", "svc.echo", M{"a": "{{.steps.f0.output.v}}", "b": "{{.steps.r1.output.args.v}}", "st": "{{.steps.f2.status}}"}, append([]string{"f0", "f2"}, readers...)...))
	wf := build("race", steps...)
	wf.MaxParallel = 8
	fb := newFake(map[string]*fakeTool{"svc.data": {Result: structured(M{"v": "x"})}, "svc.bad": {Fail: true}})
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	var wg sync.WaitGroup
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var log eventLog
			run, err := e.Run(context.Background(), "race", nil, RunOptions{OnEvent: log.add})
			if err != nil || run.Status != RunCompleted {
				t.Errorf("Run = %v, %v", run, err)
				return
			}
			want := M{"args": M{"a": int64(0), "b": "x", "st": "failed"}}
			if diff := cmp.Diff(want, run.Output.(M)["sum"]); diff != "" {
				t.Errorf("output mismatch (-want +got):\n%s", diff)
			}
			last := log.events[len(log.events)-1]
			if last.Kind != EventRunFinished || last.Done != 42 || last.Total != 42 {
				t.Errorf("last event = %+v; want run_finished 42/42", last)
			}
		}()
	}
	wg.Wait()
}

func TestEvents(t *testing.T) {
	wf := build("ev",
		tool("a", "svc.flaky", nil).With(onError(ir.ActionRetry, 2)),
		tool("b", "svc.x", nil, "a").With(when("{{false}}")),
	)
	fb := newFake(map[string]*fakeTool{"svc.flaky": {FailFirst: 1}})
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	var log eventLog
	run, err := e.Run(context.Background(), "ev", nil, RunOptions{OnEvent: log.add})
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		Kind    EventKind
		Step    string
		Attempt int
		Done    int
	}
	var got []ev
	for _, e := range log.events {
		if e.RunID != run.ID || e.Total != 2 || e.Workflow != "ev" || e.Time.IsZero() {
			t.Errorf("event %+v lacks run id, workflow, total or time", e)
		}
		got = append(got, ev{e.Kind, e.StepID, e.Attempt, e.Done})
	}
	want := []ev{
		{EventRunStarted, "", 0, 0},
		{EventStepStarted, "a", 1, 0},
		{EventStepRetrying, "a", 2, 0},
		{EventStepCompleted, "a", 2, 1},
		{EventStepSkipped, "b", 0, 2},
		{EventRunFinished, "", 0, 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

func TestStoreRecordsRuns(t *testing.T) {
	store := NewMemoryStore(2)
	wf := build("st", tool("a", "svc.x", nil))
	e := mustEngine(t, plan(wf), Options{Backend: newFake(nil), Store: store})
	var ids []string
	for i := 0; i < 3; i++ {
		run, err := e.Run(context.Background(), "st", nil, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.ID)
	}
	if _, err := store.GetRun(context.Background(), ids[0]); !errors.Is(err, ErrRunNotFound) {
		t.Errorf("oldest run still kept beyond MaxRuns 2: %v", err)
	}
	got, err := store.GetRun(context.Background(), ids[2])
	if err != nil || got.Status != RunCompleted || got.Steps[0].Status != StepCompleted || got.Steps[0].Attempts != 1 ||
		got.Steps[0].StartedAt.IsZero() || got.Steps[0].EndedAt.IsZero() {
		t.Errorf("stored run = %+v, %v; want completed with step times", got, err)
	}
	list, _ := store.ListRuns(context.Background(), RunFilter{Workflow: "st"})
	if len(list) != 2 || list[0].ID != ids[2] {
		t.Errorf("ListRuns = %d runs, first %v; want 2, newest first", len(list), list)
	}
	if _, err := e.Run(context.Background(), "st", nil, RunOptions{RunID: ids[2]}); err == nil {
		t.Errorf("Run with a used RunID succeeded; want an error")
	}
}

func TestNewRejectsBadPlans(t *testing.T) {
	bad := build("bad", tool("a", "svc.x", M{"v": "{{.params.x"}))
	bad.Steps[0].Arguments.Fields[0].Value.Template.Pos = at(7, 9)
	if _, err := New(plan(bad), Options{}); err == nil || !strings.Contains(err.Error(), "wf.yaml:7:9") {
		t.Errorf("New(bad template) = %v; want an error at wf.yaml:7:9", err)
	}
	if _, err := New(&ir.Plan{Version: "other"}, Options{}); err == nil {
		t.Errorf("New(wrong version) succeeded")
	}
	e := mustEngine(t, plan(build("ok", tool("a", "svc.x", nil))), Options{Backend: newFake(nil)})
	if _, err := e.Run(context.Background(), "nope", nil, RunOptions{}); !errors.Is(err, ErrUnknownWorkflow) {
		t.Errorf("Run(unknown) = %v; want ErrUnknownWorkflow", err)
	}
	if _, err := e.Status(context.Background(), "nope"); !errors.Is(err, ErrRunNotFound) {
		t.Errorf("Status(unknown) = %v; want ErrRunNotFound", err)
	}
}

// TestNoFrontEndDependencies: the runtime never links the compiler's front
// half.
func TestNoFrontEndDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		for _, pkg := range []string{"parser", "checker", "planner", "compiler"} {
			if line == "github.com/vmcp-dev/vmcp/"+pkg {
				t.Errorf("runtime depends on %s", line)
			}
		}
	}
}

// slowStore is a Store other than MemoryStore, with slow step writes, so
// the engine writes through its background writer.
type slowStore struct {
	*MemoryStore
	delay   time.Duration
	mu      sync.Mutex
	updates int
}

func (s *slowStore) UpdateStep(ctx context.Context, runID string, index int, step StepState) error {
	time.Sleep(s.delay)
	s.mu.Lock()
	s.updates++
	s.mu.Unlock()
	return s.MemoryStore.UpdateStep(ctx, runID, index, step)
}

func TestSlowStoreGetsEveryUpdate(t *testing.T) {
	var steps []step
	for i := 0; i < 10; i++ {
		steps = append(steps, tool(fmt.Sprintf("s%d", i), "svc.x", nil))
	}
	store := &slowStore{MemoryStore: NewMemoryStore(0), delay: time.Millisecond}
	e := mustEngine(t, plan(build("slow", steps...)), Options{Backend: newFake(nil), Store: store})
	run, err := e.Run(context.Background(), "slow", nil, RunOptions{})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v", run, err)
	}
	got, err := store.GetRun(context.Background(), run.ID)
	if err != nil || got.Status != RunCompleted {
		t.Fatalf("stored run = %v, %v; want completed", got, err)
	}
	for _, s := range got.Steps {
		if s.Status != StepCompleted {
			t.Errorf("stored step %s = %s; want completed", s.ID, s.Status)
		}
	}
	if store.updates != 20 {
		t.Errorf("UpdateStep calls = %d; want 20 (start and end of 10 steps)", store.updates)
	}
}

func TestLimits(t *testing.T) {
	t.Run("template output over 10 MB", func(t *testing.T) {
		runCase{
			wf:     build("big", tool("a", "svc.x", M{"v": "x" + strings.Repeat("{{.params.mb}}", 11)})),
			params: M{"mb": strings.Repeat("m", 1<<20)},
			status: RunFailed,
			errHas: []string{`step "a"`, "exceeds the 10 MB limit"},
		}.run(t)
	})
	t.Run("argument nesting over 100 levels", func(t *testing.T) {
		var v any = "leaf"
		for i := 0; i < 102; i++ {
			v = M{"k": v}
		}
		_, err := New(plan(build("deep", tool("a", "svc.x", M{"v": v}))), Options{})
		if err == nil || !strings.Contains(err.Error(), "nested deeper than 100 levels") {
			t.Errorf("New(deep arguments) = %v; want a nesting error", err)
		}
	})
	t.Run("typed value nested over 100 levels", func(t *testing.T) {
		deep := strings.Repeat("[", 150) + strings.Repeat("]", 150)
		runCase{
			wf:     build("deepjson", tool("a", "svc.x", M{"v": "{{fromJson .params.j}}"})),
			params: M{"j": deep},
			status: RunFailed,
			errHas: []string{`step "a"`, "fromJson: value is nested deeper than 100 levels"},
		}.run(t)
	})
}

func TestTemplatePositions(t *testing.T) {
	w := build("pos", tool("a", "svc.x", nil), tool("b", "svc.y", M{"v": "line one\n  and {{.steps.a.output.gone}}"}, "a"))
	// The compiler's table for a | block whose lines start at column 14
	// and 7: value bytes 0-7 on line 12, the newline, then line 13.
	tp := w.Steps[1].Arguments.Fields[0].Value.Template
	tp.Pos = at(12, 14)
	tp.Segments = []ir.Segment{{Off: 0, Line: 12, Col: 14}, {Off: 8, Line: 12, Col: 22}, {Off: 9, Line: 13, Col: 7}}
	runCase{
		wf:     w,
		status: RunFailed,
		// "  and {{" is 8 runes from column 7: the chain starts at 15.
		errHas: []string{`step "b" (wf.yaml:13:15)`, `no field "gone"`},
	}.run(t)
}

// TestRetryEventsFromParallelSteps covers retry notices sent by step
// goroutines (not the coordinator's own inline step).
func TestRetryEventsFromParallelSteps(t *testing.T) {
	wf := build("pretry",
		tool("flaky", "svc.flaky", nil).With(onError(ir.ActionRetry, 3)),
		tool("other", "svc.slow", nil),
	)
	fb := newFake(map[string]*fakeTool{"svc.flaky": {FailFirst: 2}, "svc.slow": {Latency: 20 * time.Millisecond}})
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	var log eventLog
	run, err := e.Run(context.Background(), "pretry", nil, RunOptions{OnEvent: log.add})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v", run, err)
	}
	var attempts []int
	for _, ev := range log.events {
		if ev.Kind == EventStepRetrying && ev.StepID == "flaky" {
			attempts = append(attempts, ev.Attempt)
			if !strings.Contains(ev.Err, "backend unavailable; retrying in") {
				t.Errorf("retry event error = %q; want the cause and the delay", ev.Err)
			}
		}
	}
	if diff := cmp.Diff([]int{2, 3}, attempts); diff != "" {
		t.Errorf("retry attempts (-want +got):\n%s", diff)
	}
	if run.Steps[0].Attempts != 3 {
		t.Errorf("flaky attempts = %d; want 3", run.Steps[0].Attempts)
	}
}

// TestSharedStepDeadlinesNeverShorten: steps with the same timeout that
// start at different times each get their full timeout (give or take the
// documented timeout/1000).
func TestSharedStepDeadlinesNeverShorten(t *testing.T) {
	const to = 40 * time.Millisecond
	wf := build("deadlines",
		tool("early", "svc.hang", nil).With(timeout(to)),
		tool("gate", "svc.gate", nil),
		tool("late", "svc.hang", nil, "gate").With(timeout(to)),
	)
	wf.FailureMode = ir.FailureContinue
	fb := newFake(map[string]*fakeTool{"svc.hang": {Hang: true}, "svc.gate": {Latency: 15 * time.Millisecond}})
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	run, err := e.Run(context.Background(), "deadlines", nil, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range run.Steps {
		if s.ID == "gate" {
			continue
		}
		if s.Status != StepFailed || !strings.Contains(s.Error, "timed out after 40ms") {
			t.Errorf("step %s = %s %q; want failed by its timeout", s.ID, s.Status, s.Error)
		}
		if d := s.EndedAt.Sub(s.StartedAt); d < to-to/1000 {
			t.Errorf("step %s ran %v before timing out; its timeout is %v", s.ID, d, to)
		}
	}
}
