package sqlite

// Authored workflows (schema version 4). Every save is a new row of the
// workflows table, numbered one past the highest version the name ever
// had, so a number is never reused, also after a delete. Deleting marks
// the newest row deleted; saving again starts the next version. The save
// runs through the single writer (writer.go), inside one transaction that
// reads the newest row, asks the caller's rule whether the save may go on,
// and inserts: concurrent saves of one name get distinct, consecutive
// numbers and none is lost.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/vmcp-dev/vmcp/store/internal/rowcodec"
)

// Workflow is one stored version of an authored workflow.
type Workflow struct {
	Name      string
	Version   int
	Source    string
	CreatedAt time.Time
	// Deleted is set on the newest version of a deleted workflow.
	Deleted bool
}

// ErrNoWorkflow is returned for a name (or version) that was never saved.
var ErrNoWorkflow = errors.New("no such authored workflow")

// SaveWorkflow stores source as the next version of name. allow sees the
// newest stored version (nil when there is none) inside the transaction
// and may refuse the save by returning an error, which SaveWorkflow
// returns unchanged.
func (s *Store) SaveWorkflow(ctx context.Context, name, source string, allow func(latest *Workflow) error) (Workflow, error) {
	ctx = context.WithoutCancel(ctx) // a write is never abandoned half way
	var saved Workflow
	err := s.write(false, func(tx *sql.Tx) error {
		latest, err := latestWorkflow(ctx, tx, name)
		if err != nil && !errors.Is(err, ErrNoWorkflow) {
			return err
		}
		if allow != nil {
			if err := allow(latest); err != nil {
				return err
			}
		}
		saved = Workflow{Name: name, Version: 1, Source: source, CreatedAt: s.opts.now().UTC()}
		if latest != nil {
			saved.Version = latest.Version + 1
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO workflows (name, version, source, created_at, deleted) VALUES (?, ?, ?, ?, 0)`,
			name, saved.Version, source, saved.CreatedAt.UnixNano())
		return err
	})
	if err != nil {
		return Workflow{}, err
	}
	return saved, nil
}

// DeleteWorkflow marks name deleted and returns its newest version. It is
// ErrNoWorkflow when name has no version or is deleted already.
func (s *Store) DeleteWorkflow(ctx context.Context, name string) (Workflow, error) {
	ctx = context.WithoutCancel(ctx)
	var wf Workflow
	err := s.write(false, func(tx *sql.Tx) error {
		latest, err := latestWorkflow(ctx, tx, name)
		if err != nil {
			return err
		}
		if latest.Deleted {
			return fmt.Errorf("%w: %q was deleted already", ErrNoWorkflow, name)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE workflows SET deleted = 1 WHERE name = ? AND version = ?`, name, latest.Version); err != nil {
			return err
		}
		wf = *latest
		wf.Deleted = true
		return nil
	})
	return wf, err
}

// WorkflowBytes returns the bytes of every stored version's source.
func (s *Store) WorkflowBytes(ctx context.Context) (int64, error) {
	var n int64
	err := s.r.QueryRowContext(ctx, `SELECT COALESCE(SUM(length(CAST(source AS BLOB))), 0) FROM workflows`).Scan(&n)
	return n, err
}

// PruneWorkflow removes the versions of name older than its newest keep
// ones (none when keep <= 0). The newest stays, so version numbers are
// never reused.
func (s *Store) PruneWorkflow(ctx context.Context, name string, keep int) error {
	if keep <= 0 {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	return s.write(false, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM workflows WHERE name = ? AND version <= (SELECT MAX(version) FROM workflows WHERE name = ?) - ?`,
			name, name, keep)
		return err
	})
}

// GetWorkflow returns one version of name; version 0 means the newest
// (which may be Deleted).
func (s *Store) GetWorkflow(ctx context.Context, name string, version int) (Workflow, error) {
	var row *sql.Row
	if version == 0 {
		row = s.r.QueryRowContext(ctx, `SELECT `+workflowColumns+` FROM workflows WHERE name = ? ORDER BY version DESC LIMIT 1`, name)
	} else {
		row = s.r.QueryRowContext(ctx, `SELECT `+workflowColumns+` FROM workflows WHERE name = ? AND version = ?`, name, version)
	}
	wf, err := scanWorkflow(row)
	if err != nil {
		return Workflow{}, err
	}
	return *wf, nil
}

// ListWorkflows returns the newest version of every workflow that is not
// deleted, sorted by name.
func (s *Store) ListWorkflows(ctx context.Context) ([]Workflow, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+workflowColumns+` FROM workflows w
		WHERE version = (SELECT MAX(version) FROM workflows WHERE name = w.name) AND deleted = 0
		ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scanWorkflows(rows)
}

// WorkflowVersions returns every stored version of name, oldest first.
func (s *Store) WorkflowVersions(ctx context.Context, name string) ([]Workflow, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+workflowColumns+` FROM workflows WHERE name = ? ORDER BY version`, name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scanWorkflows(rows)
}

const workflowColumns = `name, version, source, created_at, deleted`

type scanner interface{ Scan(dest ...any) error }

func scanWorkflow(row scanner) (*Workflow, error) {
	var (
		wf      Workflow
		created int64
	)
	if err := row.Scan(&wf.Name, &wf.Version, &wf.Source, &created, &wf.Deleted); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, ErrNoWorkflow
		}
		return nil, err
	}
	wf.CreatedAt = rowcodec.FromNanos(created)
	return &wf, nil
}

func scanWorkflows(rows *sql.Rows) ([]Workflow, error) {
	var out []Workflow
	for rows.Next() {
		wf, err := scanWorkflow(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *wf)
	}
	return out, rows.Err()
}

func latestWorkflow(ctx context.Context, tx *sql.Tx, name string) (*Workflow, error) {
	return scanWorkflow(tx.QueryRowContext(ctx, `SELECT `+workflowColumns+` FROM workflows WHERE name = ? ORDER BY version DESC LIMIT 1`, name))
}
