package console

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/sqlite"
)

// storeRuns puts n finished runs of five steps each into the fixture's
// store, one in 17 failed.
func storeRuns(b testing.TB, f *fixture, n int) { fillStore(b, f.store, n) }

// fillStore puts n finished runs of five steps each into store, one in 17
// failed.
func fillStore(b testing.TB, store runtime.Store, n int) {
	ctx := context.Background()
	t0 := time.Now().Add(-time.Hour)
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Second)
		run := &runtime.Run{ID: fmt.Sprintf("run-%04d", i), Workflow: "mixed", Status: runtime.RunRunning, StartedAt: at}
		for _, id := range []string{"fine", "broken", "never", "loop", "big"} {
			run.Steps = append(run.Steps, runtime.StepState{ID: id, Status: runtime.StepCompleted, Attempts: 1, StartedAt: at, EndedAt: at.Add(300 * time.Millisecond)})
		}
		if err := store.CreateRun(ctx, run); err != nil {
			b.Fatal(err)
		}
		run.Status, run.EndedAt = runtime.RunCompleted, at.Add(time.Second)
		if i%17 == 0 {
			run.Status = runtime.RunFailed
			run.Error = &runtime.StepError{Step: "broken", Pos: ir.Pos{File: "wf.yaml", Line: 31, Col: 9}, Msg: "tb.fail returned an error: disk full"}
		}
		if err := store.FinishRun(ctx, run); err != nil {
			b.Fatal(err)
		}
	}
}

func TestThousandRunsAllShown(t *testing.T) {
	f := newFixture(t)
	storeRuns(t, f, 1000)
	if got := len(rowIDs(body(t, f.get(t, "/ui/runs?limit=1000")))); got != 1000 {
		t.Errorf("?limit=1000 shows %d rows", got)
	}
}

// BenchmarkRunsPage1000 renders the runs list with 1,000 stored runs.
func BenchmarkRunsPage1000(b *testing.B) {
	f := newFixture(b)
	storeRuns(b, f, 1000)
	req := httptest.NewRequest("GET", "http://127.0.0.1/ui/runs?limit=1000", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		f.c.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
		b.SetBytes(int64(rec.Body.Len()))
	}
}

// BenchmarkRunPage renders one run's page (the loop with a body included).
func BenchmarkRunPage(b *testing.B) {
	f := newFixture(b)
	run := f.run(b, "mixed", nil)
	req := httptest.NewRequest("GET", "http://127.0.0.1/ui/runs/"+run.ID, nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		f.c.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

// BenchmarkRunsPage1000SQLite is BenchmarkRunsPage1000 over the SQLite
// store, which reads every run with its steps and outputs.
func BenchmarkRunsPage1000SQLite(b *testing.B) {
	f := newFixture(b)
	db, err := sqlite.Open(filepath.Join(b.TempDir(), "state.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	fillStore(b, db, 1000)
	f.c.opts.Store = db
	req := httptest.NewRequest("GET", "http://127.0.0.1/ui/runs?limit=1000", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		f.c.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}
