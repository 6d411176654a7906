package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/vmcp-dev/vmcp/runtime"
)

// TestConcurrentSavesKeepEveryVersion: many goroutines save one name at
// once; every version number from 1 to N appears exactly once, each with
// the source its save sent.
func TestConcurrentSavesKeepEveryVersion(t *testing.T) {
	s, _ := openTemp(t, Options{})
	ctx := context.Background()
	const n = 40
	var wg sync.WaitGroup
	got := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wf, err := s.SaveWorkflow(ctx, "w", fmt.Sprintf("source %d", i), nil)
			if err != nil {
				t.Error(err)
			}
			got[i] = wf.Version
		}()
	}
	wg.Wait()
	versions, err := s.WorkflowVersions(ctx, "w")
	if err != nil || len(versions) != n {
		t.Fatalf("WorkflowVersions = %d versions, %v; want %d", len(versions), err, n)
	}
	sort.Ints(got)
	for i, v := range got {
		if v != i+1 {
			t.Fatalf("saves got versions %v; want each of 1..%d exactly once", got, n)
		}
	}
	sources := map[string]bool{}
	for i, v := range versions {
		if v.Version != i+1 || sources[v.Source] {
			t.Fatalf("version %d = %+v; want versions in order, each with its own save's source", i+1, v)
		}
		sources[v.Source] = true
	}
}

// TestWorkflowLifecycle: the allow rule sees the newest version, a delete
// hides the workflow from the list and the next save takes the next
// number.
func TestWorkflowLifecycle(t *testing.T) {
	s, path := openTemp(t, Options{})
	ctx := context.Background()
	refuse := errors.New("exists")
	if _, err := s.SaveWorkflow(ctx, "w", "v1", func(latest *Workflow) error {
		if latest != nil {
			t.Errorf("allow saw %+v for a new name; want nil", latest)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SaveWorkflow(ctx, "w", "v2", func(latest *Workflow) error { return refuse }); !errors.Is(err, refuse) {
		t.Fatalf("SaveWorkflow with a refusing rule = %v; want its error", err)
	}
	if wf, err := s.GetWorkflow(ctx, "w", 0); err != nil || wf.Version != 1 || wf.Source != "v1" {
		t.Fatalf("GetWorkflow(w) = %+v, %v; want version 1 (the refused save stored nothing)", wf, err)
	}
	if _, err := s.SaveWorkflow(ctx, "w", "v2", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteWorkflow(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteWorkflow(ctx, "w"); !errors.Is(err, ErrNoWorkflow) {
		t.Errorf("deleting twice = %v; want ErrNoWorkflow", err)
	}
	if list, err := s.ListWorkflows(ctx); err != nil || len(list) != 0 {
		t.Errorf("ListWorkflows after delete = %+v, %v; want none", list, err)
	}
	if wf, err := s.GetWorkflow(ctx, "w", 1); err != nil || wf.Source != "v1" {
		t.Errorf("GetWorkflow(w, 1) after delete = %+v, %v; want the history kept", wf, err)
	}
	wf, err := s.SaveWorkflow(ctx, "w", "v3", nil)
	if err != nil || wf.Version != 3 {
		t.Fatalf("saving after a delete = %+v, %v; want version 3 (numbers are never reused)", wf, err)
	}
	if _, err := s.GetWorkflow(ctx, "nope", 0); !errors.Is(err, ErrNoWorkflow) {
		t.Errorf("GetWorkflow(nope) = %v; want ErrNoWorkflow", err)
	}
	s.Close()
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	list, err := s2.ListWorkflows(ctx)
	if err != nil || len(list) != 1 || list[0].Version != 3 || list[0].Source != "v3" {
		t.Errorf("ListWorkflows after reopening = %+v, %v; want w version 3", list, err)
	}
}

// TestRunRecordsWorkflowVersion: the version and draft mark of a run
// survive the store.
func TestRunRecordsWorkflowVersion(t *testing.T) {
	s, _ := openTemp(t, Options{})
	ctx := context.Background()
	r := run("r1", "a")
	r.WorkflowVersion, r.Draft = "3", true
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetRun(ctx, "r1")
	if err != nil || got.WorkflowVersion != "3" || !got.Draft {
		t.Fatalf("GetRun = %+v, %v; want version 3, draft", got, err)
	}
}

// TestMigrateFromVersion3: a version 3 file gets the workflows table and
// its runs read with no version.
func TestMigrateFromVersion3(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v3.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range append(migrations[:3:3], `PRAGMA user_version = 3`,
		`INSERT INTO runs (id, workflow, status, started_at, step_count) VALUES ('old', 'wf', 'completed', 1, 0)`) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open(a version 3 file) = %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	old, err := s.GetRun(ctx, "old")
	if err != nil || old.WorkflowVersion != "" || old.Draft || old.Status != runtime.RunCompleted {
		t.Fatalf("GetRun(old) = %+v, %v; want the old run with no version", old, err)
	}
	if _, err := s.SaveWorkflow(ctx, "w", "src", nil); err != nil {
		t.Fatalf("SaveWorkflow after migrating = %v", err)
	}
}
