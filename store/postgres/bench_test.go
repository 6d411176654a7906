package postgres

// The store's cost, side by side with SQLite: the same run lifecycle the
// engine writes (CreateRun, two UpdateStep calls per step of four steps,
// FinishRun) through store/sqlite and through this store, sequential and
// from 32 goroutines per CPU. Each reports runs/s and step-write-ns (the
// mean latency of one UpdateStep). Postgres runs twice: "durable" is a
// production server's settings (fsync and synchronous_commit on: every
// commit waits for its WAL flush), "nosync" the tests' cluster (fsync
// off), which bounds what the protocol and the server cost without the
// disk. SQLite is its default (WAL, synchronous=NORMAL: no flush per
// commit). The database runs on the same machine, over loopback TCP.
//
//	go test -run '^$' -bench BenchmarkStores -benchtime 2s ./store/postgres

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/sqlite"
)

// benchStore is each store under comparison, opened fresh.
type benchStore struct {
	name string
	open func(b *testing.B) runtime.Store
}

func benchStores(parent *testing.B) []benchStore {
	pg := func(durable bool) func(b *testing.B) runtime.Store {
		var cluster *testenv.Postgres // one per setting, for every sub-benchmark
		return func(b *testing.B) runtime.Store {
			if cluster == nil {
				cluster = testenv.StartPostgres(parent, portLo, portHi, testenv.PostgresOptions{Durable: durable})
			}
			s, err := Open(context.Background(), cluster.NewDatabase(b), Options{MaxConns: 16})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}
	}
	return []benchStore{
		{"sqlite", func(b *testing.B) runtime.Store {
			s, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			return s
		}},
		{"postgres-durable", pg(true)},
		{"postgres-nosync", pg(false)},
	}
}

var benchOut = map[string]any{"text": "some output of a typical size, a sentence or two long", "n": 42.0}

// lifecycle writes one run of four steps and adds each UpdateStep's time
// to stepNanos.
func lifecycle(ctx context.Context, s runtime.Store, id string, steps, stepNanos *atomic.Int64) error {
	r := newRun(id, "a", "b", "c", "d")
	if err := s.CreateRun(ctx, r); err != nil {
		return err
	}
	for k := range r.Steps {
		st := runtime.StepState{ID: r.Steps[k].ID, Status: runtime.StepRunning, Attempts: 1, StartedAt: t0}
		for _, done := range []bool{false, true} {
			if done {
				st.Status, st.EndedAt, st.Output = runtime.StepCompleted, t0.Add(time.Millisecond), benchOut
			}
			start := time.Now()
			if err := s.UpdateStep(ctx, r.ID, k, st); err != nil {
				return err
			}
			stepNanos.Add(int64(time.Since(start)))
			steps.Add(1)
		}
		r.Steps[k] = st
	}
	r.Status, r.EndedAt = runtime.RunCompleted, t0.Add(time.Second)
	return s.FinishRun(ctx, r)
}

// BenchmarkStores runs the lifecycle on each store, sequentially
// ("serial") and from 32 goroutines per CPU ("parallel").
func BenchmarkStores(b *testing.B) {
	for _, bs := range benchStores(b) {
		for _, parallel := range []bool{false, true} {
			mode := "serial"
			if parallel {
				mode = "parallel"
			}
			b.Run(bs.name+"/"+mode, func(b *testing.B) {
				s := bs.open(b)
				ctx := context.Background()
				var next, steps, stepNanos atomic.Int64
				b.ReportAllocs()
				b.ResetTimer()
				start := time.Now()
				if parallel {
					b.SetParallelism(32)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := lifecycle(ctx, s, fmt.Sprintf("r%d", next.Add(1)), &steps, &stepNanos); err != nil {
								b.Error(err)
								return
							}
						}
					})
				} else {
					for b.Loop() {
						if err := lifecycle(ctx, s, fmt.Sprintf("r%d", next.Add(1)), &steps, &stepNanos); err != nil {
							b.Fatal(err)
						}
					}
				}
				elapsed := time.Since(start)
				b.ReportMetric(float64(next.Load())/elapsed.Seconds(), "runs/s")
				if n := steps.Load(); n > 0 {
					b.ReportMetric(float64(stepNanos.Load())/float64(n), "step-write-ns")
				}
			})
		}
	}
}
