package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/storetest"
)

// Ports of this package's clusters.
const portLo, portHi = 17420, 17439

func cluster(t *testing.T) *testenv.Postgres {
	return testenv.StartPostgres(t, portLo, portHi, testenv.PostgresOptions{})
}

func open(t *testing.T, url string, opts Options) *Store {
	t.Helper()
	s, err := Open(context.Background(), url, opts)
	if err != nil {
		t.Fatalf("Open = %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance holds the store to the suite every runtime.Store
// passes, a fresh database per check, and to the retention contract.
func TestConformance(t *testing.T) {
	pg := cluster(t)
	t.Run("Suite", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) runtime.Store { return open(t, pg.NewDatabase(t), Options{}) })
	})
	t.Run("SmallOutputCap", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) runtime.Store { return open(t, pg.NewDatabase(t), Options{MaxOutputBytes: 256}) })
	})
	t.Run("Retention", func(t *testing.T) {
		storetest.Retention(t, func(t *testing.T, r runtime.Retention, now func() time.Time) runtime.Store {
			return open(t, pg.NewDatabase(t), Options{Retention: r.Finished, MaxRuns: r.MaxRuns, now: now, every: r.Every})
		})
	})
}

var t0 = time.Date(2026, 12, 2, 20, 0, 0, 987654321, time.UTC)

func newRun(id string, steps ...string) *runtime.Run {
	r := &runtime.Run{ID: id, Workflow: "wf", Status: runtime.RunRunning, StartedAt: t0, PlanDigest: "d"}
	for _, s := range steps {
		r.Steps = append(r.Steps, runtime.StepState{ID: s, Status: runtime.StepPending})
	}
	return r
}

