package authoring

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/store/postgres"
	"github.com/vmcp-dev/vmcp/store/sqlite"
)

// stores returns one of each Store, fresh; reopen gives a new Store over
// the same data (nil for the memory store, whose data ends with it).
func stores(t *testing.T) map[string]func() (Store, func() Store) {
	return map[string]func() (Store, func() Store){
		"memory": func() (Store, func() Store) { return NewMemoryStore(), nil },
		"files": func() (Store, func() Store) {
			dir := t.TempDir()
			open := func() Store {
				s, err := NewFileStore(dir)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			return open(), open
		},
		"sqlite": func() (Store, func() Store) {
			path := filepath.Join(t.TempDir(), "state.db")
			var db *sqlite.Store
			open := func() Store {
				if db != nil {
					db.Close()
				}
				var err error
				db, err = sqlite.Open(path, sqlite.Options{})
				if err != nil {
					t.Fatal(err)
				}
				return NewSQLiteStore(db)
			}
			t.Cleanup(func() { db.Close() })
			return open(), open
		},
		// A real PostgreSQL cluster, started for the test that asks.
		"postgres": func() (Store, func() Store) {
			url := testenv.StartPostgres(t, 17440, 17459, testenv.PostgresOptions{}).NewDatabase(t)
			var db *postgres.Store
			open := func() Store {
				if db != nil {
					db.Close()
				}
				var err error
				db, err = postgres.Open(context.Background(), url, postgres.Options{})
				if err != nil {
					t.Fatal(err)
				}
				return NewPostgresStore(db)
			}
			t.Cleanup(func() { db.Close() })
			return open(), open
		},
	}
}

// TestConcurrentSaves: many goroutines save one name at once (replace
// set); every version number from 1 to N appears exactly once, and each
// version holds the source of one save.
func TestConcurrentSaves(t *testing.T) {
	for kind, mk := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			s, _ := mk()
			ctx := context.Background()
			const n = 30
			var wg sync.WaitGroup
			got := make([]int, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					v, err := s.Save(ctx, "w", fmt.Sprintf("source %d\n", i), true)
					if err != nil {
						t.Error(err)
						return
					}
					got[i] = v.Version
				}()
			}
			wg.Wait()
			sort.Ints(got)
			for i, v := range got {
				if v != i+1 {
					t.Fatalf("%s: the saves got versions %v; want 1..%d, each once", kind, got, n)
				}
			}
			vs, err := s.Versions(ctx, "w")
			if err != nil || len(vs) != n {
				t.Fatalf("Versions = %d, %v; want %d", len(vs), err, n)
			}
			seen := map[string]bool{}
			for i, v := range vs {
				if v.Version != i+1 || seen[v.Source] {
					t.Fatalf("version %d = %+v; want each version once with its own source", i+1, v)
				}
				seen[v.Source] = true
			}
		})
	}
}

// TestStoreLifecycle: replace rule, delete, history, numbering after a
// delete, and persistence across a reopen.
func TestStoreLifecycle(t *testing.T) {
	for kind, mk := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			s, reopen := mk()
			ctx := context.Background()
			if v, err := s.Save(ctx, "w", "one", false); err != nil || v.Version != 1 {
				t.Fatalf("first save = %+v, %v; want version 1", v, err)
			}
			if _, err := s.Save(ctx, "w", "two", false); !errors.Is(err, ErrExists) {
				t.Fatalf("save without replace over version 1 = %v; want ErrExists", err)
			}
			if v, err := s.Save(ctx, "w", "two", true); err != nil || v.Version != 2 {
				t.Fatalf("save with replace = %+v, %v; want version 2", v, err)
			}
			if v, err := s.Get(ctx, "w", 0); err != nil || v.Source != "two" {
				t.Fatalf("Get(w) = %+v, %v; want version 2's source", v, err)
			}
			if v, err := s.Get(ctx, "w", 1); err != nil || v.Source != "one" {
				t.Fatalf("Get(w, 1) = %+v, %v; want version 1's source", v, err)
			}
			if _, err := s.Delete(ctx, "w"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx, "w", 0); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get(w) after delete = %v; want ErrNotFound", err)
			}
			if _, err := s.Delete(ctx, "w"); !errors.Is(err, ErrNotFound) {
				t.Errorf("a second delete = %v; want ErrNotFound", err)
			}
			if list, _ := s.List(ctx); len(list) != 0 {
				t.Errorf("List after delete = %+v; want none", list)
			}
			if v, err := s.Save(ctx, "w", "three", false); err != nil || v.Version != 3 {
				t.Fatalf("save after delete = %+v, %v; want version 3 without replace", v, err)
			}
			if _, err := s.Save(ctx, "other", "x", false); err != nil {
				t.Fatal(err)
			}
			if reopen == nil {
				return
			}
			s = reopen()
			list, err := s.List(ctx)
			if err != nil || len(list) != 2 || list[0].Name != "other" || list[1].Name != "w" || list[1].Version != 3 || list[1].Source != "three" {
				t.Errorf("List after reopening = %+v, %v; want other v1 and w v3", list, err)
			}
		})
	}
}

// TestFileStoreLayout: the directory holds the current file and every
// version file, as documented.
func TestFileStoreLayout(t *testing.T) {
	dir := t.TempDir()
	s, err := NewFileStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s.Save(ctx, "w", "one", false)
	s.Save(ctx, "w", "two", true)
	for file, want := range map[string]string{"w.yaml": "two", "w.v1.yaml": "one", "w.v2.yaml": "two"} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", file, b, err, want)
		}
	}
	if _, err := s.Save(ctx, "../evil", "x", false); err == nil {
		t.Error("Save(../evil) = nil; want an error (names stay in the directory)")
	}
}

// TestStorePruneAndUsage: Prune keeps a name's newest versions, the next
// save still gets one past the newest, a deleted name keeps its deleted
// mark, and Usage counts the bytes of what is kept, in every store.
func TestStorePruneAndUsage(t *testing.T) {
	for kind, mk := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			s, _ := mk()
			ctx := context.Background()
			for i := 1; i <= 5; i++ {
				if _, err := s.Save(ctx, "w", fmt.Sprintf("v%d", i), true); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.Save(ctx, "other", "1234567", false); err != nil {
				t.Fatal(err)
			}
			if err := s.Prune(ctx, "w", 2); err != nil {
				t.Fatal(err)
			}
			vs, err := s.Versions(ctx, "w")
			if err != nil || len(vs) != 2 || vs[0].Version != 4 || vs[1].Version != 5 {
				t.Fatalf("versions after Prune(w, 2) = %+v, %v; want 4 and 5", vs, err)
			}
			if n, err := s.Usage(ctx); err != nil || n != 2*2+7 {
				t.Errorf("Usage = %d, %v; want %d (v4, v5 and other's 7 bytes)", n, err, 2*2+7)
			}
			if _, err := s.Get(ctx, "w", 1); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get(w, 1) after pruning = %v; want ErrNotFound", err)
			}
			if v, err := s.Save(ctx, "w", "v6", true); err != nil || v.Version != 6 {
				t.Errorf("save after pruning = %+v, %v; want version 6", v, err)
			}
			if _, err := s.Delete(ctx, "w"); err != nil {
				t.Fatal(err)
			}
			if err := s.Prune(ctx, "w", 1); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx, "w", 0); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get(w) of a deleted, pruned workflow = %v; want ErrNotFound", err)
			}
			if v, err := s.Save(ctx, "w", "v7", false); err != nil || v.Version != 7 {
				t.Errorf("save after delete and prune = %+v, %v; want version 7", v, err)
			}
		})
	}
}
