package console

import (
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
)

// TestThrottleBlocksAfterLimitUntilWindowEnds: the limit-th failure blocks
// the client until the window that began at its first failure ends; other
// clients and a success are unaffected.
func TestThrottleBlocksAfterLimitUntilWindowEnds(t *testing.T) {
	th := throttle{limit: 3, window: time.Minute, byClient: map[string]failures{}}
	t0 := time.Unix(1_000_000, 0)
	for i := range 3 {
		if _, b := th.blocked("a", t0); b {
			t.Fatalf("blocked before failure %d", i+1)
		}
		th.fail("a", t0.Add(time.Duration(i)*time.Second))
	}
	wait, b := th.blocked("a", t0.Add(10*time.Second))
	if !b || wait != 50*time.Second {
		t.Errorf("after 3 failures, blocked = %v for %v; want true for 50s", b, wait)
	}
	if _, b := th.blocked("b", t0); b {
		t.Errorf("another client is blocked")
	}
	if _, b := th.blocked("a", t0.Add(time.Minute)); b {
		t.Errorf("still blocked when the window is over")
	}
	th.fail("c", t0)
	th.succeed("c")
	if len(th.byClient) != 1 {
		t.Errorf("a success kept the client's failures: %v", th.byClient)
	}
}

// TestSessionTableEndsAndEvicts: an ended or expired session is gone, and a
// full table makes room by dropping the session that ends soonest.
func TestSessionTableEndsAndEvicts(t *testing.T) {
	tab := sessionTable{byID: map[string]session{}}
	t0 := time.Unix(1_000_000, 0)
	id := tab.add(httpsafe.Identity{Subject: "alice", Scopes: []httpsafe.Scope{httpsafe.ScopeRun}}, t0, t0.Add(time.Hour))
	if _, ok := tab.get(id, t0); !ok {
		t.Fatal("a new session is not found")
	}
	tab.end(id)
	if _, ok := tab.get(id, t0); ok {
		t.Error("an ended session is still found")
	}
	soon := tab.add(httpsafe.Identity{}, t0, t0.Add(time.Minute))
	for i := 1; i < maxSessions; i++ {
		tab.add(httpsafe.Identity{}, t0, t0.Add(time.Hour))
	}
	last := tab.add(httpsafe.Identity{}, t0, t0.Add(time.Hour))
	if _, ok := tab.get(soon, t0); ok || len(tab.byID) != maxSessions {
		t.Errorf("a full table kept the session ending soonest (%d sessions)", len(tab.byID))
	}
	if _, ok := tab.get(last, t0); !ok {
		t.Error("the newest session is not found")
	}
	if _, ok := tab.get(last, t0.Add(time.Hour)); ok {
		t.Error("an expired session is found")
	}
}
