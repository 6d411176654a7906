package postgres

// Leases: which replica runs which run.
//
// Every unfinished run has a lease: lease_holder names the replica (the
// Store's Replica) that runs it, lease_until says until when, by the
// database's clock (now()), so replicas' clocks never have to agree.
// CreateRun takes the lease for its store; a heartbeat renews every lease
// the store holds each LeaseTTL/3, in one UPDATE. A replica that dies stops
// renewing, and once its leases are past lease_until any other replica may
// take them over (Claim, at Open with Options.KeepUnfinished, and then by
// whoever calls Claim on a schedule: vmcp run does, cmd/vmcp/resume.go).
//
// Exactly once. Claim is one UPDATE ... WHERE lease_until < now() over the
// rows a subquery picked FOR UPDATE SKIP LOCKED: two replicas claiming at
// once lock disjoint rows, and the outer WHERE is evaluated again on the
// locked row, so a run whose lease another claimer renewed in the meantime
// is left alone. A run is therefore taken by exactly one replica, which
// resumes it (or interrupts it) under the resume rules.
//
// Fencing. A replica that was only paused (a stopped VM, a long GC, a
// network partition from the database) may come back after its runs were
// taken over. Its writes of those runs then fail with ErrLeaseLost and
// change nothing: UpdateStep updates only when the run's holder is this
// store, and FinishRun checks the holder under the row's lock. Its
// heartbeat renews nothing it no longer holds.

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/internal/rowcodec"
)

// heartbeat renews this store's leases until Close.
func (s *Store) heartbeat() {
	defer close(s.heartbeatDone)
	t := time.NewTicker(max(s.opts.LeaseTTL/3, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), max(s.opts.LeaseTTL/3, time.Second))
		s.beat(ctx) // replicas.go
		_, cancels, err := s.renew(ctx)
		cancel()
		if err != nil {
			s.log.Warn("renewing the leases of this replica's runs failed; another replica takes them over if this lasts",
				"replica", s.Replica, "lease", s.opts.LeaseTTL.String(), "err", err)
		}
		for _, id := range cancels { // a cancel whose notification was missed
			s.cancelled(id)
		}
	}
}

// Renew extends every lease this store holds by LeaseTTL and returns how
// many it renewed. The heartbeat calls it; tests may call it themselves.
func (s *Store) Renew(ctx context.Context) (int, error) {
	n, _, err := s.renew(ctx)
	return n, err
}

// renew is Renew that also returns the renewed runs whose cancel was
// asked for (RequestCancel).
func (s *Store) renew(ctx context.Context) (int, []string, error) {
	if s.released.Load() {
		return 0, nil, nil
	}
	rows, err := s.pool.Query(ctx, `UPDATE runs SET lease_until = now() + $2 * interval '1 microsecond'
		WHERE lease_holder = $1 AND status IN ('pending', 'running') RETURNING id, cancel_requested`, s.Replica, s.opts.LeaseTTL.Microseconds())
	if err != nil {
		return 0, nil, err
	}
	n := 0
	var cancels []string
	for rows.Next() {
		var id string
		var cancel bool
		if err := rows.Scan(&id, &cancel); err != nil {
			rows.Close()
			return n, cancels, err
		}
		n++
		if cancel {
			cancels = append(cancels, id)
		}
	}
	return n, cancels, rows.Err()
}

// Release gives up every lease this store holds at once, so that another
// replica takes its unfinished runs over at its next claim, and from then
// on refuses this store's writes of runs (ErrLeaseLost): the runs still
// going here stop without recording anything more, and their record is
// the one the next replica resumes. vmcp run calls it when its shutdown
// grace period ends with runs in flight. It returns how many runs it let go.
func (s *Store) Release(ctx context.Context) (int, error) {
	s.released.Store(true)
	tag, err := s.pool.Exec(context.WithoutCancel(ctx), `UPDATE runs SET lease_until = now() - interval '1 millisecond'
		WHERE lease_holder = $1 AND status IN ('pending', 'running')`, s.Replica)
	if err != nil {
		return 0, err
	}
	n := int(tag.RowsAffected())
	s.log.Info("released the leases of this replica's runs for another replica to resume", "replica", s.Replica, "runs", n)
	return n, nil
}

// errReleased is a write after Release.
func (s *Store) errReleased(id string) error {
	return fmt.Errorf("run %s: this replica released its runs (shutting down): %w", id, ErrLeaseLost)
}

// LeaseTTL is how long this store's leases last without a heartbeat.
func (s *Store) LeaseTTL() time.Duration { return s.opts.LeaseTTL }

