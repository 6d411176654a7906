package sqlite

// Crash recovery and retention. Both are whole-table maintenance that runs
// on the writer connection, each in one transaction, so a concurrent reader
// sees either the old or the new state of a run, never half of it.

import (
	"context"
	"database/sql"
	"time"
)

// recover marks every run left pending or running as interrupted. See the
// top of sqlite.go for what is recorded.
func (s *Store) recover() error {
	ctx := context.Background()
	now := s.opts.now()
	return s.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id FROM runs WHERE status IN ('pending', 'running') ORDER BY started_at`)
		if err != nil {
			return err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, id := range ids {
			var total, finished int
			if err := tx.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE status IN ('completed', 'failed', 'skipped'))
				FROM steps WHERE run_id = ?`, id).Scan(&total, &finished); err != nil {
				return err
			}
			var last string
			var lastAt sql.NullInt64
			err := tx.QueryRowContext(ctx, `SELECT id, ended_at FROM steps
				WHERE run_id = ? AND status IN ('completed', 'failed', 'skipped') AND ended_at IS NOT NULL
				ORDER BY ended_at DESC, idx DESC LIMIT 1`, id).Scan(&last, &lastAt)
			if err != nil && err != sql.ErrNoRows {
				return err
			}
			e, err := encodeError(interruptedError(now, last, fromNanos(lastAt.Int64), finished, total))
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE steps SET status = 'failed', ended_at = ?,
				error = 'interrupted: vmcp stopped while this step was running',
				note = CASE WHEN note = '' THEN 'marked failed by crash recovery' ELSE note || '; marked failed by crash recovery' END
				WHERE run_id = ? AND status = 'running'`, now.UnixNano(), id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = 'interrupted', ended_at = ?, error = ? WHERE id = ?`,
				now.UnixNano(), e, id); err != nil {
				return err
			}
			s.log.Warn("run interrupted by a previous stop", "run_id", id, "last_finished_step", last,
				"finished_steps", finished, "total_steps", total)
		}
		s.Recovered = ids
		return nil
	})
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

// pruneInterval is how often the retention loop runs.
func pruneInterval(retention time.Duration) time.Duration {
	return min(max(retention/4, 10*time.Millisecond), 10*time.Minute)
}

// retain is the retention loop; Close stops it.
func (s *Store) retain() {
	defer close(s.done)
	t := time.NewTicker(pruneInterval(s.opts.Retention))
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			n, err := s.Prune(context.Background(), s.opts.now().Add(-s.opts.Retention))
			if err != nil {
				s.log.Warn("retention: pruning old runs failed", "err", err)
			} else if n > 0 {
				s.log.Info("retention: deleted old runs", "count", n, "retention", s.opts.Retention.String())
			}
		}
	}
}
