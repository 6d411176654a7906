package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/runtime"
)

// cutRun writes, at path, a run "cut" stopped with a finished step, a step
// in flight and a step not started, plus a finished run "done", and
// closes the store as a killed process would leave it.
func cutRun(t *testing.T, path string, opts Options) *runtime.Run {
	t.Helper()
	ctx := context.Background()
	s, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := run("cut", "a", "b", "c")
	r.Params, r.PlanDigest = map[string]any{"q": "x"}, "digest-1"
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Steps[0] = runtime.StepState{ID: "a", Status: runtime.StepCompleted, Attempts: 1, StartedAt: t0, EndedAt: t0.Add(time.Second),
		Output: map[string]any{"n": 1.0}, Content: map[string]any{"text": "one"}}
	r.Steps[1] = runtime.StepState{ID: "b", Status: runtime.StepRunning, Attempts: 1, StartedAt: t0.Add(time.Second)}
	for i, st := range r.Steps[:2] {
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
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestKeepUnfinished: with KeepUnfinished, Open leaves the run a previous
// process left running exactly as it was recorded (for Engine.Resume) and
// lists it; nothing is marked interrupted.
func TestKeepUnfinished(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	want := cutRun(t, path, Options{})
	s, err := Open(path, Options{KeepUnfinished: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if diff := cmp.Diff([]string{"cut"}, s.Unfinished); diff != "" || len(s.Recovered) != 0 {
		t.Errorf("Unfinished (-want +got):\n%s\nRecovered = %v; want none", diff, s.Recovered)
	}
	got, err := s.GetRun(context.Background(), "cut")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("the unfinished run changed at Open (-want +got):\n%s", diff)
	}
}

// TestInterruptWithReason: a run that cannot resume ends interrupted with
// the reason, its step in flight failed and its finished step kept; a
// second Interrupt, or one of a finished run, changes nothing.
func TestInterruptWithReason(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	cutRun(t, path, Options{})
	at := t0.Add(time.Hour)
	s, err := Open(path, Options{KeepUnfinished: true, now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done, err := s.Interrupt(ctx, "cut", `the workflow "wf" is no longer served`)
	if err != nil || !done {
		t.Fatalf("Interrupt(cut) = %v, %v; want true, nil", done, err)
	}
	got, err := s.GetRun(ctx, "cut")
	if err != nil {
		t.Fatal(err)
	}
	want := `run interrupted: vmcp stopped while the run was going and it cannot resume: the workflow "wf" is no longer served; ` +
		`marked interrupted at 2026-11-30T10:00:00Z; last finished step "a" at 2026-11-30T09:00:01Z (1 of 3 steps finished)`
	if got.Status != runtime.RunInterrupted || got.Error == nil || got.Error.Msg != want || !got.EndedAt.Equal(at) {
		t.Errorf("after Interrupt: status %s, ended %v, error %+v; want interrupted at %v with %q", got.Status, got.EndedAt, got.Error, at, want)
	}
	if st := got.Steps[1]; st.Status != runtime.StepFailed || !strings.Contains(st.Error, "interrupted") {
		t.Errorf("step in flight = %+v; want failed as interrupted", st)
	}
	if st := got.Steps[0]; st.Status != runtime.StepCompleted || st.Content["text"] != "one" {
		t.Errorf("finished step = %+v; want it kept with its content", st)
	}
	for _, id := range []string{"cut", "done"} {
		if again, err := s.Interrupt(ctx, id, "again"); err != nil || again {
			t.Errorf("Interrupt(%s) of a finished run = %v, %v; want false, nil", id, again, err)
		}
	}
	if _, err := s.Interrupt(ctx, "nope", "x"); !errors.Is(err, runtime.ErrRunNotFound) {
		t.Errorf("Interrupt(nope) = %v; want ErrRunNotFound", err)
	}
}

// TestTruncatedSteps: a step whose output or content the cap cut down is
// named, so vmcp knows the run cannot resume faithfully.
func TestTruncatedSteps(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t, Options{MaxOutputBytes: 64})
	r := run("big", "small", "bigout", "bigcontent")
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 200)
	steps := []runtime.StepState{
		{ID: "small", Status: runtime.StepCompleted, Output: map[string]any{"a": 1.0}, Content: map[string]any{"text": "a"}},
		{ID: "bigout", Status: runtime.StepCompleted, Output: map[string]any{"a": long}},
		{ID: "bigcontent", Status: runtime.StepCompleted, Output: map[string]any{"a": 1.0}, Content: map[string]any{"text": long}},
	}
	for i, st := range steps {
		if err := s.UpdateStep(ctx, "big", i, st); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.TruncatedSteps(ctx, "big")
	if err != nil || cmp.Diff([]string{"bigout", "bigcontent"}, got) != "" {
		t.Errorf("TruncatedSteps = %v, %v; want [bigout bigcontent]", got, err)
	}
	rec, err := s.GetRun(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	if note := rec.Steps[2].Note; !strings.Contains(note, "content of 211 bytes truncated by the store (limit 64 bytes)") {
		t.Errorf("note of the step with big content = %q; want it to say the content was truncated", note)
	}
}

// TestMigrateKeepsRunsForResume: a file of the schema before the resume
// migration opens; its runs read with no params and no digest (so vmcp
// does not resume them blindly), and new runs keep both.
func TestMigrateKeepsRunsForResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v3.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		migrations[0], migrations[1], migrations[2], `PRAGMA user_version = 3`,
		`INSERT INTO runs (id, workflow, status, started_at, step_count) VALUES ('old', 'wf', 'running', 1, 1)`,
		`INSERT INTO steps (run_id, idx, id, status, attempts, output) VALUES ('old', 0, 'a', 'completed', 1, '{"n":1}')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s, err := Open(path, Options{KeepUnfinished: true})
	if err != nil {
		t.Fatalf("Open(a version 3 file) = %v; want it migrated", err)
	}
	defer s.Close()
	ctx := context.Background()
	old, err := s.GetRun(ctx, "old")
	if err != nil || old.Params != nil || old.PlanDigest != "" || old.Steps[0].Content != nil || old.Steps[0].Output == nil {
		t.Fatalf("GetRun(old) = %+v, %v; want the run with its step output, no params, digest or content", old, err)
	}
	if cmp.Diff([]string{"old"}, s.Unfinished) != "" {
		t.Errorf("Unfinished = %v; want [old]", s.Unfinished)
	}
	r := run("new", "a")
	r.Params, r.PlanDigest = map[string]any{"k": "v"}, "d"
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetRun(ctx, "new"); err != nil || got.PlanDigest != "d" || got.Params["k"] != "v" {
		t.Errorf("GetRun(new) = %+v, %v; want params and digest kept", got, err)
	}
}

// TestUnreadableColumns: bad JSON written straight into the file (the
// run's params and output, step a's output and content) reads as null:
// GetRun and ListRuns still return the run, step a's note says what it
// could not read, and Unreadable names each column by its place, never
// by its content.
func TestUnreadableColumns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	cutRun(t, path, Options{})
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE runs SET params = '{"secret', output = '[1,' WHERE id = 'cut'`,
		`UPDATE steps SET output = '{"secret', content = '[1]' WHERE run_id = 'cut' AND idx = 0`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err := Open(path, Options{KeepUnfinished: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	got, err := s.GetRun(ctx, "cut")
	if err != nil {
		t.Fatalf("GetRun of a run with unreadable columns: %v", err)
	}
	if got.Params != nil || got.Output != nil || got.Steps[0].Output != nil || got.Steps[0].Content != nil {
		t.Errorf("unreadable values read as %v, %v, %v, %v; want null", got.Params, got.Output, got.Steps[0].Output, got.Steps[0].Content)
	}
	wantNote := "the store cannot read this step's output: it is not valid JSON (at byte 8); the store cannot read this step's content: it is not a JSON object"
	if got.Steps[0].Note != wantNote {
		t.Errorf("step a's note = %q; want %q", got.Steps[0].Note, wantNote)
	}
	if runs, err := s.ListRuns(ctx, runtime.RunFilter{}); err != nil || len(runs) != 2 {
		t.Errorf("ListRuns = %d runs, %v; want both runs", len(runs), err)
	}
	bad, err := s.Unreadable(ctx, "cut")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"output is not valid JSON (at byte 3)", "params is not valid JSON (at byte 8)",
		`step "a" output is not valid JSON (at byte 8)`, `step "a" content is not a JSON object`}
	if diff := cmp.Diff(want, bad); diff != "" {
		t.Errorf("Unreadable (-want +got):\n%s", diff)
	}
	if bad, err := s.Unreadable(ctx, "done"); err != nil || len(bad) != 0 {
		t.Errorf("Unreadable of an intact run = %v, %v; want none", bad, err)
	}
}
