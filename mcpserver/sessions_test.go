package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/runtime"
)

// serveEndpoint serves s's MCP endpoint on a loopback port and returns the
// endpoint and its URL.
func serveEndpoint(t *testing.T, s *Server, port int) (*Endpoint, string) {
	t.Helper()
	ln := listenLocal(t, port)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	e := s.MCPHandler()
	go func() { done <- ServeHTTP(ctx, ln, HTTPHandler(e, nil), httpsafe.Limits{}, e, 5*time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	})
	return e, "http://" + ln.Addr().String() + MCPPath
}

// postJSON posts one JSON-RPC message and returns the status, the session
// id header and the body.
func postJSON(t *testing.T, url, session, body string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

const initializeBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// openSession initializes a session and returns its id.
func openSession(t *testing.T, url string) string {
	t.Helper()
	status, id, body := postJSON(t, url, "", initializeBody)
	if status != http.StatusOK || id == "" {
		t.Fatalf("initialize: status %d, session %q, body %s", status, id, body)
	}
	if status, _, body := postJSON(t, url, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: status %d, body %s", status, body)
	}
	return id
}

// TestSessionsExpireAndFreeState opens many sessions, lets them expire,
// and checks that the session table is empty and that mcp-go no longer
// holds them either (its server's session map is what grew without bound).
// The idle timeout leaves a loaded machine room between a session's first
// two requests.
func TestSessionsExpireAndFreeState(t *testing.T) {
	s, err := New(Options{Runner: &fakeRunner{wfs: testWorkflows}, SessionIdleTimeout: time.Second, MaxSessions: 5000})
	if err != nil {
		t.Fatal(err)
	}
	e, url := serveEndpoint(t, s, 17490)
	const n = 300
	ids := make([]string, n)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 4 {
				ids[i] = openSession(t, url)
				if err := s.MCP().SendNotificationToSpecificClient(ids[i], "notifications/message", map[string]any{}); err != nil {
					t.Errorf("session %s is not registered with mcp-go after initialize: %v", ids[i], err)
				}
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for e.Sessions() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := e.Sessions(); got != 0 {
		t.Fatalf("%d of %d sessions still in the table 10s after a 1s idle timeout", got, n)
	}
	for _, id := range ids {
		if err := s.MCP().SendNotificationToSpecificClient(id, "notifications/message", map[string]any{}); !errors.Is(err, mcpgo.ErrSessionNotFound) {
			t.Fatalf("mcp-go still holds expired session %s (SendNotificationToSpecificClient = %v)", id, err)
		}
	}
	status, _, body := postJSON(t, url, ids[0], `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if status != http.StatusNotFound || !strings.Contains(body, "server.sessions.idleTimeout") {
		t.Errorf("tools/list in an expired session: status %d, body %s; want 404 naming server.sessions.idleTimeout", status, body)
	}
}

// TestSessionCap: the session over server.sessions.max is refused with 503
// and a message that names the setting; deleting one makes room.
func TestSessionCap(t *testing.T) {
	s, err := New(Options{Runner: &fakeRunner{wfs: testWorkflows}, MaxSessions: 3})
	if err != nil {
		t.Fatal(err)
	}
	e, url := serveEndpoint(t, s, 17493)
	var ids []string
	for range 3 {
		ids = append(ids, openSession(t, url))
	}
	status, id, body := postJSON(t, url, "", initializeBody)
	want := `{"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"too many MCP sessions: 3 are open, the most server.sessions.max allows; ` +
		`close sessions you no longer use (DELETE /mcp), wait for idle ones to expire, or raise server.sessions.max"}}`
	if status != http.StatusServiceUnavailable || id != "" || strings.TrimSpace(body) != want {
		t.Errorf("initialize over the cap: status %d, session %q, body %s; want 503 and %s", status, id, body, want)
	}
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", ids[0])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || e.Sessions() != 2 {
		t.Fatalf("DELETE: status %d, %d sessions left; want 200 and 2", resp.StatusCode, e.Sessions())
	}
	openSession(t, url)
	if got := e.Sessions(); got != 3 {
		t.Errorf("%d sessions after one was deleted and one opened; want 3", got)
	}
}

// TestFailedInitializeFreesItsSlot: an initialize that mcp-go refuses
// issues no session and does not hold a place under the cap.
func TestFailedInitializeFreesItsSlot(t *testing.T) {
	s, err := New(Options{Runner: &fakeRunner{wfs: testWorkflows}, MaxSessions: 1})
	if err != nil {
		t.Fatal(err)
	}
	e, url := serveEndpoint(t, s, 17496)
	for i := range 3 {
		status, id, body := postJSON(t, url, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":"not an object"}`)
		if id != "" || e.Sessions() != 0 {
			t.Fatalf("bad initialize %d: status %d, session %q, %d sessions, body %s; want no session", i, status, id, e.Sessions(), body)
		}
	}
	openSession(t, url)
}

// TestShutdownEndsStreamsNotCalls: when the server shuts down, a session's
// GET stream ends at once, but a call in flight still gets its result
// within the grace period.
func TestShutdownEndsStreamsNotCalls(t *testing.T) {
	started := make(chan struct{})
	runner := &fakeRunner{wfs: testWorkflows}
	runner.script = func(_ context.Context, wf string, _ map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
		close(started)
		time.Sleep(300 * time.Millisecond)
		return completed(opts.RunID, wf, map[string]any{"greeting": "hi"}), nil
	}
	s := newTestServer(t, runner)
	ln := listenLocal(t, 17486)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	e := s.MCPHandler()
	go func() { served <- ServeHTTP(ctx, ln, HTTPHandler(e, nil), httpsafe.Limits{}, e, 5*time.Second) }()
	url := "http://" + ln.Addr().String() + MCPPath
	id := openSession(t, url)

	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", err, stream)
	}
	streamEnded := make(chan struct{})
	go func() {
		io.Copy(io.Discard, stream.Body)
		stream.Body.Close()
		close(streamEnded)
	}()
	result := make(chan string, 1)
	go func() {
		_, _, body := postJSON(t, url, id, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"who":"x"}}}`)
		result <- body
	}()
	<-started
	cancel()
	select {
	case <-streamEnded:
	case <-time.After(5 * time.Second):
		t.Errorf("the GET stream is still open 5s after shutdown began")
	}
	if body := <-result; !strings.Contains(body, `"greeting":"hi"`) {
		t.Errorf("the call in flight at shutdown got %s; want its result", body)
	}
	if err := <-served; err != nil {
		t.Errorf("ServeHTTP: %v", err)
	}
}
