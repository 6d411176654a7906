package postgres

// Authored workflows, as in the SQLite store: every save is a new row,
// numbered one past the highest version the name ever had; deleting marks
// the newest row deleted. A save runs in one transaction that first takes
// a transaction-scoped advisory lock on the name (every replica's saves
// of one name queue there), then reads the newest row, asks the caller's
// rule and inserts: concurrent saves of one name, on any replicas, get
// distinct consecutive numbers and none is lost.
//
// Every save and delete also sends a notification on the channel
// WorkflowsChannel with the workflow's name as payload, in the same
// transaction, so PostgreSQL delivers it on commit to every replica that
// listens (notify.go).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vmcp-dev/vmcp/store/internal/rowcodec"
)

// WorkflowsChannel is the LISTEN/NOTIFY channel of workflow changes.
const WorkflowsChannel = "vmcp_workflows"

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
	var saved Workflow
	ctx = context.WithoutCancel(ctx)
	err := s.tx(ctx, func(tx pgx.Tx) error {
		latest, err := lockLatest(ctx, tx, name)
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
		if _, err := tx.Exec(ctx, `INSERT INTO workflows (name, version, source, created_at, deleted) VALUES ($1, $2, $3, $4, false)`,
			name, saved.Version, source, saved.CreatedAt.UnixNano()); err != nil {
			return err
		}
		return notify(ctx, tx, name)
	})
	if err != nil {
		return Workflow{}, err
	}
	return saved, nil
}

// DeleteWorkflow marks name deleted and returns its newest version. It is
// ErrNoWorkflow when name has no version or is deleted already.
func (s *Store) DeleteWorkflow(ctx context.Context, name string) (Workflow, error) {
	var wf Workflow
	ctx = context.WithoutCancel(ctx)
	err := s.tx(ctx, func(tx pgx.Tx) error {
		latest, err := lockLatest(ctx, tx, name)
		if err != nil {
			return err
		}
		if latest.Deleted {
			return fmt.Errorf("%w: %q was deleted already", ErrNoWorkflow, name)
		}
		if _, err := tx.Exec(ctx, `UPDATE workflows SET deleted = true WHERE name = $1 AND version = $2`, name, latest.Version); err != nil {
			return err
		}
		wf = *latest
		wf.Deleted = true
		return notify(ctx, tx, name)
	})
	return wf, err
}

// lockLatest takes the name's advisory lock and reads its newest row.
func lockLatest(ctx context.Context, tx pgx.Tx, name string) (*Workflow, error) {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('vmcp_workflow:' || $1))`, name); err != nil {
		return nil, err
	}
	return scanWorkflow(tx.QueryRow(ctx, `SELECT `+workflowColumns+` FROM workflows WHERE name = $1 ORDER BY version DESC LIMIT 1`, name))
}

func notify(ctx context.Context, tx pgx.Tx, name string) error {
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, WorkflowsChannel, name)
	return err
}

// WorkflowBytes returns the bytes of every stored version's source.
func (s *Store) WorkflowBytes(ctx context.Context) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT COALESCE(SUM(octet_length(source)), 0) FROM workflows`).Scan(&n)
	return n, err
}

// PruneWorkflow removes the versions of name older than its newest keep
// ones (none when keep <= 0). The newest stays, so version numbers are
// never reused.
func (s *Store) PruneWorkflow(ctx context.Context, name string, keep int) error {
	if keep <= 0 {
		return nil
	}
	_, err := s.pool.Exec(context.WithoutCancel(ctx), `DELETE FROM workflows
		WHERE name = $1 AND version <= (SELECT MAX(version) FROM workflows WHERE name = $1) - $2`, name, keep)
	return err
}

// GetWorkflow returns one version of name; version 0 means the newest
// (which may be Deleted).
func (s *Store) GetWorkflow(ctx context.Context, name string, version int) (Workflow, error) {
	var row pgx.Row
	if version == 0 {
		row = s.pool.QueryRow(ctx, `SELECT `+workflowColumns+` FROM workflows WHERE name = $1 ORDER BY version DESC LIMIT 1`, name)
	} else {
		row = s.pool.QueryRow(ctx, `SELECT `+workflowColumns+` FROM workflows WHERE name = $1 AND version = $2`, name, version)
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
	return s.workflows(ctx, `SELECT `+workflowColumns+` FROM workflows w
		WHERE version = (SELECT MAX(version) FROM workflows WHERE name = w.name) AND NOT deleted
		ORDER BY name`)
}

// WorkflowVersions returns every stored version of name, oldest first.
func (s *Store) WorkflowVersions(ctx context.Context, name string) ([]Workflow, error) {
	return s.workflows(ctx, `SELECT `+workflowColumns+` FROM workflows WHERE name = $1 ORDER BY version`, name)
}

const workflowColumns = `name, version, source, created_at, deleted`

func scanWorkflow(row pgx.Row) (*Workflow, error) {
	var (
		wf      Workflow
		created int64
	)
	if err := row.Scan(&wf.Name, &wf.Version, &wf.Source, &created, &wf.Deleted); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, ErrNoWorkflow
		}
		return nil, err
	}
	wf.CreatedAt = rowcodec.FromNanos(created)
	return &wf, nil
}

func (s *Store) workflows(ctx context.Context, q string, args ...any) ([]Workflow, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
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
