package mcpserver

// Runs in flight (design.md "Rate limits": server.limits). Every run a
// caller starts (a tools/call of a workflow, a task, a multi-round-trip
// call, a draft run) is admitted first: at most RunLimits.Runs runs at once
// on the server, and at most RunLimits.PerOwner of one owner
// (httpsafe.Identity.Subject; the local operator is one owner too). Child
// runs of workflow steps are part of their parent's run and are not
// counted, so a parent never waits for a slot its own child holds.
//
// Past a cap the run is refused with an error that names the cap and the
// setting, or, with Wait, waits for a slot until the caller's request
// ends. A waiting run holds no goroutine of its own and no run state:
// only the request's goroutine, blocked on the admission's channel, and a
// count. Every release closes and replaces that channel, so the waiters
// wake and try again; the order in which they get in is not guaranteed.

import (
	"context"
	"fmt"
	"sync"
)

// Default run caps.
const (
	DefaultMaxRuns         = 1000
	DefaultMaxRunsPerOwner = 500
)

// RunLimits cap the runs in flight (server.limits).
type RunLimits struct {
	// Runs caps the runs in flight on the server; 0 means DefaultMaxRuns.
	Runs int
	// PerOwner caps the runs in flight of one owner; 0 means
	// DefaultMaxRunsPerOwner.
	PerOwner int
	// Wait makes a run past a cap wait for a slot (onLimit: wait) instead
	// of being refused (onLimit: refuse, the default).
	Wait bool
}

// LimitError refuses a run past a cap.
type LimitError struct {
	PerOwner bool // the caller's cap, not the server's
	Limit    int
}

func (e *LimitError) Error() string {
	if e.PerOwner {
		return fmt.Sprintf("too many runs in flight for this caller: %d at once is its limit (server.limits.perOwner.runs); try again when one has finished, raise the limit, or set server.limits.onLimit: wait", e.Limit)
	}
	return fmt.Sprintf("too many runs in flight: %d at once is the server's limit (server.limits.runs); try again when one has finished, raise the limit, or set server.limits.onLimit: wait", e.Limit)
}

// admission counts the runs in flight (see the top of the file).
type admission struct {
	limits RunLimits

	mu      sync.Mutex
	total   int
	byOwner map[string]int
	freed   chan struct{} // closed and replaced at every release
}

func newAdmission(l RunLimits) *admission {
	if l.Runs <= 0 {
		l.Runs = DefaultMaxRuns
	}
	if l.PerOwner <= 0 {
		l.PerOwner = DefaultMaxRunsPerOwner
	}
	return &admission{limits: l, byOwner: map[string]int{}, freed: make(chan struct{})}
}

// admit takes a slot for a run of owner, waiting for one when the limits
// say so, and returns the function that gives it back (call it once, when
// the run has returned).
func (a *admission) admit(ctx context.Context, owner string, onWait func()) (func(), error) {
	waited := false
	for {
		a.mu.Lock()
		err := a.full(owner)
		if err == nil {
			a.total++
			a.byOwner[owner]++
			a.mu.Unlock()
			return sync.OnceFunc(func() { a.release(owner) }), nil
		}
		freed := a.freed
		a.mu.Unlock()
		if !a.limits.Wait {
			return nil, err
		}
		if !waited && onWait != nil {
			waited = true
			onWait()
		}
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, fmt.Errorf("gave up waiting for a run slot: %w", context.Cause(ctx))
		}
	}
}

// full says which cap a new run of owner would pass, or nil (a.mu held).
func (a *admission) full(owner string) error {
	switch {
	case a.byOwner[owner] >= a.limits.PerOwner:
		return &LimitError{PerOwner: true, Limit: a.limits.PerOwner}
	case a.total >= a.limits.Runs:
		return &LimitError{Limit: a.limits.Runs}
	}
	return nil
}

func (a *admission) release(owner string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.total--
	if a.byOwner[owner]--; a.byOwner[owner] <= 0 {
		delete(a.byOwner, owner)
	}
	close(a.freed)
	a.freed = make(chan struct{})
}

// admitRun takes a slot for a run the caller of ctx starts (see admit),
// logging when it has to wait.
func (s *Server) admitRun(ctx context.Context, owner, workflow string) (func(), error) {
	return s.runs.admit(ctx, owner, func() {
		s.log.Info("run waits for a slot (server.limits)", "workflow", workflow, "owner", owner)
	})
}
