package mcpclient

// Streamable HTTP against the fake server served in-process, so the test
// can see the requests' headers and the server's cancellations.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/internal/testservers"
)

// serveFakeHTTP serves a fake server over streamable HTTP at /mcp on a free
// port, rejecting requests without the bearer token. It returns the URL
// and a function reporting the Authorization headers seen.
func serveFakeHTTP(t testing.TB, token string) (url string, seen func() []string) {
	t.Helper()
	port := testenv.FreePort(t, portLo, portHi)
	seen, stop := serveFakeHTTPOn(t, port, token)
	t.Cleanup(stop)
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port), seen
}

// serveFakeHTTPOn is serveFakeHTTP on a given port; stop ends the server
// and waits for it.
func serveFakeHTTPOn(t testing.TB, port int, token string) (seen func() []string, stop func()) {
	t.Helper()
	fake := testservers.NewFake(0)
	mcpHandler := server.NewStreamableHTTPServer(fake.Server())
	var mu sync.Mutex
	var auths []string
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(l)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			mcpHandler.Shutdown(ctx)
			srv.Shutdown(ctx)
			srv.Close()
			<-done
		})
	}
	seen = func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), auths...)
	}
	return seen, stop
}

func TestStreamableHTTPHeadersAndCancel(t *testing.T) {
	url, seen := serveFakeHTTP(t, "s3cret")
	b := &config.Backend{URL: url, Transport: config.TransportStreamableHTTP, Headers: map[string]string{"Authorization": "Bearer s3cret"}, Timeout: 20 * time.Second}
	m := connect(t, map[string]*config.Backend{"fake": b})
	for _, a := range seen() {
		if a != "Bearer s3cret" {
			t.Errorf("server saw Authorization %q; want every request to carry the configured header", a)
		}
	}
	r, err := call(m, context.Background(), "echo", map[string]any{"message": "over http"})
	if err != nil || r.Content[0].Text != "over http" {
		t.Fatalf("echo over HTTP = %+v, %v", r, err)
	}

	if err := cancelSleepMidCall(t, m); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled HTTP call error = %v; want context.Canceled", err)
	}
	if !eventually(5*time.Second, func() bool { return sleepStats(t, m)["cancelled"] == float64(1) }) {
		t.Errorf("server stats = %v; want cancelled 1 (the server stops the handler)", sleepStats(t, m))
	}
}

