package runtime

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLimitCallsCapsCallsAcrossRuns(t *testing.T) {
	fake := newFake(map[string]*fakeTool{"svc.x": {latency: 10 * time.Millisecond}})
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
	if got := fake.maxFlight.Load(); got != 2 {
		t.Errorf("most backend calls in flight = %d; want 2 (the limit), with 18 calls from 3 runs", got)
	}
}

func TestLimitCallsWaitEndsWithTheContext(t *testing.T) {
	fake := newFake(map[string]*fakeTool{"svc.hang": {hang: true}})
	b := LimitCalls(fake, CallLimits{Total: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := b.CallTool(ctx, ToolCall{Backend: "svc", Tool: "hang", Arguments: map[string]any{}})
		done <- err
	}()
	for fake.inFlight.Load() == 0 {
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

// TestLimitCallsPerBackendKeepsSlotsForOthers: a backend that never
// answers holds only its own slots; a call to another backend still gets
// one of the total.
func TestLimitCallsPerBackendKeepsSlotsForOthers(t *testing.T) {
	fake := newFake(map[string]*fakeTool{"stuck.hang": {hang: true}, "ok.x": {}})
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
	for fake.inFlight.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	// Five calls to stuck: two hang, three wait for its slots, none takes
	// more of the total.
	octx, ocancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer ocancel()
	if _, err := b.CallTool(octx, ToolCall{Backend: "ok", Tool: "x", Arguments: map[string]any{}}); err != nil {
		t.Errorf("call to ok while stuck holds its slots: %v; want it to run", err)
	}
	if got := fake.inFlight.Load(); got != 2 {
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
