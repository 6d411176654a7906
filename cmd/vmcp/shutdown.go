package main

// The graceful shutdown of vmcp run.
//
// The first SIGINT or SIGTERM (main cancels the command's context) starts
// it: vmcp says it is shutting down and how many runs it waits for,
// answers /readyz with 503 (so a load balancer sends new calls to another
// replica; /healthz stays ok), starts no new run (a call that arrives now gets an isError result saying so),
// and keeps serving so that the runs in flight can finish and their results
// reach their clients. When the grace period (--shutdown-grace, default
// 10s) ends first with state.store: postgres, the runs still going are
// first left to another replica (their leases released: the next replica
// to claim resumes them, and this process records nothing more of them).
// Then the runs still going are cancelled: their backend calls
// are cancelled and each client gets its run's "cancelled" result, not a
// dropped connection. Only then does the server stop: stdio once every
// response is written (mcp-go's Listen waits for its workers), HTTP once
// every POST to /mcp in flight has been answered. A second SIGINT or
// SIGTERM does not wait for any of this: main exits at once (status 130),
// and the kernel stops the stdio backends (they run with Pdeathsig).

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/vmcp-dev/vmcp/mcpserver"
	"github.com/vmcp-dev/vmcp/runtime"
)

// defaultShutdownGrace is how long vmcp run waits for runs in flight after
// the first Ctrl-C before it cancels them: long enough for a typical run to
// finish, and well inside the 30s a Kubernetes pod gets after SIGTERM.
const defaultShutdownGrace = 10 * time.Second

// cancelDrain bounds the wait for cancelled runs to end and their results
// to be written, after the grace period.
const cancelDrain = 5 * time.Second

// errShuttingDown is the reason a run is refused once shutdown started.
var errShuttingDown = errors.New("vmcp is shutting down and starts no new runs")

// runTracker is a mcpserver.Runner that knows the runs in flight, so shutdown
// can wait for them and cancel them.
type runTracker struct {
	mcpserver.Runner

	mu      sync.Mutex
	closing bool
	next    int
	cancels map[int]context.CancelFunc // one per run in flight
	idle    chan struct{}              // closed once closing and no run is left
	// release, when set (state.store: postgres), is called when the grace
	// period ends with runs in flight, before they are cancelled: it hands
	// them to another replica, which resumes them, and the cancel here then
	// records nothing (store/postgres Release).
	release func() (int, error)
}

func newRunTracker(r mcpserver.Runner) *runTracker {
	return &runTracker{Runner: r, cancels: map[int]context.CancelFunc{}, idle: make(chan struct{})}
}

// Run runs the workflow under a context that cancelAll can cancel.
func (t *runTracker) Run(ctx context.Context, workflow string, params map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
	return t.track(ctx, func(ctx context.Context) (*runtime.Run, error) {
		return t.Runner.Run(ctx, workflow, params, opts)
	})
}

// track runs fn (a new run, or a resumed one) as a run in flight: under a
// context that cancelAll can cancel, refused once shutdown started.
func (t *runTracker) track(ctx context.Context, fn func(context.Context) (*runtime.Run, error)) (*runtime.Run, error) {
	t.mu.Lock()
	if t.closing {
		t.mu.Unlock()
		return nil, errShuttingDown
	}
	ctx, cancel := context.WithCancel(ctx)
	id := t.next
	t.next++
	t.cancels[id] = cancel
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.cancels, id)
		if t.closing && len(t.cancels) == 0 {
			close(t.idle)
		}
		t.mu.Unlock()
		cancel()
	}()
	return fn(ctx)
}

// drain refuses new runs from now on. It returns how many runs are in
// flight and a channel that is closed when none is left.
func (t *runTracker) drain() (int, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closing {
		t.closing = true
		if len(t.cancels) == 0 {
			close(t.idle)
		}
	}
	return len(t.cancels), t.idle
}

// draining reports whether drain was called: the process is shutting down.
func (t *runTracker) draining() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closing
}

// cancelAll cancels every run in flight and returns how many there were.
func (t *runTracker) cancelAll() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, cancel := range t.cancels {
		cancel()
	}
	return len(t.cancels)
}

// shutdown waits for the first signal (sig ends), then shuts down as the
// top of this file describes and calls stopServing. It returns at once
// when serving stops on its own first (served ends: stdin closed, say).
// responses, when not nil, waits until every response in flight has been
// written.
func shutdown(sig, served context.Context, t *runTracker, grace time.Duration, log *slog.Logger, responses func(time.Duration), stopServing func()) {
	select {
	case <-sig.Done():
	case <-served.Done():
		return
	}
	defer stopServing()
	n, idle := t.drain()
	if n == 0 {
		log.Info("shutting down: no runs in flight")
		return
	}
	log.Info("shutting down: waiting for the runs in flight to finish; press Ctrl-C again to stop at once",
		"runs", n, "grace", grace)
	select {
	case <-idle:
		log.Info("every run finished")
	case <-time.After(grace):
		if t.release != nil {
			if n, err := t.release(); err != nil {
				log.Error("handing the runs still going to another replica failed; they are cancelled", "err", err)
			} else {
				log.Warn("shutdown grace period over: the runs still going are left for another replica to resume", "runs", n, "grace", grace)
			}
		}
		log.Warn("shutdown grace period over: cancelling the runs still going", "runs", t.cancelAll(), "grace", grace)
		select {
		case <-idle:
		case <-time.After(cancelDrain):
			log.Warn("runs still going after their cancel; stopping anyway", "waited", cancelDrain)
		}
	case <-served.Done():
		return
	}
	if responses != nil {
		responses(cancelDrain)
	}
}

// inFlight counts requests that are being answered, so that shutdown can
// wait until the last run's result has been written to its client.
type inFlight struct {
	mu      sync.Mutex
	n       int
	waiters []chan struct{} // closed when n drops to zero
}

// wrap counts the POST requests (MCP calls and their results; the
// long-lived GET event streams are not waited for) that h is serving.
func (f *inFlight) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		f.mu.Lock()
		f.n++
		f.mu.Unlock()
		defer f.done()
		h.ServeHTTP(w, r)
	})
}

func (f *inFlight) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.n == 0 {
		for _, c := range f.waiters {
			close(c)
		}
		f.waiters = nil
	}
}

// wait returns when no counted request is in flight, or after limit.
func (f *inFlight) wait(limit time.Duration) {
	f.mu.Lock()
	if f.n == 0 {
		f.mu.Unlock()
		return
	}
	c := make(chan struct{})
	f.waiters = append(f.waiters, c)
	f.mu.Unlock()
	select {
	case <-c:
	case <-time.After(limit):
	}
}
