package postgres

// Notifications between replicas (LISTEN/NOTIFY).
//
// One connection of its own (not the pool's) listens on the channels of
// the handlers registered with OnWorkflowChange and OnCancel, and calls
// them with each notification's payload, one at a time, in the order they
// arrive. PostgreSQL delivers a notification on the commit of the
// transaction that sent it, to every session listening then; a replica
// whose connection is down misses it, so the listener, when it
// (re)connects, calls every workflow handler with "" ("anything may have
// changed"), and cancels are also kept in the runs table
// (cancel_requested), which the heartbeat reads back for the runs this
// replica holds (lease.go): a cancel is never lost, at worst it arrives a
// third of the lease late.
//
// Cancels. RequestCancel marks the run cancel_requested and, when another
// replica holds it, notifies CancelChannel with its id; each replica hands
// the ids of the runs it holds to its cancel handler (the engine's Cancel).

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// CancelChannel is the LISTEN/NOTIFY channel of cancel requests.
const CancelChannel = "vmcp_cancel"

// listener is the notification connection and its handlers.
type listener struct {
	mu       sync.Mutex
	handlers map[string][]func(string)
	started  bool
	cancel   context.CancelFunc
	done     chan struct{}
}

func newListener() *listener { return &listener{handlers: map[string][]func(string){}} }

// OnWorkflowChange calls fn with the name of every authored workflow that
// any replica (this one too) saves or deletes, and with "" after the
// notification connection is up (at first, and again after it was lost:
// what was sent meanwhile is missed).
func (s *Store) OnWorkflowChange(fn func(name string)) { s.on(WorkflowsChannel, fn) }

// OnCancel calls fn with the id of every run this replica holds that a
// replica was asked to cancel (RequestCancel).
func (s *Store) OnCancel(fn func(id string)) {
	s.cancelMu.Lock()
	s.cancelFns = append(s.cancelFns, fn)
	s.cancelMu.Unlock()
	s.on(CancelChannel, func(id string) {
		if h, err := s.Holder(context.Background(), id); err == nil && h == s.Replica {
			s.cancelled(id)
		}
	})
}

// cancelled hands id to the cancel handlers.
func (s *Store) cancelled(id string) {
	s.cancelMu.Lock()
	fns := append([]func(string){}, s.cancelFns...)
	s.cancelMu.Unlock()
	for _, fn := range fns {
		fn(id)
	}
}

// RequestCancel asks the replica that runs id to cancel it: the run is
// marked, and notified when another replica holds it. A finished or
// unknown run is left alone.
func (s *Store) RequestCancel(ctx context.Context, id string) error {
	var holder string
	err := s.pool.QueryRow(context.WithoutCancel(ctx), `UPDATE runs SET cancel_requested = true
		WHERE id = $1 AND status IN ('pending', 'running') RETURNING lease_holder`, id).Scan(&holder)
	if err == pgx.ErrNoRows {
		return nil
	}
	if err != nil || holder == s.Replica {
		return err
	}
	_, err = s.pool.Exec(context.WithoutCancel(ctx), `SELECT pg_notify($1, $2)`, CancelChannel, id)
	return err
}

// on adds a handler, starting the listener with the first one. The
// listener listens on every channel vmcp uses, whatever the handlers.
func (s *Store) on(channel string, fn func(string)) {
	l := s.listen
	l.mu.Lock()
	defer l.mu.Unlock()
	l.handlers[channel] = append(l.handlers[channel], fn)
	if !l.started {
		l.started = true
		ctx, cancel := context.WithCancel(context.Background())
		l.cancel, l.done = cancel, make(chan struct{})
		go s.listenLoop(ctx, l.done)
	}
}

// close stops the listener and waits for it.
func (l *listener) close() {
	l.mu.Lock()
	started := l.started
	l.mu.Unlock()
	if started {
		l.cancel()
		<-l.done
	}
}

func (l *listener) dispatch(channel, payload string) {
	l.mu.Lock()
	fns := append([]func(string){}, l.handlers[channel]...)
	l.mu.Unlock()
	for _, fn := range fns {
		fn(payload)
	}
}

// listenLoop keeps a listening connection until ctx ends, reconnecting
// after an error (every second).
func (s *Store) listenLoop(ctx context.Context, done chan struct{}) {
	defer close(done)
	for ctx.Err() == nil {
		// Whatever was sent before the connection listened is missed.
		err := s.listenOnce(ctx, func() { s.listen.dispatch(WorkflowsChannel, "") })
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("the notification connection to the database failed; reconnecting", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// listenOnce connects, listens on every channel, calls up once it does,
// and dispatches notifications until the connection fails or ctx ends.
func (s *Store) listenOnce(ctx context.Context, up func()) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, c := range []string{WorkflowsChannel, CancelChannel, AnswerChannel} {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{c}.Sanitize()); err != nil {
			return err
		}
	}
	up()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		s.listen.dispatch(n.Channel, n.Payload)
	}
}
