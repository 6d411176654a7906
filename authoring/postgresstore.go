package authoring

import (
	"context"
	"errors"
	"fmt"

	"github.com/vmcp-dev/vmcp/store/postgres"
)

// PostgresStore keeps authored workflows in the run store's PostgreSQL
// database (its workflows table), shared by every replica on it. It does
// not own the store: Close leaves it open for the runs.
type PostgresStore struct{ db *postgres.Store }

// NewPostgresStore uses db, an open run store.
func NewPostgresStore(db *postgres.Store) *PostgresStore { return &PostgresStore{db: db} }

func fromPostgres(w postgres.Workflow) Version {
	return Version{Name: w.Name, Version: w.Version, Source: w.Source, CreatedAt: w.CreatedAt, Deleted: w.Deleted}
}

// fromPostgresRows converts a query's rows, passing its error on.
func fromPostgresRows(rows []postgres.Workflow, err error) ([]Version, error) {
	if err != nil {
		return nil, err
	}
	out := make([]Version, len(rows))
	for i, w := range rows {
		out[i] = fromPostgres(w)
	}
	return out, nil
}

func notFoundPostgres(name string, err error) error {
	if errors.Is(err, postgres.ErrNoWorkflow) {
		return fmt.Errorf("%w: %q was never saved", ErrNotFound, name)
	}
	return err
}

func (s *PostgresStore) Save(ctx context.Context, name, source string, replace bool) (Version, error) {
	w, err := s.db.SaveWorkflow(ctx, name, source, func(latest *postgres.Workflow) error {
		if latest == nil {
			return nil
		}
		v := fromPostgres(*latest)
		return allowSave(name, &v, replace)
	})
	if err != nil {
		return Version{}, err
	}
	return fromPostgres(w), nil
}

func (s *PostgresStore) Delete(ctx context.Context, name string) (Version, error) {
	if _, err := s.Get(ctx, name, 0); err != nil {
		return Version{}, err
	}
	w, err := s.db.DeleteWorkflow(ctx, name)
	if err != nil {
		return Version{}, notFoundPostgres(name, err)
	}
	return fromPostgres(w), nil
}

func (s *PostgresStore) Get(ctx context.Context, name string, version int) (Version, error) {
	vs, err := s.Versions(ctx, name)
	if err != nil {
		return Version{}, err
	}
	return current(name, vs, version)
}

func (s *PostgresStore) List(ctx context.Context) ([]Version, error) {
	rows, err := s.db.ListWorkflows(ctx)
	return fromPostgresRows(rows, err)
}

func (s *PostgresStore) Versions(ctx context.Context, name string) ([]Version, error) {
	rows, err := s.db.WorkflowVersions(ctx, name)
	return fromPostgresRows(rows, err)
}

func (s *PostgresStore) Usage(ctx context.Context) (int64, error) {
	return s.db.WorkflowBytes(ctx)
}

func (s *PostgresStore) Prune(ctx context.Context, name string, keep int) error {
	return s.db.PruneWorkflow(ctx, name, keep)
}

func (s *PostgresStore) Close() error { return nil }
