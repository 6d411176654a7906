package sqlite

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/storetest"
)

func openTemp(t *testing.T, opts Options) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(path, opts)
	if err != nil {
		t.Fatalf("Open(%s) = %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) runtime.Store {
		s, _ := openTemp(t, Options{})
		return s
	})
}

// TestConformanceRetention holds the retention loop to the contract
// every store keeps (storetest.Retention).
func TestConformanceRetention(t *testing.T) {
	storetest.Retention(t, func(t *testing.T, r runtime.Retention, now func() time.Time) runtime.Store {
		s, _ := openTemp(t, Options{Retention: r.Finished, MaxRuns: r.MaxRuns, now: now, every: r.Every})
		return s
	})
}

// TestConformanceSmallOutputCap runs the suite with a cap larger than any
// output it writes: the cap must not change small outputs.
func TestConformanceSmallOutputCap(t *testing.T) {
	storetest.Run(t, func(t *testing.T) runtime.Store {
		s, _ := openTemp(t, Options{MaxOutputBytes: 256})
		return s
	})
}

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func run(id string, steps ...string) *runtime.Run {
	r := &runtime.Run{ID: id, Workflow: "wf", Status: runtime.RunRunning, StartedAt: t0}
	for _, s := range steps {
		r.Steps = append(r.Steps, runtime.StepState{ID: s, Status: runtime.StepPending})
	}
	return r
}

// TestOneOwner checks the ownership lock: a second Open of a file in use
// fails with ErrLocked (its recovery would mark live runs interrupted), and
// the file is free again once the owner closes it.
func TestOneOwner(t *testing.T) {
	a, path := openTemp(t, Options{})
	if err := a.CreateRun(context.Background(), run("live", "x")); err != nil {
		t.Fatal(err)
	}
	if b, err := Open(path, Options{}); !errors.Is(err, ErrLocked) {
		if b != nil {
			b.Close()
		}
		t.Fatalf("second Open of a file in use = %v; want ErrLocked", err)
	}
	if r, _ := a.GetRun(context.Background(), "live"); r.Status != runtime.RunRunning {
		t.Fatalf("after a refused second Open, live run = %s; want running", r.Status)
	}
	a.Close()
	b, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open after the owner closed = %v; want nil", err)
	}
	b.Close()
}

