package e2e

// The HTTP server as real clients see it: where notifications travel when
// the client keeps the standalone GET stream open (as the TypeScript SDK
// does), and the life of a session (delete, unknown ids, expiry, the cap).

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestProgressOnCallStream opens the standalone GET stream first, as the
// TypeScript SDK does, then makes 50 calls with a progress token: each
// call's progress must arrive on that call's own response stream, 1 to 4
// in order, before its result, and none on the GET stream.
func TestProgressOnCallStream(t *testing.T) {
	cfg := writeConfig(t, testConfig, filepath.Join(t.TempDir(), "record.txt"))
	url, _ := httpVMCP(t, cfg)
	s := rawInitialize(t, url)
	l := s.listen()
	for i := range 50 {
		tok := fmt.Sprintf("p-%d", i)
		r := s.request(i+1, "tools/call", map[string]any{
			"name": "fan", "arguments": map[string]any{}, "_meta": map[string]any{"progressToken": tok},
		})
		if r.status != http.StatusOK || len(r.messages) == 0 {
			t.Fatalf("call %d: status %d, body %s", i, r.status, r.body)
		}
		if diff := cmp.Diff([]float64{1, 2, 3, 4}, progressOf(r.messages, tok)); diff != "" {
			t.Errorf("call %d: progress on its response stream (-want +got):\n%s", i, diff)
		}
		last := r.messages[len(r.messages)-1]
		if fmt.Sprint(last["id"]) != fmt.Sprint(i+1) || last["result"] == nil {
			t.Errorf("call %d: the last message of the response stream is %v; want the result of request %d", i, last, i+1)
		}
	}
	l.close()
	for _, m := range l.messages() {
		if m["method"] == "notifications/progress" {
			t.Errorf("the GET stream carried %v; a call's progress belongs on its response stream", m)
		}
	}
}

// TestSessionLifecycle: requests without a session id are 400; ids that
// were never issued and deleted sessions are 404, for POST, GET and
// DELETE; deleting a session ends its open GET stream.
func TestSessionLifecycle(t *testing.T) {
	cfg := writeConfig(t, testConfig, filepath.Join(t.TempDir(), "record.txt"))
	url, _ := httpVMCP(t, cfg)
	list := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}

	r := rawPost(t, url, "", list)
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, "missing Mcp-Session-Id header") {
		t.Errorf("tools/list without a session id: status %d, body %s; want 400 naming Mcp-Session-Id", r.status, r.body)
	}
	for _, id := range []string{"vmcp-00000000000000000000000000000000", "mcp-session-6a1d8f1e-2f4c-4c55-9a3e-4b1e1c1d1e1f"} {
		r := rawPost(t, url, id, list)
		if r.status != http.StatusNotFound || !strings.Contains(r.body, "session not found") {
			t.Errorf("tools/list with never-issued session %s: status %d, body %s; want 404 session not found", id, r.status, r.body)
		}
		for _, method := range []string{http.MethodGet, http.MethodDelete} {
			if status, body := rawDo(t, method, url, id); status != http.StatusNotFound {
				t.Errorf("%s with never-issued session %s: status %d, body %s; want 404", method, id, status, body)
			}
		}
	}

	s := rawInitialize(t, url)
	if r := s.post(list); r.status != http.StatusOK {
		t.Fatalf("tools/list in a new session: status %d, body %s", r.status, r.body)
	}
	l := s.listen()
	if status, body := rawDo(t, http.MethodDelete, url, s.id); status != http.StatusOK {
		t.Fatalf("DELETE: status %d, body %s; want 200", status, body)
	}
	select {
	case <-l.done:
	case <-time.After(10 * time.Second):
		t.Errorf("the GET stream of a deleted session is still open 10s after DELETE")
	}
	if r := s.post(list); r.status != http.StatusNotFound || !strings.Contains(r.body, "session not found") {
		t.Errorf("tools/list after DELETE: status %d, body %s; want 404 session not found", r.status, r.body)
	}
	if status, _ := rawDo(t, http.MethodGet, url, s.id); status != http.StatusNotFound {
		t.Errorf("GET after DELETE: status %d; want 404", status)
	}
}

const sessionLimitsConfig = `
backends:
  tb: {command: "${TB}", args: [-record, "${REC}"]}
server:
  sessions: {idleTimeout: 3s, max: 20}
compositeTools:
  - name: hello
    description: Echo hello
    steps:
      - {id: say, tool: tb.echo, arguments: {text: hello}}
`

// TestSessionCapAndExpiry fills the session table (server.sessions.max:
// 20): the next initialize is refused with a message naming the setting.
// Then every session but one, whose GET stream stays open, is left idle
// past server.sessions.idleTimeout: those get 404, the busy one still
// works, and exactly 19 new sessions fit again, so the expired ones were
// removed from the table.
func TestSessionCapAndExpiry(t *testing.T) {
	cfg := writeConfig(t, sessionLimitsConfig, filepath.Join(t.TempDir(), "record.txt"))
	url, _ := httpVMCP(t, cfg)
	list := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}

	busy := rawInitialize(t, url)
	busy.listen()
	var idle []*rawSession
	for range 19 {
		idle = append(idle, rawInitialize(t, url))
	}
	r := rawPost(t, url, "", rawInitializeMsg())
	if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "too many MCP sessions: 20 are open") || !strings.Contains(r.body, "server.sessions.max") {
		t.Fatalf("initialize over the cap: status %d, body %s; want 503 naming server.sessions.max", r.status, r.body)
	}

	// Polling an idle session would keep it alive: wait out the idle
	// timeout (3s) and one sweep interval (a quarter of it), with margin.
	time.Sleep(5 * time.Second)
	for i, s := range idle {
		if r := s.post(list); r.status != http.StatusNotFound {
			t.Errorf("idle session %d after the idle timeout: status %d; want 404", i, r.status)
		}
	}
	if r := busy.post(list); r.status != http.StatusOK {
		t.Errorf("the session with an open GET stream after the idle timeout: status %d, body %s; want 200", r.status, r.body)
	}
	for i := range 19 {
		if r := rawPost(t, url, "", rawInitializeMsg()); r.status != http.StatusOK {
			t.Fatalf("new session %d after the expiry: status %d, body %s; want 200", i, r.status, r.body)
		}
	}
	if r := rawPost(t, url, "", rawInitializeMsg()); r.status != http.StatusServiceUnavailable {
		t.Errorf("initialize over the cap again: status %d; want 503", r.status)
	}
}
