package runtime

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestMemoryStoreReadsRunsWhileTheyRun: a new run's MemoryStore record is
// the run's own, written while its scheduler lock is held, so readers
// copy it under that lock (createShared). Several runs of a chain run at
// once while other goroutines read them with GetRun, ListRuns and Prune:
// the race detector checks every read, and each copy must be a state the
// run passed through (a finished step has its end time, steps finish in
// chain order) and the reader's own (changing it changes nothing stored).
// Every run is seen running, and ends completed in the store.
func TestMemoryStoreReadsRunsWhileTheyRun(t *testing.T) {
	const runs, chain = 4, 8
	var steps []step
	for i := range chain {
		var after []string
		if i > 0 {
			after = []string{fmt.Sprintf("s%d", i-1)}
		}
		steps = append(steps, tool(fmt.Sprintf("s%d", i), "svc.x", M{"v": i}, after...))
	}
	store := NewMemoryStore(0)
	fb := newFake(map[string]*fakeTool{"svc.x": {Latency: time.Millisecond}})
	e := mustEngine(t, plan(build("chain", steps...)), Options{Backend: fb, Store: store})

	ctx := context.Background()
	done := make(chan struct{})
	var readers sync.WaitGroup
	var sawRunning atomic.Int32
	check := func(r *Run) {
		prevDone := true
		for i, st := range r.Steps {
			finished := st.Status == StepCompleted
			if finished && (st.EndedAt.IsZero() || st.StartedAt.IsZero()) {
				t.Errorf("run %s step %s: completed without its times: %+v", r.ID, st.ID, st)
			}
			if finished && !prevDone {
				t.Errorf("run %s: step %d completed before the step it follows", r.ID, i)
			}
			prevDone = finished
		}
		if r.Status == RunRunning {
			sawRunning.Add(1)
		}
		// The copy is the reader's own.
		r.Steps[0].Status = StepFailed
		r.Status = RunFailed
	}
	for range 3 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				list, err := store.ListRuns(ctx, RunFilter{Workflow: "chain"})
				if err != nil {
					t.Errorf("ListRuns: %v", err)
					return
				}
				for _, r := range list {
					check(r)
					if got, err := store.GetRun(ctx, r.ID); err != nil {
						t.Errorf("GetRun(%s): %v", r.ID, err)
					} else {
						check(got)
					}
				}
				store.Prune(time.Now().Add(-time.Hour)) // deletes nothing: no run ended an hour ago
			}
		}()
	}
	var wg sync.WaitGroup
	ids := make([]string, runs)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run, err := e.Run(ctx, "chain", nil, RunOptions{})
			if err != nil || run.Status != RunCompleted {
				t.Errorf("Run = %v, %v", run, err)
				return
			}
			ids[i] = run.ID
		}()
	}
	wg.Wait()
	close(done)
	readers.Wait()

	if sawRunning.Load() == 0 {
		t.Error("no reader saw a run running: the test read nothing while the runs ran")
	}
	for _, id := range ids {
		got, err := store.GetRun(ctx, id)
		if err != nil {
			t.Fatalf("GetRun(%s) after the run: %v", id, err)
		}
		if got.Status != RunCompleted {
			t.Errorf("run %s is %s in the store; want completed", id, got.Status)
		}
		for _, st := range got.Steps {
			if st.Status != StepCompleted {
				t.Errorf("run %s step %s is %s in the store; want completed", id, st.ID, st.Status)
			}
		}
	}
	if list, _ := store.ListRuns(ctx, RunFilter{Status: RunRunning}); len(list) != 0 {
		t.Errorf("ListRuns(running) after every run ended = %d runs; want none", len(list))
	}
}
