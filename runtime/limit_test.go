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
