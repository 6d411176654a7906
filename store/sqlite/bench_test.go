package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/runtime"
)

// openBench opens a store in a fresh file, closed when the benchmark ends.
func openBench(b *testing.B) *Store {
	b.Helper()
	s, err := Open(filepath.Join(b.TempDir(), "bench.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkRunLifecycle measures what the engine writes for one run of
// four steps: CreateRun, two UpdateStep calls per step, FinishRun.
func BenchmarkRunLifecycle(b *testing.B) { benchmarkLifecycle(b, false) }

// BenchmarkRunLifecycleResumeRecord is BenchmarkRunLifecycle with what a
// resume needs besides: the run's params and digest, each step's content.
func BenchmarkRunLifecycleResumeRecord(b *testing.B) { benchmarkLifecycle(b, true) }

func benchmarkLifecycle(b *testing.B, record bool) {
	s := openBench(b)
	ctx := context.Background()
	out := map[string]any{"text": "some output of a typical size, a sentence or two long", "n": 42.0}
	var content map[string]any
	if record {
		content = map[string]any{"text": "some output of a typical size, a sentence or two long"}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r := run(fmt.Sprintf("r%d", i), "a", "b", "c", "d")
		if record {
			r.Params, r.PlanDigest = map[string]any{"incident": "INC-1234", "window": "1h"}, "6f1c0ffee6f1c0ffee6f1c0ffee6f1c0ffee6f1c0ffee6f1c0ffee6f1c0ffee6f"
		}
		if err := s.CreateRun(ctx, r); err != nil {
			b.Fatal(err)
		}
		for k := range r.Steps {
			st := runtime.StepState{ID: r.Steps[k].ID, Status: runtime.StepRunning, Attempts: 1, StartedAt: t0}
			if err := s.UpdateStep(ctx, r.ID, k, st); err != nil {
				b.Fatal(err)
			}
			st.Status, st.EndedAt, st.Output, st.Content = runtime.StepCompleted, t0.Add(time.Millisecond), out, content
			if err := s.UpdateStep(ctx, r.ID, k, st); err != nil {
				b.Fatal(err)
			}
			r.Steps[k] = st
		}
		r.Status, r.EndedAt = runtime.RunCompleted, t0.Add(time.Second)
		if err := s.FinishRun(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetRun reads one four-step run.
func BenchmarkGetRun(b *testing.B) {
	s := openBench(b)
	ctx := context.Background()
	if err := s.CreateRun(ctx, run("r", "a", "b", "c", "d")); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.GetRun(ctx, "r"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListRuns lists the 50 newest of 1000 runs.
func BenchmarkListRuns(b *testing.B) {
	s := openBench(b)
	ctx := context.Background()
	for i := 0; i < 1000; i++ {
		r := run(fmt.Sprintf("r%04d", i), "a", "b")
		r.StartedAt = t0.Add(time.Duration(i) * time.Second)
		if err := s.CreateRun(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if runs, err := s.ListRuns(ctx, runtime.RunFilter{Limit: 50}); err != nil || len(runs) != 50 {
			b.Fatal(len(runs), err)
		}
	}
}

// BenchmarkRunLifecycleParallel is BenchmarkRunLifecycle from many
// goroutines at once (32 per CPU), as a busy server writes: group commit
// lets concurrent writes share transactions.
func BenchmarkRunLifecycleParallel(b *testing.B) {
	s := openBench(b)
	ctx := context.Background()
	out := map[string]any{"text": "some output of a typical size, a sentence or two long", "n": 42.0}
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(32)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := run(fmt.Sprintf("r%d", next.Add(1)), "a", "b", "c", "d")
			if err := s.CreateRun(ctx, r); err != nil {
				b.Error(err)
				return
			}
			for k := range r.Steps {
				st := runtime.StepState{ID: r.Steps[k].ID, Status: runtime.StepCompleted, Attempts: 1, StartedAt: t0, EndedAt: t0, Output: out}
				if err := s.UpdateStep(ctx, r.ID, k, st); err != nil {
					b.Error(err)
					return
				}
				r.Steps[k] = st
			}
			r.Status, r.EndedAt = runtime.RunCompleted, t0.Add(time.Second)
			if err := s.FinishRun(ctx, r); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