func TestStreamableHTTPWrongToken(t *testing.T) {
	url, _ := serveFakeHTTP(t, "right")
	b := &config.Backend{URL: url, Transport: config.TransportStreamableHTTP, Headers: map[string]string{"Authorization": "Bearer wrong"}, Timeout: 5 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m, err := Connect(ctx, map[string]*config.Backend{"fake": b}, Options{Logger: testLogger(t)})
	if err == nil {
		m.Close()
		t.Fatal("Connect with a wrong token succeeded")
	}
	if !strings.Contains(err.Error(), `backend "fake" (`+url+`): initialize:`) {
		t.Errorf("Connect error = %v; want it to name the backend, URL and stage", err)
	}
}

func TestHTTPServerGoneThenBack(t *testing.T) {
	// A call to an HTTP backend whose server went away fails naming the
	// backend; once a server is back on the URL, the next call reconnects.
	port := testenv.FreePort(t, portLo, portHi)
	_, stop := serveFakeHTTPOn(t, port, "tok")
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	b := &config.Backend{URL: url, Transport: config.TransportStreamableHTTP, Headers: map[string]string{"Authorization": "Bearer tok"}, Timeout: 5 * time.Second}
	m := connect(t, map[string]*config.Backend{"fake": b})
	if _, err := call(m, context.Background(), "echo", map[string]any{"message": "x"}); err != nil {
		t.Fatal(err)
	}
	stop()
	_, err := call(m, context.Background(), "echo", map[string]any{"message": "x"})
	if err == nil || !strings.Contains(err.Error(), `backend "fake"`) || !strings.Contains(err.Error(), url) {
		t.Errorf("call with the server gone: error = %v; want one naming backend and URL", err)
	}
	if err := m.Ready()["fake"]; err == nil {
		t.Errorf("Ready()[fake] = nil with the server gone; want an error")
	}
	_, stop2 := serveFakeHTTPOn(t, port, "tok")
	defer stop2()
	if r, err := call(m, context.Background(), "echo", map[string]any{"message": "back"}); err != nil || r.Content[0].Text != "back" {
		t.Errorf("call after the server came back = %+v, %v; want a reconnect", r, err)
	}
}

// serveHandler serves h on a free port until the test ends and returns the
// URL of its /mcp endpoint.
func serveHandler(t *testing.T, h http.Handler) string {
	t.Helper()
	return testenv.Serve(t, portLo, portHi, &http.Server{Handler: h}) + "/mcp"
}

// refuseInitialize answers initialize like a server that speaks only
// protocol 2026-07-28, which removed the handshake, and passes everything
// else to next.
func refuseInitialize(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "initialize" {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`, msg.ID)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func TestStreamableHTTPProtocolVersion(t *testing.T) {
	// An HTTP backend is asked for the 2025-11-25 session handshake (its
	// calls cost about half of 2026-07-28 ones on mcp-go servers); one that
	// refuses it is connected with the negotiated protocol instead, and
	// works the same.
	tests := []struct {
		name          string
		wrap          func(http.Handler) http.Handler
		wantDiscover  bool
		wantProtocols []string
	}{
		{"session handshake", func(h http.Handler) http.Handler { return h }, false, []string{mcp.LATEST_LEGACY_PROTOCOL_VERSION}},
		{"backend without the handshake", refuseInitialize, true, []string{mcp.LATEST_LEGACY_PROTOCOL_VERSION}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := testservers.NewFake(0)
			backendURL := serveHandler(t, tt.wrap(server.NewStreamableHTTPServer(fake.Server())))
			proxy, base := startRecordingProxy(t, strings.TrimSuffix(backendURL, "/mcp"))
			m := connect(t, map[string]*config.Backend{"fake": {URL: base + "/mcp", Transport: config.TransportStreamableHTTP, Timeout: 20 * time.Second}})
			r, err := call(m, context.Background(), "echo", map[string]any{"message": "hi"})
			if err != nil || r.Content[0].Text != "hi" {
				t.Fatalf("echo = %+v, %v; want hi", r, err)
			}
			var asked []string
			for _, msg := range proxy.methods("initialize") {
				params, _ := msg["params"].(map[string]any)
				v, _ := params["protocolVersion"].(string)
				asked = append(asked, v)
			}
			if diff := cmp.Diff(tt.wantProtocols, asked); diff != "" {
				t.Errorf("protocol versions of the initialize requests (-want +got):\n%s", diff)
			}
			if got := len(proxy.methods("server/discover")) > 0; got != tt.wantDiscover {
				t.Errorf("server/discover sent = %v; want %v", got, tt.wantDiscover)
			}
			if err := cancelSleepMidCall(t, m); !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled call error = %v; want context.Canceled", err)
			}
			if !eventually(5*time.Second, func() bool { return sleepStats(t, m)["cancelled"] == float64(1) }) {
				t.Errorf("server stats = %v; want cancelled 1 (the cancel reached the server)", sleepStats(t, m))
			}
		})
	}
}

func TestStreamableHTTPParallelCallsReuseConnections(t *testing.T) {
	// Ten calls in parallel, three times over: the connections of the first
	// round are kept and reused (net/http's default client keeps only two
	// idle per host and would dial eight new ones every round).
	fake := testservers.NewFake(0)
	var conns atomic.Int64
	base := testenv.Serve(t, portLo, portHi, &http.Server{Handler: server.NewStreamableHTTPServer(fake.Server()), ConnState: func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}})
	m := connect(t, map[string]*config.Backend{"fake": {URL: base + "/mcp", Transport: config.TransportStreamableHTTP, Timeout: 20 * time.Second}})
	const parallel, rounds = 10, 3
	for range rounds {
		var wg sync.WaitGroup
		for range parallel {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := call(m, context.Background(), "sleep", map[string]any{"ms": 50}); err != nil {
					t.Errorf("sleep: %v", err)
				}
			}()
		}
		wg.Wait()
	}
	// One more for the handshake, which may have closed on its own.
	if got := conns.Load(); got > parallel+1 {
		t.Errorf("%d rounds of %d parallel calls opened %d connections; want at most %d", rounds, parallel, got, parallel+1)
	}
}
