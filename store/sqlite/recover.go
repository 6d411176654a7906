package sqlite

// Crash recovery and retention. Both are whole-table maintenance that runs
// on the writer connection, each in one transaction, so a concurrent reader
// sees either the old or the new state of a run, never half of it.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/internal/rowcodec"
)

// recover finds every run left pending or running. With KeepUnfinished
// it lists them in Unfinished and changes nothing; otherwise it marks each
// interrupted. See the top of sqlite.go for what is recorded.
func (s *Store) recover() error {
	ctx := context.Background()
	now := s.opts.now()
	return s.tx(ctx, func(tx *sql.Tx) error {
		ids, err := unfinishedIDs(ctx, tx)
		if err != nil {
			return err
		}
		if s.opts.KeepUnfinished {
			s.Unfinished = ids
			return nil
		}
		for _, id := range ids {
			if _, err := s.interruptTx(ctx, tx, id, now, ""); err != nil {
				return err
			}
		}
		s.Recovered = ids
		return nil
	})
}

// unfinishedIDs returns the runs still pending or running, oldest first.
func unfinishedIDs(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM runs WHERE status IN ('pending', 'running') ORDER BY started_at, rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// Interrupt ends a run that a previous process left pending or running and
// that cannot resume: the run becomes interrupted, its steps left running
// fail, and Run.Error gives reason (what stops the resume, e.g. "the
// workflow \"x\" is no longer served") with the recovery summary. A run
// that has already finished is left alone, and Interrupt reports false.
func (s *Store) Interrupt(ctx context.Context, id, reason string) (bool, error) {
	var done bool
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var status string
		if err := tx.QueryRowContext(ctx, `SELECT status FROM runs WHERE id = ?`, id).Scan(&status); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("run %s: %w", id, runtime.ErrRunNotFound)
			}
			return err
		}
		if status != string(runtime.RunPending) && status != string(runtime.RunRunning) {
			return nil
		}
		var err error
		done, err = s.interruptTx(ctx, tx, id, s.opts.now(), reason)
		return err
	})
	return done, err
}

// interruptTx marks one unfinished run interrupted inside tx.
func (s *Store) interruptTx(ctx context.Context, tx *sql.Tx, id string, now time.Time, reason string) (bool, error) {
	var total, finished int
	if err := tx.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE status IN ('completed', 'failed', 'skipped'))
		FROM steps WHERE run_id = ?`, id).Scan(&total, &finished); err != nil {
		return false, err
	}
	var last string
	var lastAt sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT id, ended_at FROM steps
		WHERE run_id = ? AND status IN ('completed', 'failed', 'skipped') AND ended_at IS NOT NULL
		ORDER BY ended_at DESC, idx DESC LIMIT 1`, id).Scan(&last, &lastAt)
	if err != nil && err != sql.ErrNoRows {
		return false, err
	}
	e, err := rowcodec.EncodeError(rowcodec.InterruptedError(now, reason, last, rowcodec.FromNanos(lastAt.Int64), finished, total))
	if err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE steps SET status = 'failed', ended_at = ?,
		error = 'interrupted: vmcp stopped while this step was running',
		note = CASE WHEN note = '' THEN 'marked failed by crash recovery' ELSE note || '; marked failed by crash recovery' END
		WHERE run_id = ? AND status = 'running'`, now.UnixNano(), id); err != nil {
		return false, err
	}
	res, err := tx.ExecContext(ctx, `UPDATE runs SET status = 'interrupted', ended_at = ?, error = ? WHERE id = ?`,
		now.UnixNano(), e, id)
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	s.log.Warn("run interrupted by a previous stop", "run_id", id, "last_finished_step", last,
		"finished_steps", finished, "total_steps", total, "reason", reason)
	return true, nil
}

// TruncatedSteps returns the ids of the run's steps whose stored output
// or content the store cut down to a marker (Options.MaxOutputBytes), in
// plan order. A resumed run could not read them back, so vmcp ends such a
// run with Interrupt rather than resume it.
func (s *Store) TruncatedSteps(ctx context.Context, id string) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT id FROM steps WHERE run_id = ? AND truncated = 1 ORDER BY idx`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var sid string
		if err := rows.Scan(&sid); err != nil {
			return nil, err
		}
		ids = append(ids, sid)
	}
	return ids, rows.Err()
}

// Prune deletes finished runs that ended before cutoff and returns how many
// it deleted. Running and pending runs are kept whatever their age.
func (s *Store) Prune(ctx context.Context, cutoff time.Time) (int, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE status NOT IN ('pending', 'running')
			AND ended_at IS NOT NULL AND ended_at < ?`, cutoff.UnixNano())
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return int(n), err
}

// PruneMaxRuns deletes the oldest finished runs (by started_at) while more
// than maxRuns runs are stored, and returns how many it deleted. Running
// and pending runs are kept and counted.
func (s *Store) PruneMaxRuns(ctx context.Context, maxRuns int) (int, error) {
	var n int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id IN (
			SELECT id FROM runs WHERE status NOT IN ('pending', 'running')
			ORDER BY started_at, id
			LIMIT max((SELECT count(*) FROM runs) - ?, 0))`, maxRuns)
		if err != nil {
			return err
		}
		n, _ = res.RowsAffected()
		return nil
	})
	return int(n), err
}

// retention is the store's runtime.Retention.
func (s *Store) retention() runtime.Retention {
	return runtime.Retention{Finished: s.opts.Retention, MaxRuns: s.opts.MaxRuns, Every: s.opts.every}
}

// retain prunes once by the store's retention, logging what it deleted.
func (s *Store) retain() {
	ctx := context.Background()
	if d := s.opts.Retention; d > 0 {
		n, err := s.Prune(ctx, s.opts.now().Add(-d))
		s.logPrune(n, err, "retention", d.String())
	}
	if m := s.opts.MaxRuns; m > 0 {
		n, err := s.PruneMaxRuns(ctx, m)
		s.logPrune(n, err, "maxRuns", m)
	}
}

// logPrune reports a prune's outcome: a warning when it failed, a line
// when it deleted runs.
func (s *Store) logPrune(n int, err error, key string, val any) {
	if err != nil {
		s.log.Warn("retention: pruning old runs failed", "err", err)
	} else if n > 0 {
		s.log.Info("retention: deleted old runs", "count", n, key, val)
	}
}
