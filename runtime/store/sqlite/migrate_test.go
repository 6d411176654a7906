package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestMigrateFromVersion1 opens a file written by a vmcp with schema
// version 1 (before finally_from): its runs stay readable, without finally
// steps, and new runs keep their FinallyFrom.
func TestMigrateFromVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		migrations[0],
		`INSERT INTO runs (id, workflow, status, started_at, step_count) VALUES ('old', 'wf', 'completed', 1, 1)`,
		`INSERT INTO steps (run_id, idx, id, status, attempts) VALUES ('old', 0, 'a', 'completed', 1)`,
		`PRAGMA user_version = 1`,
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	db.Close()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open(version 1 file) = %v", err)
	}
	defer s.Close()
	old, err := s.GetRun(context.Background(), "old")
	if err != nil || old.FinallyFrom != 0 || len(old.Steps) != 1 {
		t.Fatalf("GetRun(old) = %+v, %v; want the run with FinallyFrom 0", old, err)
	}
	var v int
	if err := s.r.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != schemaVersion {
		t.Errorf("user_version = %d, %v; want %d", v, err, schemaVersion)
	}
}
