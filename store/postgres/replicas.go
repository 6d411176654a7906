package postgres

// The live replicas. A vmcp run process that shares something among the
// replicas on one database (the backends' rate limits) announces itself:
// its row in replicas carries the database's time of its last heartbeat
// (every LeaseTTL/3, with the leases), and it deletes the row when it
// closes. A replica is live while its row was written within LeaseTTL,
// the same rule as a run's lease, so a replica killed without closing
// stops counting when its runs may be taken over (its row goes a day
// later). Processes that only
// read the store (`vmcp runs`, `vmcp workflows`) never announce.

import (
	"context"
	"time"
)

// Announce makes this store's process count in LiveReplicas from now
// until Close.
func (s *Store) Announce(ctx context.Context) error {
	// The rows of replicas that were killed (a name is never used twice)
	// go after a day.
	if _, err := s.pool.Exec(ctx, `DELETE FROM replicas WHERE seen_at < now() - interval '1 day'`); err != nil {
		return err
	}
	if err := s.upsertReplica(ctx); err != nil {
		return err
	}
	s.announced.Store(true)
	return nil
}

// LiveReplicas counts the announced replicas whose heartbeat is at most
// LeaseTTL old (this one included, once announced).
func (s *Store) LiveReplicas(ctx context.Context) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM replicas WHERE seen_at > now() - $1 * interval '1 microsecond'`,
		s.opts.LeaseTTL.Microseconds()).Scan(&n)
	return n, err
}

// beat writes the heartbeat of an announced replica.
func (s *Store) beat(ctx context.Context) {
	if !s.announced.Load() || s.released.Load() {
		return
	}
	if err := s.upsertReplica(ctx); err != nil {
		s.log.Warn("announcing this replica failed; the others count it out if this lasts", "replica", s.Replica, "err", err)
	}
}

func (s *Store) upsertReplica(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO replicas (name, seen_at) VALUES ($1, now())
		ON CONFLICT (name) DO UPDATE SET seen_at = now()`, s.Replica)
	return err
}

// withdraw deletes an announced replica's row (Close).
func (s *Store) withdraw() {
	if !s.announced.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.pool.Exec(ctx, `DELETE FROM replicas WHERE name = $1`, s.Replica); err != nil {
		s.log.Warn("withdrawing this replica", "replica", s.Replica, "err", err)
	}
}
