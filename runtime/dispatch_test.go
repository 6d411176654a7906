package runtime

import (
	"context"
	"testing"
)

// slotGate blocks every call until release is closed, and says on
// called which run's call arrived.
type slotGate struct {
	called  chan string
	release chan struct{}
}

func (b *slotGate) CallTool(ctx context.Context, call ToolCall) (*ToolResult, error) {
	b.called <- call.RunID
	select {
	case <-b.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &ToolResult{Structured: map[string]any{}}, nil
}

// A step whose call waits for a backend slot (LimitCalls) is not stored
// running: after a crash it resumes as a pending step. It is stored
// running once its call has the slot, before the backend gets it. The
// same for a loop's iterations.
func TestStartStoredWhenCallDispatched(t *testing.T) {
	for _, loop := range []bool{false, true} {
		name := map[bool]string{false: "tool", true: "forEach"}[loop]
		t.Run(name, func(t *testing.T) {
			s := tool("a", "svc.x", nil)
			if loop {
				s = forEach("a", "{{.params.items}}", "n", tool("", "svc.x", nil))
			}
			wf := build("one", s)
			store := &slowStore{MemoryStore: NewMemoryStore(0)}
			gate := &slotGate{called: make(chan string, 4), release: make(chan struct{})}
			e := mustEngine(t, plan(wf), Options{Backend: LimitCalls(gate, CallLimits{Total: 1}), Store: store})
			params := map[string]any{"items": []any{int64(1)}}
			ctx := context.Background()
			done := make(chan *Run, 2)
			go func() {
				run, _ := e.Run(ctx, "one", params, RunOptions{RunID: "first"})
				done <- run
			}()
			if got := <-gate.called; got != "first" {
				t.Fatalf("the backend got a call of run %q; want first", got)
			}
			if st := storedStep(t, store, "first"); st != StepRunning {
				t.Errorf("run first, whose call the backend got, has step a stored %s; want running", st)
			}
			started := make(chan struct{})
			go func() {
				run, _ := e.Run(ctx, "one", params, RunOptions{RunID: "second", OnEvent: func(ev Event) {
					if ev.Kind == EventStepStarted {
						close(started)
					}
				}})
				done <- run
			}()
			<-started // the machine started it; its call waits for the slot
			if st := storedStep(t, store, "second"); st != StepPending {
				t.Errorf("run second, whose call waits for a slot, has step a stored %s; want pending", st)
			}
			close(gate.release)
			<-gate.called
			for range 2 {
				if run := <-done; run == nil || run.Status != RunCompleted {
					t.Errorf("run = %+v; want completed", run)
				}
			}
		})
	}
}

// storedStep is the stored status of step 0 of run id.
func storedStep(t *testing.T, s Store, id string) StepStatus {
	t.Helper()
	run, err := s.GetRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return run.Steps[0].Status
}
