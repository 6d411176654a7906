package console

// Server-side sessions and the sign-in throttle.
//
// A session cookie is an opaque random id (32 bytes, base64url); what it
// stands for (the identity of the token signed in with, its scopes, and when the session ends) lives only in
// the sessions table of this process. Sign-out deletes the session, so the
// old cookie is worth nothing from that moment; a restart empties the
// table and signs everyone out. The table holds at most maxSessions: a
// sign-in into a full table first drops expired sessions, then the one
// that ends soonest.
//
// Failed sign-ins are counted per client address (httpsafe.ClientKeyOf:
// the IPv4 address, or the /64 of an IPv6 one). A client's count starts at
// its first failure and is forgotten SigninLockout later; once it reaches
// SigninFailures, every sign-in from that client (with a right token too)
// gets 429 with Retry-After until then. A successful sign-in forgets the
// count. The table of counts holds at most maxThrottled clients; when it
// is full, expired counts are dropped, then the oldest.

import (
	"crypto/rand"
	"encoding/base64"
	"sync"
	"time"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
)

const (
	// maxSessions bounds the sessions table.
	maxSessions = 10000
	// maxThrottled bounds the table of failed sign-ins.
	maxThrottled = 10000
)

// session is one signed-in browser.
type session struct {
	id      httpsafe.Identity
	expires time.Time
}

// sessionTable is the server-side sessions; safe for concurrent use.
type sessionTable struct {
	mu   sync.Mutex
	byID map[string]session
}

func newSessionID() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// add stores a session ending at expires and returns its id.
func (t *sessionTable) add(who httpsafe.Identity, now, expires time.Time) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.byID) >= maxSessions {
		t.evict(now)
	}
	id := newSessionID()
	t.byID[id] = session{id: who, expires: expires}
	return id
}

// evict drops the expired sessions, or else the one that ends soonest.
func (t *sessionTable) evict(now time.Time) {
	evictEnded(t.byID, now, maxSessions, func(s session) time.Time { return s.expires })
}

// evictEnded deletes the entries of m whose end has come by now; if m
// still holds max or more, it deletes the one that ends soonest, making
// room for one more.
func evictEnded[V any](m map[string]V, now time.Time, max int, end func(V) time.Time) {
	soonest := ""
	for k, v := range m {
		if !now.Before(end(v)) {
			delete(m, k)
		} else if soonest == "" || end(v).Before(end(m[soonest])) {
			soonest = k
		}
	}
	if len(m) >= max {
		delete(m, soonest)
	}
}

// get returns the session id stands for, if it has not ended.
func (t *sessionTable) get(id string, now time.Time) (session, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.byID[id]
	if ok && !now.Before(s.expires) {
		delete(t.byID, id)
		return session{}, false
	}
	return s, ok
}

// end deletes a session.
func (t *sessionTable) end(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.byID, id)
}

// failures is one client's failed sign-ins.
type failures struct {
	count int
	until time.Time // when the count is forgotten
}

// throttle counts failed sign-ins per client; safe for concurrent use.
type throttle struct {
	limit  int
	window time.Duration

	mu       sync.Mutex
	byClient map[string]failures
}

// blocked reports whether client has used up its failures, and for how
// long it stays blocked.
func (t *throttle) blocked(client string, now time.Time) (time.Duration, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, ok := t.byClient[client]
	if !ok || !now.Before(f.until) {
		return 0, false
	}
	return f.until.Sub(now), f.count >= t.limit
}

// fail counts a failed sign-in of client.
func (t *throttle) fail(client string, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, ok := t.byClient[client]
	if !ok || !now.Before(f.until) {
		if !ok && len(t.byClient) >= maxThrottled {
			t.evict(now)
		}
		f = failures{until: now.Add(t.window)}
	}
	f.count++
	t.byClient[client] = f
}

// evict drops the expired counts, or else the one forgotten soonest.
func (t *throttle) evict(now time.Time) {
	evictEnded(t.byClient, now, maxThrottled, func(f failures) time.Time { return f.until })
}

// succeed forgets client's failures.
func (t *throttle) succeed(client string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.byClient, client)
}