// TestReadOnlyWhileWriting reads the file through OpenReadOnly while the
// owner writes to it, as `vmcp runs --db` does next to a running server.
func TestReadOnlyWhileWriting(t *testing.T) {
	w, path := openTemp(t, Options{})
	r, err := OpenReadOnly(path)
	if err != nil {
		t.Fatalf("OpenReadOnly(%s) = %v", path, err)
	}
	defer r.Close()
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	wg.Add(2)
	go func() {
		defer wg.Done()
		for k := 0; k < 40; k++ {
			id := fmt.Sprintf("r%02d", k)
			if err := w.CreateRun(ctx, run(id, "x", "y")); err != nil {
				errs <- err
				return
			}
			if err := w.UpdateStep(ctx, id, 1, runtime.StepState{ID: "y", Status: runtime.StepCompleted, Attempts: 1}); err != nil {
				errs <- err
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for k := 0; k < 40; k++ {
			if _, err := r.ListRuns(ctx, runtime.RunFilter{Limit: 5}); err != nil {
				errs <- fmt.Errorf("read-only ListRuns: %w", err)
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	runs, err := r.ListRuns(ctx, runtime.RunFilter{Limit: 1000})
	if err != nil || len(runs) != 40 || runs[0].ID != "r39" || runs[0].Steps[1].Status != runtime.StepCompleted {
		t.Fatalf("read-only ListRuns after the writes = %d runs, %v; want 40, newest r39 with step y completed", len(runs), err)
	}
	if err := r.CreateRun(ctx, run("nope", "x")); err == nil {
		t.Errorf("CreateRun on a read-only store = nil; want an error")
	}
	if _, err := OpenReadOnly(filepath.Join(t.TempDir(), "missing.db")); err == nil {
		t.Errorf("OpenReadOnly of a missing file = nil; want an error")
	}
}

func TestTruncation(t *testing.T) {
	s, _ := openTemp(t, Options{MaxOutputBytes: 100})
	ctx := context.Background()
	r := run("big", "small", "large")
	big := map[string]any{"text": strings.Repeat("é", 300)} // 600 bytes of UTF-8 plus JSON
	r.Output = big
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	small := runtime.StepState{ID: "small", Status: runtime.StepCompleted, Output: map[string]any{"ok": true}}
	large := runtime.StepState{ID: "large", Status: runtime.StepCompleted, Output: big, Note: "engine note"}
	if err := s.UpdateStep(ctx, "big", 0, small); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdateStep(ctx, "big", 1, large); err != nil {
		t.Fatal(err)
	}
	// The caller's values are untouched.
	if len(big["text"].(string)) != 600 {
		t.Fatalf("UpdateStep changed the caller's output")
	}
	got, err := s.GetRun(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(small, got.Steps[0]); diff != "" {
		t.Errorf("small output changed (-want +got):\n%s", diff)
	}
	fullJSON, _ := json.Marshal(big)
	for what, out := range map[string]any{"step output": got.Steps[1].Output, "run output": got.Output} {
		m, ok := out.(map[string]any)
		if !ok {
			t.Fatalf("truncated %s = %T; want a marker object", what, out)
		}
		if m["truncated"] != true || m["bytes"] != float64(len(fullJSON)) || m["limit"] != 100.0 {
			t.Errorf("truncated %s marker = %v; want truncated true, bytes %d, limit 100", what, m, len(fullJSON))
		}
		preview, _ := m["preview"].(string)
		if preview == "" || !strings.HasPrefix(string(fullJSON), preview) {
			t.Errorf("truncated %s preview %q is not a prefix of the JSON", what, preview)
		}
	}
	wantNote := fmt.Sprintf("engine note; output of %d bytes truncated by the store (limit 100 bytes)", len(fullJSON))
	if got.Steps[1].Note != wantNote {
		t.Errorf("note = %q; want %q", got.Steps[1].Note, wantNote)
	}
}

func TestRetention(t *testing.T) {
	ctx := context.Background()
	now := t0.Add(time.Hour)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s, _ := openTemp(t, Options{Retention: 40 * time.Millisecond, now: clock})

	old := run("old", "a")
	fresh := run("fresh", "a")
	alive := run("alive", "a")
	for _, r := range []*runtime.Run{old, fresh, alive} {
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	old.Status, old.EndedAt = runtime.RunCompleted, now.Add(-time.Second)
	fresh.Status, fresh.EndedAt = runtime.RunFailed, now
	for _, r := range []*runtime.Run{old, fresh} {
		if err := s.FinishRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// The background loop must remove "old" (ended 1s before a clock with
	// 40ms retention) on its own, and only it.
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := s.GetRun(ctx, "old")
		if errors.Is(err, runtime.ErrRunNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run past retention still present after 5s: GetRun = %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, id := range []string{"fresh", "alive"} {
		if _, err := s.GetRun(ctx, id); err != nil {
			t.Errorf("GetRun(%s) = %v; want it kept (within retention or still running)", id, err)
		}
	}
	var steps int
	if err := s.r.QueryRow(`SELECT count(*) FROM steps WHERE run_id = 'old'`).Scan(&steps); err != nil || steps != 0 {
		t.Errorf("steps of the deleted run: %d rows, %v; want 0 (cascade)", steps, err)
	}
	// Time passes: the running run is still kept, the failed one goes.
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	if _, err := s.Prune(ctx, clock().Add(-40*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetRun(ctx, "alive"); err != nil {
		t.Errorf("GetRun(alive) after a long time = %v; running runs must never be pruned", err)
	}
	if _, err := s.GetRun(ctx, "fresh"); !errors.Is(err, runtime.ErrRunNotFound) {
		t.Errorf("GetRun(fresh) after it aged out = %v; want ErrRunNotFound", err)
	}
}

func TestCloseStopsRetention(t *testing.T) {
	s, _ := openTemp(t, Options{Retention: time.Millisecond * 20})
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return within 5s; the retention loop did not stop")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v; want nil", err)
	}
}

func TestRecoveryOnOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := run("cut", "a", "b", "c", "d")
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	a := runtime.StepState{ID: "a", Status: runtime.StepCompleted, Attempts: 1, StartedAt: t0, EndedAt: t0.Add(time.Second), Output: map[string]any{"n": 1.0}}
	b := runtime.StepState{ID: "b", Status: runtime.StepCompleted, Attempts: 2, StartedAt: t0.Add(time.Second), EndedAt: t0.Add(2 * time.Second), Output: map[string]any{"n": 2.0}}
	c := runtime.StepState{ID: "c", Status: runtime.StepRunning, Attempts: 1, StartedAt: t0.Add(2 * time.Second)}
	for i, st := range []runtime.StepState{a, b, c} {
		if err := s.UpdateStep(ctx, "cut", i, st); err != nil {
			t.Fatal(err)
		}
	}
	done := run("done", "a")
	if err := s.CreateRun(ctx, done); err != nil {
		t.Fatal(err)
	}
	done.Status, done.EndedAt = runtime.RunCompleted, t0.Add(time.Minute)
	if err := s.FinishRun(ctx, done); err != nil {
		t.Fatal(err)
	}
	s.Close()

	recoveredAt := t0.Add(time.Hour)
	s2, err := Open(path, Options{now: func() time.Time { return recoveredAt }})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if diff := cmp.Diff([]string{"cut"}, s2.Recovered); diff != "" {
		t.Errorf("Recovered differs (-want +got):\n%s", diff)
	}
	got, err := s2.GetRun(ctx, "cut")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != runtime.RunInterrupted || !got.EndedAt.Equal(recoveredAt) {
		t.Errorf("recovered run status %s ended %v; want interrupted at %v", got.Status, got.EndedAt, recoveredAt)
	}
	wantMsg := `run interrupted: vmcp stopped while the run was going; marked interrupted at 2026-11-30T10:00:00Z; last finished step "b" at 2026-11-30T09:00:02Z (2 of 4 steps finished)`
	if got.Error == nil || got.Error.Msg != wantMsg {
		t.Errorf("recovered run error = %+v; want message %q", got.Error, wantMsg)
	}
	if diff := cmp.Diff([]runtime.StepState{a, b}, got.Steps[:2], cmp.Comparer(func(x, y time.Time) bool { return x.Equal(y) })); diff != "" {
		t.Errorf("finished steps changed by recovery (-want +got):\n%s", diff)
	}
	if st := got.Steps[2]; st.Status != runtime.StepFailed || !strings.Contains(st.Error, "interrupted") || !st.EndedAt.Equal(recoveredAt) {
		t.Errorf("step left running = %+v; want failed, error mentioning interrupted, ended at recovery", st)
	}
	if st := got.Steps[3]; st.Status != runtime.StepPending {
		t.Errorf("step never started = %s; want pending", st.Status)
	}
	if d, _ := s2.GetRun(ctx, "done"); d.Status != runtime.RunCompleted {
		t.Errorf("finished run status after recovery = %s; want completed (untouched)", d.Status)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		path string
		opts Options
		want string
	}{
		{"", Options{}, "empty path"},
		{filepath.Join(dir, "a?b.db"), Options{}, "must not contain"},
		{filepath.Join(dir, "x.db"), Options{Synchronous: "OFF"}, `synchronous "OFF"`},
		{filepath.Join(dir, "x.db"), Options{Retention: -time.Second}, "negative"},
		{filepath.Join(dir, "no-such-dir", "x.db"), Options{}, "no-such-dir"},
	}
	for _, tt := range tests {
		s, err := Open(tt.path, tt.opts)
		if err == nil {
			s.Close()
			t.Errorf("Open(%q, %+v) = nil error; want one containing %q", tt.path, tt.opts, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%q, %+v) = %v; want an error containing %q", tt.path, tt.opts, err, tt.want)
		}
	}
	// A file from a newer vmcp is refused, not silently reused.
	path := filepath.Join(dir, "future.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.Exec(`PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err := Open(path, Options{}); err == nil || !strings.Contains(err.Error(), "schema version 99") {
		if s != nil {
			s.Close()
		}
		t.Errorf("Open of a version-99 file = %v; want a schema version error", err)
	}
}

// TestKillLosesNoFinishedStep runs a writer in a child process, kills it
// with SIGKILL while it writes, and checks that every step the child saw
// committed is in the file.
func TestKillLosesNoFinishedStep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "VMCP_SQLITE_KILL_CHILD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	committed := -1
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "committed "); ok {
			committed, _ = strconv.Atoi(n)
			if committed >= 150 {
				break
			}
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	go func() {
		for sc.Scan() {
		}
	}()
	cmd.Wait()
	if committed < 150 {
		t.Fatalf("child reported %d committed steps before it was killed; want at least 150", committed)
	}
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("reopening after kill -9: %v", err)
	}
	defer s.Close()
	got, err := s.GetRun(context.Background(), "killed")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != runtime.RunInterrupted {
		t.Errorf("status after kill -9 = %s; want interrupted", got.Status)
	}
	for i := 0; i <= committed; i++ {
		st := got.Steps[i]
		if st.Status != runtime.StepCompleted || st.Output.(map[string]any)["i"] != float64(i) {
			t.Fatalf("step %d after kill -9 = %s %v; want completed {i: %d} (the child saw it committed)", i, st.Status, st.Output, i)
		}
	}
}

// TestMain turns the test binary into the writer child of
// TestKillLosesNoFinishedStep when VMCP_SQLITE_KILL_CHILD names a file.
func TestMain(m *testing.M) {
	if path := os.Getenv("VMCP_SQLITE_KILL_CHILD"); path != "" {
		if err := killChild(path); err != nil {
			fmt.Fprintln(os.Stderr, "kill child:", err)
			os.Exit(3)
		}
		return
	}
	os.Exit(m.Run())
}

// killChild completes steps as fast as it can, printing each committed
// index, until it is killed.
func killChild(path string) error {
	s, err := Open(path, Options{})
	if err != nil {
		return err
	}
	names := make([]string, 2000)
	for i := range names {
		names[i] = fmt.Sprintf("s%d", i)
	}
	ctx := context.Background()
	if err := s.CreateRun(ctx, run("killed", names...)); err != nil {
		return err
	}
	for i := range names {
		st := runtime.StepState{ID: names[i], Status: runtime.StepCompleted, Attempts: 1, StartedAt: t0, EndedAt: t0, Output: map[string]any{"i": i}}
		if err := s.UpdateStep(ctx, "killed", i, st); err != nil {
			return err
		}
		fmt.Printf("committed %d\n", i)
	}
	time.Sleep(time.Minute) // the parent kills us long before this
	return errors.New("not killed within a minute")
}

// TestBatchIsolation mixes failing and succeeding writes from many
// goroutines so that they share group-commit transactions: each failure
// must be undone alone, and every success must be committed.
func TestBatchIsolation(t *testing.T) {
	s, _ := openTemp(t, Options{})
	ctx := context.Background()
	if err := s.CreateRun(ctx, run("dup", "orig")); err != nil {
		t.Fatal(err)
	}
	const n = 40
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch i % 3 {
			case 0: // fails after nothing: duplicate id
				errs[i] = s.CreateRun(ctx, run("dup", "x", "y", "z"))
			case 1: // succeeds: a new run with three steps
				errs[i] = s.CreateRun(ctx, run(fmt.Sprintf("new%d", i), "x", "y", "z"))
			case 2: // fails: no such step
				errs[i] = s.UpdateStep(ctx, "dup", 7, runtime.StepState{ID: "bad", Status: runtime.StepFailed})
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if (i%3 == 1) != (err == nil) {
			t.Errorf("write %d (kind %d) = %v; want success only for kind 1", i, i%3, err)
		}
	}
	got, err := s.GetRun(ctx, "dup")
	if err != nil || len(got.Steps) != 1 || got.Steps[0].ID != "orig" {
		t.Errorf("run dup after failed writes = %+v, %v; want its one original step", got, err)
	}
	for i := 1; i < n; i += 3 {
		r, err := s.GetRun(ctx, fmt.Sprintf("new%d", i))
		if err != nil || len(r.Steps) != 3 {
			t.Errorf("run new%d = %v, %v; want it with 3 steps", i, r, err)
		}
	}
}