// Claim takes over every unfinished run whose lease has expired and
// returns their ids, oldest first. No two stores ever claim the same run
// (see the top of the file); the caller resumes each or ends it with
// Interrupt.
func (s *Store) Claim(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `UPDATE runs SET lease_holder = $1, lease_until = now() + $2 * interval '1 microsecond'
		WHERE id IN (SELECT id FROM runs WHERE status IN ('pending', 'running') AND lease_until < now() FOR UPDATE SKIP LOCKED)
		AND status IN ('pending', 'running') AND lease_until < now()
		RETURNING id, started_at, seq`, s.Replica, s.opts.LeaseTTL.Microseconds())
	if err != nil {
		return nil, err
	}
	type claimed struct {
		id       string
		started  int64
		sequence int64
	}
	got, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (claimed, error) {
		var c claimed
		err := r.Scan(&c.id, &c.started, &c.sequence)
		return c, err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(got, func(a, b claimed) int {
		if a.started != b.started {
			return compare(a.started, b.started)
		}
		return compare(a.sequence, b.sequence)
	})
	ids := make([]string, len(got))
	for i, c := range got {
		ids[i] = c.id
	}
	if len(ids) > 0 {
		s.log.Info("took over runs whose replica stopped renewing their lease", "replica", s.Replica, "count", len(ids))
	}
	return ids, nil
}

func compare(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Holder returns the replica that holds run id's lease.
func (s *Store) Holder(ctx context.Context, id string) (string, error) {
	var h string
	err := s.pool.QueryRow(ctx, `SELECT lease_holder FROM runs WHERE id = $1`, id).Scan(&h)
	if err == pgx.ErrNoRows {
		return "", runtime.ErrRunNotFound
	}
	return h, err
}

// recover claims the runs whose lease has expired and lists them in
// Unfinished (Options.KeepUnfinished).
func (s *Store) recover(ctx context.Context) error {
	if !s.opts.KeepUnfinished {
		return nil
	}
	ids, err := s.Claim(ctx)
	s.Unfinished = ids
	return err
}

// Interrupt ends a run left pending or running that cannot resume: the run
// becomes interrupted, its steps left running fail, and Run.Error gives
// reason with the recovery summary, as in the SQLite store. A run that has
// already finished is left alone, and Interrupt reports false; one that
// another replica holds is refused with ErrLeaseLost.
func (s *Store) Interrupt(ctx context.Context, id, reason string) (bool, error) {
	if s.released.Load() {
		return false, s.errReleased(id)
	}
	now := s.opts.now()
	var done bool
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var status, holder string
		if err := tx.QueryRow(ctx, `SELECT status, lease_holder FROM runs WHERE id = $1 FOR UPDATE`, id).Scan(&status, &holder); err != nil {
			if err == pgx.ErrNoRows {
				return fmt.Errorf("run %s: %w", id, runtime.ErrRunNotFound)
			}
			return err
		}
		if status != string(runtime.RunPending) && status != string(runtime.RunRunning) {
			return nil
		}
		if holder != s.Replica {
			return fmt.Errorf("run %s (held by %s): %w", id, holder, ErrLeaseLost)
		}
		var total, finished int
		if err := tx.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE status IN ('completed', 'failed', 'skipped'))
			FROM steps WHERE run_id = $1`, id).Scan(&total, &finished); err != nil {
			return err
		}
		var last string
		var lastAt int64
		err := tx.QueryRow(ctx, `SELECT id, ended_at FROM steps
			WHERE run_id = $1 AND status IN ('completed', 'failed', 'skipped') AND ended_at IS NOT NULL
			ORDER BY ended_at DESC, idx DESC LIMIT 1`, id).Scan(&last, &lastAt)
		if err != nil && err != pgx.ErrNoRows {
			return err
		}
		e, err := rowcodec.EncodeError(rowcodec.InterruptedError(now, reason, last, rowcodec.FromNanos(lastAt), finished, total))
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE steps SET status = 'failed', ended_at = $1,
			error = 'interrupted: vmcp stopped while this step was running',
			note = CASE WHEN note = '' THEN 'marked failed by crash recovery' ELSE note || '; marked failed by crash recovery' END
			WHERE run_id = $2 AND status = 'running'`, now.UnixNano(), id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE runs SET status = 'interrupted', ended_at = $1, error = $2 WHERE id = $3`, now.UnixNano(), e, id); err != nil {
			return err
		}
		done = true
		s.log.Warn("run interrupted by a previous stop", "run_id", id, "last_finished_step", last,
			"finished_steps", finished, "total_steps", total, "reason", reason)
		return nil
	})
	return done, err
}

// Prune deletes finished runs that ended before cutoff and returns how many
// it deleted. Running and pending runs are kept whatever their age.
func (s *Store) Prune(ctx context.Context, cutoff time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM runs WHERE status NOT IN ('pending', 'running')
		AND ended_at IS NOT NULL AND ended_at < $1`, cutoff.UnixNano())
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}

// PruneMaxRuns deletes the oldest finished runs (by started_at) while more
// than maxRuns runs are stored, and returns how many it deleted.
func (s *Store) PruneMaxRuns(ctx context.Context, maxRuns int) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM runs WHERE id IN (
		SELECT id FROM runs WHERE status NOT IN ('pending', 'running')
		ORDER BY started_at, id
		LIMIT GREATEST((SELECT count(*) FROM runs) - $1, 0))`, maxRuns)
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}

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

func (s *Store) logPrune(n int, err error, key string, val any) {
	if err != nil {
		s.log.Warn("retention: pruning old runs failed", "err", err)
	} else if n > 0 {
		s.log.Info("retention: deleted old runs", "count", n, key, val)
	}
}
