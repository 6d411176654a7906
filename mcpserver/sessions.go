package mcpserver

// Sessions of the streamable HTTP endpoint (MCP protocol 2025-11-25 and
// earlier; 2026-07-28 has no sessions).
//
// mcp-go v1.2.1's default session manager issues ids but remembers none:
// any well-formed id is accepted, a DELETE changes nothing, and the
// transport state of a session (its entry in the server's session map and
// the HTTP server's per-session maps) stays until the process ends. vmcp
// keeps its own table instead:
//
//   - initialize reserves a slot first; when Max sessions are open, the
//     request is refused with 503 and a message naming server.sessions.max;
//   - every other request must carry an id the table holds: without one it
//     is 400, with an unknown, deleted or expired one 404 (the spec's signal
//     to the client to initialize again);
//   - a session is idle while none of its requests is open (a GET stream or
//     a tool call in flight is activity); one idle for IdleTimeout expires;
//   - DELETE removes the id and cancels the session's open requests (its
//     GET stream and calls in flight); expiry removes an idle session; both
//     free mcp-go's state for it through mcp-go's own DELETE path (the only
//     public way to reach all of it). Shutdown ends the GET streams and
//     leaves calls in flight to finish within the server's grace period.
//
// Expiry needs no goroutine of its own: a timer is armed while the table is
// not empty, and each firing sweeps the sessions idle too long.

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"
	"time"
)

// Session defaults, also those of vmcp.yaml's server.sessions.
const (
	DefaultSessionIdleTimeout = 30 * time.Minute
	DefaultMaxSessions        = 1000
)

// sessionPrefix starts every session id vmcp issues.
const sessionPrefix = "vmcp-"

// errTooManySessions is initialize's refusal when the table is full.
type errTooManySessions struct{ max int }

func (e errTooManySessions) Error() string {
	return fmt.Sprintf("too many MCP sessions: %d are open, the most server.sessions.max allows; "+
		"close sessions you no longer use (DELETE /mcp), wait for idle ones to expire, or raise server.sessions.max", e.max)
}

type sessionTable struct {
	idle time.Duration
	max  int
	// expired frees mcp-go's state of the sessions a sweep dropped. It is
	// called without the lock held.
	expired func(ids []string)

	mu      sync.Mutex
	live    map[string]*sessionEntry
	freeing int         // expired sessions whose mcp-go state is being freed
	timer   *time.Timer // armed while live is not empty
	stopped bool
}

type sessionEntry struct {
	lastSeen time.Time
	// open are the session's requests in flight, each with the cancel of
	// its context (ended when the session goes).
	open map[*openRequest]struct{}
	// canElicit: the client declared elicitation in initialize (tasks
	// need it outside mcp-go's session state, tasks_wire.go).
	canElicit bool
}

type openRequest struct {
	cancel func()
	stream bool // a GET stream, which shutdown ends
}

func newSessionTable(idle time.Duration, max int, expired func(ids []string)) *sessionTable {
	if idle <= 0 {
		idle = DefaultSessionIdleTimeout
	}
	if max <= 0 {
		max = DefaultMaxSessions
	}
	return &sessionTable{idle: idle, max: max, expired: expired, live: map[string]*sessionEntry{}}
}

// reserve issues a new session id, or fails when max sessions are open.
func (t *sessionTable) reserve() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("session id: %w", err)
	}
	id := sessionPrefix + hex.EncodeToString(b[:])
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return "", fmt.Errorf("the server is shutting down")
	}
	if len(t.live) >= t.max {
		return "", errTooManySessions{max: t.max}
	}
	t.live[id] = &sessionEntry{lastSeen: time.Now(), open: map[*openRequest]struct{}{}}
	t.armLocked()
	return id, nil
}

// known reports whether id is a live session.
func (t *sessionTable) known(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.live[id]
	return ok
}

// setCanElicit records whether session id's client declared elicitation.
func (t *sessionTable) setCanElicit(id string, can bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.live[id]; ok {
		e.canElicit = can
	}
}

// canElicit reports whether session id's client declared elicitation.
func (t *sessionTable) canElicit(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.live[id]
	return ok && e.canElicit
}

// begin records a request of session id as open; the session cannot
// expire until end is called. cancel ends the request's context when the
// session is deleted meanwhile, or, for a stream, when the table stops. It
// reports false when id is not a live session.
func (t *sessionTable) begin(id string, stream bool, cancel func()) (end func(), ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.live[id]
	if !ok {
		return nil, false
	}
	r := &openRequest{cancel: cancel, stream: stream}
	e.open[r] = struct{}{}
	e.lastSeen = time.Now()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		delete(e.open, r)
		e.lastSeen = time.Now()
	}, true
}

// remove drops session id and cancels its open requests. It reports
// whether the session was live.
func (t *sessionTable) remove(id string) bool {
	t.mu.Lock()
	e, ok := t.live[id]
	delete(t.live, id)
	// The requests are read under the lock (an ending request deletes
	// itself from e.open) and cancelled outside it.
	var open []*openRequest
	if ok {
		for r := range e.open {
			open = append(open, r)
		}
	}
	t.mu.Unlock()
	for _, r := range open {
		r.cancel()
	}
	return ok
}

// len counts the open sessions, and the expired ones until mcp-go's state
// of them is freed, so 0 means nothing of any session is held.
func (t *sessionTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.live) + t.freeing
}

// stop drops every session, ends their GET streams and refuses new
// sessions; it returns the ids that were live.
func (t *sessionTable) stop() []string {
	t.mu.Lock()
	t.stopped = true
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	var ids []string
	var open []*openRequest
	for id, e := range t.live {
		ids = append(ids, id)
		for r := range e.open {
			if r.stream {
				open = append(open, r)
			}
		}
	}
	clear(t.live)
	t.mu.Unlock()
	for _, r := range open {
		r.cancel()
	}
	return ids
}

// armLocked starts the sweep timer if it is not running.
func (t *sessionTable) armLocked() {
	if t.timer == nil && !t.stopped {
		t.timer = time.AfterFunc(t.sweepEvery(), t.sweep)
	}
}

// sweepEvery is the sweep interval: a quarter of the idle timeout, so a
// session lives at most 1.25 times it, and no more often than every 10ms.
func (t *sessionTable) sweepEvery() time.Duration {
	return max(t.idle/4, 10*time.Millisecond)
}

// sweep expires the sessions idle for longer than the idle timeout and
// re-arms the timer while sessions remain.
func (t *sessionTable) sweep() {
	now := time.Now()
	var gone []string
	t.mu.Lock()
	for id, e := range t.live {
		if len(e.open) == 0 && now.Sub(e.lastSeen) > t.idle {
			gone = append(gone, id)
			delete(t.live, id)
		}
	}
	t.timer = nil
	if len(t.live) > 0 {
		t.armLocked()
	}
	t.freeing += len(gone)
	t.mu.Unlock()
	if len(gone) > 0 {
		t.expired(gone)
		t.mu.Lock()
		t.freeing -= len(gone)
		t.mu.Unlock()
	}
}
