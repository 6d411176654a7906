package sqlite

// Group commit. SQLite has one writer and every commit costs a WAL append
// and a lock round trip, so under many concurrent runs the commits, not the
// statements, are the bottleneck. CreateRun, UpdateStep and FinishRun
// therefore hand their work to one writer goroutine over an unbuffered
// channel. The writer takes one request, then every request already
// waiting (up to maxBatch), and runs them in a single transaction, each
// multi-statement request inside its own SAVEPOINT so that one failing
// request is rolled back alone and the others still commit (a failing
// single statement is undone by SQLite itself). Only after COMMIT returns does each caller
// get its answer, so "UpdateStep returned" still means "on disk": batching
// changes how many requests share a commit, never whether a request is
// committed when it returns. With no concurrency a batch is one request and
// this is an ordinary transaction per write.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// maxBatch bounds the requests that share one transaction.
const maxBatch = 128

var errClosed = errors.New("sqlite store is closed")

type writeReq struct {
	fn func(*sql.Tx) error
	// single means fn changes the database with at most one statement,
	// which SQLite undoes by itself when it fails, so fn needs no
	// savepoint (UpdateStep, the hot path, saves three statements).
	single bool
	done   chan error
}

// write runs fn in a write transaction shared with other concurrent writes
// and returns fn's error, or the commit's.
func (s *Store) write(single bool, fn func(*sql.Tx) error) error {
	if s.w == nil {
		return errReadOnly
	}
	req := writeReq{fn: fn, single: single, done: make(chan error, 1)}
	select {
	case s.queue <- req:
	case <-s.stop:
		return errClosed
	}
	return <-req.done
}

// writer is the group-commit loop; it exits when stop is closed, after
// serving every request that was already handed over.
func (s *Store) writer() {
	defer close(s.writerDone)
	batch := make([]writeReq, 0, maxBatch)
	for {
		select {
		case req := <-s.queue:
			batch = append(batch[:0], req)
		case <-s.stop:
			return
		}
	more:
		for len(batch) < maxBatch {
			select {
			case req := <-s.queue:
				batch = append(batch, req)
			default:
				break more
			}
		}
		s.commit(batch)
	}
}

// commit runs a batch in one transaction and answers every request.
func (s *Store) commit(batch []writeReq) {
	ctx := context.Background()
	errs := make([]error, len(batch))
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		for _, r := range batch {
			r.done <- err
		}
		return
	}
	for i, r := range batch {
		if r.single {
			errs[i] = r.fn(tx)
			continue
		}
		if _, err := tx.ExecContext(ctx, "SAVEPOINT w"); err != nil {
			errs[i] = err
			continue
		}
		errs[i] = r.fn(tx)
		if errs[i] != nil {
			if _, err := tx.ExecContext(ctx, "ROLLBACK TO w"); err != nil {
				errs[i] = errors.Join(errs[i], fmt.Errorf("rolling back: %w", err))
			}
		}
		if _, err := tx.ExecContext(ctx, "RELEASE w"); err != nil && errs[i] == nil {
			errs[i] = err
		}
	}
	if err := tx.Commit(); err != nil {
		for _, r := range batch {
			r.done <- err
		}
		return
	}
	for i, r := range batch {
		r.done <- errs[i]
	}
}
