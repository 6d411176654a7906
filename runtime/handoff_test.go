package runtime

import (
	"context"
	"errors"
	"testing"
	"time"
)

// gateBackend answers svc.b at once and holds svc.a until svc.b has been
// called (or gives up after a few seconds): a quick tool that turned slow
// waiting for its sibling.
type gateBackend struct{ bCalled chan struct{} }

func (g *gateBackend) CallTool(ctx context.Context, call ToolCall) (*ToolResult, error) {
	switch call.Tool {
	case "b":
		close(g.bCalled)
	case "a":
		select {
		case <-g.bCalled:
		case <-time.After(5 * time.Second):
			return nil, errors.New("b was never called while a waited")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &ToolResult{Structured: map[string]any{"ok": true}}, nil
}

// TestQuickStepWaitsForItsSibling: steps that have been quick run one
// after another on the goroutine already running, with no worker
// started; when the first of them blocks, its queued sibling still gets a
// worker (after inlineWait) instead of waiting behind it.
func TestQuickStepWaitsForItsSibling(t *testing.T) {
	// a -> c and b: a has more work behind it, so the calling goroutine
	// runs a and queues b.
	wf := build("gate", tool("a", "svc.a", nil), tool("b", "svc.b", nil), tool("c", "svc.c", nil, "a"))
	be := &gateBackend{bCalled: make(chan struct{})}
	e := mustEngine(t, plan(wf), Options{Backend: be})
	wp, _ := e.lookup("gate")
	for _, sp := range wp.steps {
		sp.calls.n.Store(inlineStreak) // as after inlineStreak quick runs
	}
	run, err := e.Run(context.Background(), "gate", nil, RunOptions{})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v; want completed (b must run while a waits for it)", run, err)
	}
	a, b := run.Steps[0], run.Steps[1]
	if !b.StartedAt.Before(a.EndedAt) {
		t.Errorf("b started at %v, after a ended at %v", b.StartedAt, a.EndedAt)
	}
	if wp.steps[0].calls.quick() {
		t.Errorf("a is still quick after a slow call")
	}
}

func TestCallStreak(t *testing.T) {
	var c callStreak
	for i := 0; i < inlineStreak-1; i++ {
		c.note(time.Microsecond)
	}
	if c.quick() {
		t.Fatalf("quick after %d quick calls; want %d", inlineStreak-1, inlineStreak)
	}
	c.note(time.Microsecond)
	if !c.quick() {
		t.Fatalf("not quick after %d quick calls", inlineStreak)
	}
	c.note(inlineCall)
	if c.quick() {
		t.Fatalf("still quick after a call of %s", inlineCall)
	}
}
