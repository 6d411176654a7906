package runtime

import (
	"context"
	"sync"
	"testing"
	"time"
)

// A step that anyone saw finish (its event, or a dependent starting) is
// already in the store: a crash right after loses nothing that was seen.
func TestFinishedStepIsStoredBeforeItsEvent(t *testing.T) {
	store := &slowStore{MemoryStore: NewMemoryStore(10), delay: 5 * time.Millisecond}
	wf := build("durable", tool("a", "svc.x", nil), tool("b", "svc.y", nil, "a"), tool("c", "svc.z", nil, "b"))
	e := mustEngine(t, plan(wf), Options{Backend: newFake(nil), Store: store})

	var mu sync.Mutex
	var problems []string
	onEvent := func(ev Event) {
		if ev.Kind != EventStepCompleted && ev.Kind != EventStepStarted {
			return
		}
		run, err := store.GetRun(context.Background(), ev.RunID)
		if err != nil {
			t.Errorf("GetRun during the run: %v", err)
			return
		}
		for _, st := range run.Steps {
			if ev.Kind == EventStepCompleted && st.ID == ev.StepID && st.Status != StepCompleted {
				mu.Lock()
				problems = append(problems, "step "+st.ID+" completed but the store says "+string(st.Status))
				mu.Unlock()
			}
		}
		if ev.Kind == EventStepStarted && ev.StepID != "a" {
			// Its dependency finished before it started: that must be stored.
			dep := map[string]string{"b": "a", "c": "b"}[ev.StepID]
			for _, st := range run.Steps {
				if st.ID == dep && st.Status != StepCompleted {
					mu.Lock()
					problems = append(problems, "step "+ev.StepID+" started while the store has "+dep+" as "+string(st.Status))
					mu.Unlock()
				}
			}
		}
	}
	run, err := e.Run(context.Background(), "durable", nil, RunOptions{OnEvent: onEvent})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != RunCompleted {
		t.Fatalf("run status = %s; want completed (error %v)", run.Status, run.Error)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// storeCheckingBackend fails a call whose step the store does not hold
// as running yet: the start of a step that is not idempotent must be
// durable before its backend call.
type storeCheckingBackend struct {
	store Store
	mu    sync.Mutex
	seen  map[string]StepStatus // step id -> its stored status when called
}

func (b *storeCheckingBackend) CallTool(ctx context.Context, call ToolCall) (*ToolResult, error) {
	run, err := b.store.GetRun(ctx, call.RunID)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, st := range run.Steps {
		if st.ID == call.StepID {
			b.seen[st.ID] = st.Status
		}
	}
	return &ToolResult{Structured: map[string]any{}}, nil
}

// With a durable store, a step that is not idempotent is stored running
// before its backend is called; an idempotent one need not wait.
func TestDurableStartBeforeCall(t *testing.T) {
	store := &slowStore{MemoryStore: NewMemoryStore(10), delay: 5 * time.Millisecond}
	wf := build("starts", tool("a", "svc.x", nil), tool("b", "svc.y", nil, "a"), tool("c", "svc.z", nil, "a"))
	b := &storeCheckingBackend{store: store, seen: map[string]StepStatus{}}
	e := mustEngine(t, plan(wf), Options{Backend: b, Store: store})
	run, err := e.Run(context.Background(), "starts", nil, RunOptions{})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("run = %v, %v; want completed", run, err)
	}
	for _, id := range []string{"a", "b", "c"} {
		if b.seen[id] != StepRunning {
			t.Errorf("step %s was called while the store had it %s; want running", id, b.seen[id])
		}
	}
}
