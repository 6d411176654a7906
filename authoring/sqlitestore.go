package authoring

import (
	"context"
	"errors"
	"fmt"

	"github.com/vmcp-dev/vmcp/store/sqlite"
)

// SQLiteStore keeps authored workflows in the run store's SQLite file
// (the workflows table of schema version 4). It does not own the file:
// Close leaves it open for the runs.
type SQLiteStore struct{ db *sqlite.Store }

// NewSQLiteStore uses db, an open run store.
func NewSQLiteStore(db *sqlite.Store) *SQLiteStore { return &SQLiteStore{db: db} }

func fromRow(w sqlite.Workflow) Version {
	return Version{Name: w.Name, Version: w.Version, Source: w.Source, CreatedAt: w.CreatedAt, Deleted: w.Deleted}
}

// fromRows converts a query's rows, passing its error on.
func fromRows(rows []sqlite.Workflow, err error) ([]Version, error) {
	if err != nil {
		return nil, err
	}
	out := make([]Version, len(rows))
	for i, w := range rows {
		out[i] = fromRow(w)
	}
	return out, nil
}

func notFound(name string, err error) error {
	if errors.Is(err, sqlite.ErrNoWorkflow) {
		return fmt.Errorf("%w: %q was never saved", ErrNotFound, name)
	}
	return err
}

func (s *SQLiteStore) Save(ctx context.Context, name, source string, replace bool) (Version, error) {
	w, err := s.db.SaveWorkflow(ctx, name, source, func(latest *sqlite.Workflow) error {
		if latest == nil {
			return nil
		}
		v := fromRow(*latest)
		return allowSave(name, &v, replace)
	})
	if err != nil {
		return Version{}, err
	}
	return fromRow(w), nil
}

func (s *SQLiteStore) Delete(ctx context.Context, name string) (Version, error) {
	if _, err := s.Get(ctx, name, 0); err != nil {
		return Version{}, err
	}
	w, err := s.db.DeleteWorkflow(ctx, name)
	if err != nil {
		return Version{}, notFound(name, err)
	}
	return fromRow(w), nil
}

func (s *SQLiteStore) Get(ctx context.Context, name string, version int) (Version, error) {
	vs, err := s.Versions(ctx, name)
	if err != nil {
		return Version{}, err
	}
	return current(name, vs, version)
}

func (s *SQLiteStore) List(ctx context.Context) ([]Version, error) {
	rows, err := s.db.ListWorkflows(ctx)
	return fromRows(rows, err)
}

func (s *SQLiteStore) Versions(ctx context.Context, name string) ([]Version, error) {
	rows, err := s.db.WorkflowVersions(ctx, name)
	return fromRows(rows, err)
}

func (s *SQLiteStore) Usage(ctx context.Context) (int64, error) {
	return s.db.WorkflowBytes(ctx)
}

func (s *SQLiteStore) Prune(ctx context.Context, name string, keep int) error {
	return s.db.PruneWorkflow(ctx, name, keep)
}

func (s *SQLiteStore) Close() error { return nil }