// claimUntil polls s.Claim until it has taken want runs (in all), failing
// after 30 seconds.
func claimUntil(t *testing.T, s *Store, want int) []string {
	t.Helper()
	var got []string
	deadline := time.Now().Add(30 * time.Second)
	for len(got) < want {
		ids, err := s.Claim(context.Background())
		if err != nil {
			t.Fatalf("Claim = %v", err)
		}
		got = append(got, ids...)
		if time.Now().After(deadline) {
			t.Fatalf("after 30s %s claimed %v; want %d runs", s.Replica, got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return got
}

// TestLeases: a live replica's runs are never claimed; once a replica
// stops, another takes its unfinished runs over (finished ones stay), its
// late writes fail with ErrLeaseLost and change nothing, and the new
// holder finishes the run.
func TestLeases(t *testing.T) {
	pg := cluster(t)
	url := pg.NewDatabase(t)
	ctx := context.Background()
	a := open(t, url, Options{Replica: "a", LeaseTTL: time.Hour})
	for _, id := range []string{"r1", "r2", "done"} {
		if err := a.CreateRun(ctx, newRun(id, "x", "y")); err != nil {
			t.Fatal(err)
		}
	}
	fin := newRun("done", "x", "y")
	fin.Status, fin.EndedAt = runtime.RunCompleted, t0.Add(time.Second)
	if err := a.FinishRun(ctx, fin); err != nil {
		t.Fatal(err)
	}
	// a's leases last an hour: nothing of a's is claimable while a lives.
	b := open(t, url, Options{Replica: "b", LeaseTTL: time.Hour})
	if n, err := a.Renew(ctx); err != nil || n != 2 {
		t.Fatalf("a.Renew = %d, %v; want 2 unfinished runs renewed", n, err)
	}
	if ids, err := b.Claim(ctx); err != nil || len(ids) != 0 {
		t.Fatalf("b.Claim while a holds its runs = %v, %v; want none", ids, err)
	}

	// a "dies": its heartbeat stops, and its lease is made to end now.
	a.Close()
	a2 := open(t, url, Options{Replica: "a", LeaseTTL: time.Hour}) // a's late writes, after a pause
	if _, err := a2.pool.Exec(ctx, `UPDATE runs SET lease_until = now() - interval '1 second' WHERE lease_holder = 'a'`); err != nil {
		t.Fatal(err)
	}
	got := claimUntil(t, b, 2)
	if diff := cmp.Diff([]string{"r1", "r2"}, got); diff != "" {
		t.Fatalf("b claimed (-want +got):\n%s", diff)
	}
	if h, _ := b.Holder(ctx, "r1"); h != "b" {
		t.Fatalf("Holder(r1) = %q; want b", h)
	}
	// a's writes are fenced.
	late := runtime.StepState{ID: "x", Status: runtime.StepCompleted, Attempts: 1, StartedAt: t0, EndedAt: t0.Add(time.Second)}
	if err := a2.UpdateStep(ctx, "r1", 0, late); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("a's UpdateStep after b took r1 = %v; want ErrLeaseLost", err)
	}
	done := newRun("r1", "x", "y")
	done.Status, done.EndedAt = runtime.RunFailed, t0.Add(time.Minute)
	if err := a2.FinishRun(ctx, done); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("a's FinishRun after b took r1 = %v; want ErrLeaseLost", err)
	}
	if r, _ := b.GetRun(ctx, "r1"); r.Status != runtime.RunRunning || r.Steps[0].Status != runtime.StepPending {
		t.Fatalf("after a's fenced writes r1 is %s, step x %s; want running, pending", r.Status, r.Steps[0].Status)
	}
	// b goes on with the run.
	if err := b.UpdateStep(ctx, "r1", 0, late); err != nil {
		t.Fatalf("b.UpdateStep = %v", err)
	}
	done.Status = runtime.RunCompleted
	if err := b.FinishRun(ctx, done); err != nil {
		t.Fatalf("b.FinishRun = %v", err)
	}
	if ok, err := b.Interrupt(ctx, "r2", "the workflow \"wf\" is no longer served"); !ok || err != nil {
		t.Fatalf("Interrupt(r2) = %v, %v; want true", ok, err)
	}
	r2, _ := b.GetRun(ctx, "r2")
	if r2.Status != runtime.RunInterrupted || r2.Error == nil {
		t.Fatalf("r2 = %s %v; want interrupted with an error", r2.Status, r2.Error)
	}
	if ok, _ := b.Interrupt(ctx, "done", "x"); ok {
		t.Errorf("Interrupt of a finished run = true; want false")
	}
}

// TestClaimExactlyOnce: many replicas claim at once the runs of one that
// stopped; every run is taken by exactly one of them.
func TestClaimExactlyOnce(t *testing.T) {
	pg := cluster(t)
	url := pg.NewDatabase(t)
	ctx := context.Background()
	dead := open(t, url, Options{Replica: "dead", LeaseTTL: time.Hour})
	const runs = 200
	for i := range runs {
		if err := dead.CreateRun(ctx, newRun(fmt.Sprintf("run-%03d", i), "s")); err != nil {
			t.Fatal(err)
		}
	}
	dead.Close()
	const replicas = 6
	stores := make([]*Store, replicas)
	for i := range stores {
		stores[i] = open(t, url, Options{Replica: fmt.Sprintf("r%d", i), LeaseTTL: time.Hour})
	}
	if _, err := stores[0].pool.Exec(ctx, `UPDATE runs SET lease_until = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	byRun := map[string][]string{}
	var wg sync.WaitGroup
	for _, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				ids, err := s.Claim(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, id := range ids {
					byRun[id] = append(byRun[id], s.Replica)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(byRun) != runs {
		t.Errorf("%d runs claimed; want %d", len(byRun), runs)
	}
	for id, who := range byRun {
		if len(who) != 1 {
			t.Errorf("run %s claimed by %v; want exactly one replica", id, who)
		}
		if h, _ := stores[0].Holder(ctx, id); h != who[0] {
			t.Errorf("run %s is held by %q; claimed by %q", id, h, who[0])
		}
	}
}

// TestOpenTakesOver: Open with KeepUnfinished lists the expired runs it
// took, oldest first; without, it takes nothing.
func TestOpenTakesOver(t *testing.T) {
	pg := cluster(t)
	ctx := context.Background()
	url := pg.NewDatabase(t)
	a := open(t, url, Options{Replica: "a", LeaseTTL: time.Hour})
	for i, id := range []string{"second", "first"} {
		r := newRun(id, "s")
		r.StartedAt = t0.Add(-time.Duration(i) * time.Second)
		if err := a.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	expire(t, url)
	if b := open(t, url, Options{Replica: "b"}); len(b.Unfinished) != 0 {
		t.Errorf("Open without KeepUnfinished took %v; want nothing", b.Unfinished)
	}
	c := open(t, url, Options{Replica: "c", KeepUnfinished: true})
	if diff := cmp.Diff([]string{"first", "second"}, c.Unfinished); diff != "" {
		t.Errorf("Unfinished (-want +got):\n%s", diff)
	}
	if h, _ := c.Holder(ctx, "first"); h != "c" {
		t.Errorf("Holder(first) = %q; want c", h)
	}
}

func expire(t *testing.T, url string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE runs SET lease_until = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
}

// TestMigrations: replicas opening a new database together migrate it
// once; a database of a newer vmcp is refused.
func TestMigrations(t *testing.T) {
	pg := cluster(t)
	url := pg.NewDatabase(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 5)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(ctx, url, Options{})
			if err == nil {
				s.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("concurrent Open %d = %v", i, err)
		}
	}
	s := open(t, url, Options{})
	if v, err := s.SchemaVersion(ctx); err != nil || v != schemaVersion {
		t.Fatalf("SchemaVersion = %d, %v; want %d", v, err, schemaVersion)
	}
	if _, err := s.pool.Exec(ctx, `UPDATE vmcp_schema SET version = 99`); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, url, Options{}); err == nil || !strings.Contains(err.Error(), "newer than this vmcp understands") {
		t.Errorf("Open of a version-99 database = %v; want an error saying it is newer", err)
	}
	if _, err := Open(ctx, "postgres://nobody:secret@127.0.0.1:1/x?connect_timeout=1", Options{}); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("Open of an unreachable server = %v; want an error without the password", err)
	}
}

// TestWorkflowVersions: saves of one name through two stores (two
// replicas) at once get the numbers 1..N once each; deletes and prunes
// behave as the SQLite store's.
func TestWorkflowVersions(t *testing.T) {
	pg := cluster(t)
	url := pg.NewDatabase(t)
	ctx := context.Background()
	a, b := open(t, url, Options{}), open(t, url, Options{})
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := a
			if i%2 == 1 {
				s = b
			}
			if _, err := s.SaveWorkflow(ctx, "wf", fmt.Sprintf("src %d", i), nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	vs, err := b.WorkflowVersions(ctx, "wf")
	if err != nil || len(vs) != n {
		t.Fatalf("WorkflowVersions = %d versions, %v; want %d", len(vs), err, n)
	}
	seen := map[string]bool{}
	for i, v := range vs {
		if v.Version != i+1 || seen[v.Source] {
			t.Fatalf("version %d: %+v; want number %d and a source not seen before", i, v, i+1)
		}
		seen[v.Source] = true
	}
	refused := errors.New("exists")
	if _, err := a.SaveWorkflow(ctx, "wf", "x", func(latest *Workflow) error { return refused }); err != refused {
		t.Errorf("SaveWorkflow refused by allow = %v; want allow's error", err)
	}
	if _, err := a.DeleteWorkflow(ctx, "wf"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.DeleteWorkflow(ctx, "wf"); !errors.Is(err, ErrNoWorkflow) {
		t.Errorf("second DeleteWorkflow = %v; want ErrNoWorkflow", err)
	}
	if list, _ := b.ListWorkflows(ctx); len(list) != 0 {
		t.Errorf("ListWorkflows after delete = %v; want none", list)
	}
	if err := a.PruneWorkflow(ctx, "wf", 3); err != nil {
		t.Fatal(err)
	}
	if w, err := b.SaveWorkflow(ctx, "wf", "again", nil); err != nil || w.Version != n+1 {
		t.Errorf("save after delete and prune = %+v, %v; want version %d", w, err, n+1)
	}
	if vs, _ := b.WorkflowVersions(ctx, "wf"); len(vs) != 4 {
		t.Errorf("after pruning to 3 and a save, %d versions; want 4", len(vs))
	}
	if _, err := b.GetWorkflow(ctx, "nope", 0); !errors.Is(err, ErrNoWorkflow) {
		t.Errorf("GetWorkflow(nope) = %v; want ErrNoWorkflow", err)
	}
}

// recorder collects handler calls for a test to wait on.
type recorder struct {
	mu  sync.Mutex
	got []string
	ch  chan struct{}
}

func newRecorder() *recorder { return &recorder{ch: make(chan struct{}, 100)} }

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.got = append(r.got, s)
	r.mu.Unlock()
	r.ch <- struct{}{}
}

// waitFor waits (30s at most) until want was recorded.
func (r *recorder) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		found := slices.Contains(r.got, want)
		got := append([]string(nil), r.got...)
		r.mu.Unlock()
		if found {
			return
		}
		select {
		case <-r.ch:
		case <-deadline:
			t.Fatalf("after 30s the handler got %q; want %q among them", got, want)
		}
	}
}

// TestNotifications: a workflow saved through one store reaches the
// other's handler; a cancel asked through a store that does not hold the
// run reaches the holder's handler (notified), and one whose
// notification was missed reaches it with the heartbeat.
func TestNotifications(t *testing.T) {
	pg := cluster(t)
	url := pg.NewDatabase(t)
	ctx := context.Background()
	a := open(t, url, Options{Replica: "a"})
	b := open(t, url, Options{Replica: "b", LeaseTTL: 300 * time.Millisecond})

	wfs := newRecorder()
	a.OnWorkflowChange(wfs.add)
	wfs.waitFor(t, "") // listening
	if _, err := b.SaveWorkflow(ctx, "triage", "src", nil); err != nil {
		t.Fatal(err)
	}
	wfs.waitFor(t, "triage")
	if _, err := b.DeleteWorkflow(ctx, "triage"); err != nil {
		t.Fatal(err)
	}

	cancels := newRecorder()
	b.OnCancel(cancels.add)
	notified := newRecorder()
	b.OnWorkflowChange(notified.add)
	notified.waitFor(t, "") // b's listener is up
	for _, id := range []string{"notified", "missed", "a-runs-it"} {
		s := b
		if id == "a-runs-it" {
			s = a
		}
		if err := s.CreateRun(ctx, newRun(id, "x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.RequestCancel(ctx, "notified"); err != nil {
		t.Fatal(err)
	}
	cancels.waitFor(t, "notified")
	// A cancel marked while nobody listened: the heartbeat delivers it.
	if _, err := a.pool.Exec(ctx, `UPDATE runs SET cancel_requested = true WHERE id = 'missed'`); err != nil {
		t.Fatal(err)
	}
	cancels.waitFor(t, "missed")
	// a's own run: b's handler is not called for it.
	if err := b.RequestCancel(ctx, "a-runs-it"); err != nil {
		t.Fatal(err)
	}
	if err := a.RequestCancel(ctx, "unknown"); err != nil {
		t.Errorf("RequestCancel(unknown) = %v; want nil (nothing to cancel)", err)
	}
	cancels.mu.Lock()
	defer cancels.mu.Unlock()
	if slices.Contains(cancels.got, "a-runs-it") {
		t.Errorf("b's cancel handler got a's run: %v", cancels.got)
	}
}

// TestRelease: a replica that releases its runs (its drain's grace period
// is over) writes nothing more of them, and another replica claims them
// at once, without waiting for the lease to run out.
func TestRelease(t *testing.T) {
	pg := cluster(t)
	url := pg.NewDatabase(t)
	ctx := context.Background()
	a := open(t, url, Options{Replica: "a", LeaseTTL: time.Hour})
	b := open(t, url, Options{Replica: "b", LeaseTTL: time.Hour})
	for _, id := range []string{"r1", "r2"} {
		if err := a.CreateRun(ctx, newRun(id, "x")); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := a.Release(ctx); err != nil || n != 2 {
		t.Fatalf("Release = %d, %v; want 2", n, err)
	}
	st := runtime.StepState{ID: "x", Status: runtime.StepCompleted, Attempts: 1}
	if err := a.UpdateStep(ctx, "r1", 0, st); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("UpdateStep after Release = %v; want ErrLeaseLost", err)
	}
	fin := newRun("r1", "x")
	fin.Status = runtime.RunCancelled
	if err := a.FinishRun(ctx, fin); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("FinishRun after Release = %v; want ErrLeaseLost", err)
	}
	if _, err := a.Interrupt(ctx, "r2", "x"); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("Interrupt after Release = %v; want ErrLeaseLost", err)
	}
	ids, err := b.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"r1", "r2"}, ids); diff != "" {
		t.Errorf("b.Claim after a's Release (-want +got):\n%s", diff)
	}
	if r, _ := b.GetRun(ctx, "r1"); r.Status != runtime.RunRunning || r.Steps[0].Status != runtime.StepPending {
		t.Errorf("r1 after a's refused writes = %s, step %s; want running, pending", r.Status, r.Steps[0].Status)
	}
	if _, err := a.Interrupt(ctx, "r1", "x"); !errors.Is(err, ErrLeaseLost) {
		t.Errorf("a.Interrupt of b's run = %v; want ErrLeaseLost", err)
	}
}

// TestBoard: a task's posted questions are read back; an older post that
// arrives late does not replace a newer one; nil clears them; an answer
// reaches every replica's handler.
func TestBoard(t *testing.T) {
	pg := cluster(t)
	url := pg.NewDatabase(t)
	ctx := context.Background()
	a, b := open(t, url, Options{Replica: "a"}), open(t, url, Options{Replica: "b"})
	if err := a.CreateRun(ctx, newRun("task", "ask")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		seq int64
		q   string
	}{{2, `[{"key":"ask-2"}]`}, {1, `[{"key":"ask-1"}]`}} {
		if err := a.Post(ctx, "task", p.seq, []byte(p.q)); err != nil {
			t.Fatal(err)
		}
	}
	if q, err := b.Questions(ctx, "task"); err != nil || string(q) != `[{"key":"ask-2"}]` {
		t.Errorf("Questions after posts 2 then 1 = %s, %v; want post 2's", q, err)
	}
	got := newRecorder()
	a.OnAnswer(func(id, key string, answer []byte) { got.add(id + " " + key + " " + string(answer)) })
	a.OnWorkflowChange(got.add)
	got.waitFor(t, "")
	if err := b.Answer(ctx, "task", "ask-2", []byte(`{"action":"accept"}`)); err != nil {
		t.Fatal(err)
	}
	got.waitFor(t, `task ask-2 {"action":"accept"}`)
	if err := a.Post(ctx, "task", 3, nil); err != nil {
		t.Fatal(err)
	}
	if q, err := b.Questions(ctx, "task"); err != nil || q != nil {
		t.Errorf("Questions after clearing = %s, %v; want none", q, err)
	}
}

// TestLiveReplicas: announced stores count while their heartbeat is
// fresh; a closed one withdraws at once, a killed one (its heartbeat
// stopped) after the lease; a store that never announced never counts.
func TestLiveReplicas(t *testing.T) {
	url := cluster(t).NewDatabase(t)
	ctx := context.Background()
	a := open(t, url, Options{LeaseTTL: 300 * time.Millisecond})
	b, err := Open(ctx, url, Options{LeaseTTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	reader := open(t, url, Options{LeaseTTL: 300 * time.Millisecond}) // like `vmcp runs`: never announces
	count := func() int {
		t.Helper()
		n, err := reader.LiveReplicas(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 0 {
		t.Fatalf("live replicas before any announced = %d; want 0", n)
	}
	for _, s := range []*Store{a, b} {
		if err := s.Announce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(); n != 2 {
		t.Fatalf("live replicas = %d; want 2", n)
	}
	time.Sleep(time.Second) // three leases: the heartbeats keep both counted
	if n := count(); n != 2 {
		t.Fatalf("live replicas after three leases = %d; want 2 (the heartbeat renews them)", n)
	}
	b.Close()
	if n := count(); n != 1 {
		t.Fatalf("live replicas after one closed = %d; want 1", n)
	}
	// A replica that stops beating without closing (killed): its row
	// stays, and stops counting once the lease has passed.
	if _, err := a.pool.Exec(ctx, `INSERT INTO replicas (name, seen_at) VALUES ('killed', now())`); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 2 {
		t.Fatalf("live replicas with the killed one fresh = %d; want 2", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for count() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the killed replica still counts 10s after its last heartbeat")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
