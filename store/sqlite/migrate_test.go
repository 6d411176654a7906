package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/vmcp-dev/vmcp/runtime"
)

// TestMigrateFromVersion1 opens a state file written with the first
// schema (before finally_from and the parent link): its runs survive,
// read as top-level runs without finally steps, and child runs and
// finally steps can be recorded at once.
func TestMigrateFromVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		migrations[0],
		`PRAGMA user_version = 1`,
		`INSERT INTO runs (id, workflow, status, started_at, ended_at, output, error, step_count)
			VALUES ('old-run', 'wf', 'completed', 1, 2, '{"ok":true}', NULL, 1)`,
		`INSERT INTO steps (run_id, idx, id, status, attempts) VALUES ('old-run', 0, 'a', 'completed', 1)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open(a version 1 file) = %v; want it migrated", err)
	}
	defer s.Close()
	ctx := context.Background()
	old, err := s.GetRun(ctx, "old-run")
	if err != nil || old.Status != runtime.RunCompleted || old.ParentID != "" || old.FinallyFrom != 0 || len(old.Steps) != 1 {
		t.Fatalf("GetRun(old-run) = %+v, %v; want the completed top-level run with its step and no finally steps", old, err)
	}
	child := run("child", "a", "cleanup")
	child.ParentID, child.ParentStep = "old-run", "a"
	child.FinallyFrom = 1
	if err := s.CreateRun(ctx, child); err != nil {
		t.Fatal(err)
	}
	kids, err := s.ListRuns(ctx, runtime.RunFilter{Parent: "old-run"})
	if err != nil || len(kids) != 1 || kids[0].ParentStep != "a" || kids[0].FinallyFrom != 1 {
		t.Fatalf("ListRuns(Parent: old-run) = %+v, %v; want the child under step a, its finally steps from 1", kids, err)
	}
	var v int
	if err := s.r.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != schemaVersion {
		t.Errorf("user_version = %d, %v; want %d", v, err, schemaVersion)
	}
}

// TestOneMigrationPerVersion: schemaVersion and the migrations list move
// together (two branches adding a migration each once left them apart).
func TestOneMigrationPerVersion(t *testing.T) {
	if len(migrations) != schemaVersion {
		t.Errorf("%d migrations for schema version %d; want one per version", len(migrations), schemaVersion)
	}
}

// TestMigrateToOwners opens a version 5 file (before owners): its run
// reads with no owner, a new run keeps its owner, and the owner filter
// selects by it.
func TestMigrateToOwners(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v5.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	qs := append([]string{}, migrations[:5]...)
	qs = append(qs, `PRAGMA user_version = 5`,
		`INSERT INTO runs (id, workflow, status, started_at, ended_at, output, error, step_count)
			VALUES ('old-run', 'wf', 'completed', 1, 2, NULL, NULL, 0)`)
	for _, q := range qs {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open(a version 5 file) = %v; want it migrated", err)
	}
	defer s.Close()
	ctx := context.Background()
	if old, err := s.GetRun(ctx, "old-run"); err != nil || old.Owner != "" {
		t.Fatalf("GetRun(old-run) = %+v, %v; want the run with no owner", old, err)
	}
	mine := run("mine", "a")
	mine.Owner = "alice"
	if err := s.CreateRun(ctx, mine); err != nil {
		t.Fatal(err)
	}
	mine.Status = runtime.RunCompleted
	if err := s.FinishRun(ctx, mine); err != nil {
		t.Fatal(err)
	}
	for _, summary := range []bool{false, true} {
		got, err := s.ListRuns(ctx, runtime.RunFilter{Owner: "alice", Summary: summary})
		if err != nil || len(got) != 1 || got[0].ID != "mine" || got[0].Owner != "alice" {
			t.Errorf("ListRuns(Owner: alice, Summary: %v) = %+v, %v; want only run mine, owned by alice", summary, got, err)
		}
	}
	if all, err := s.ListRuns(ctx, runtime.RunFilter{}); err != nil || len(all) != 2 {
		t.Errorf("ListRuns(every owner) = %d runs, %v; want 2", len(all), err)
	}
}
