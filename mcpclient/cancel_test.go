package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/runtime"
)

// recordingProxy forwards HTTP to target and records the JSON-RPC methods
// (with their params) of the messages clients POST.
type recordingProxy struct {
	mu   sync.Mutex
	msgs []map[string]any
}

func (p *recordingProxy) methods(method string) []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []map[string]any
	for _, m := range p.msgs {
		if m["method"] == method {
			out = append(out, m)
		}
	}
	return out
}

// startRecordingProxy listens on a free port and returns its base URL.
func startRecordingProxy(t *testing.T, target string) (*recordingProxy, string) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg map[string]any
			if json.Unmarshal(body, &msg) == nil {
				p.mu.Lock()
				p.msgs = append(p.msgs, msg)
				p.mu.Unlock()
			}
		}
		rp.ServeHTTP(w, r)
	})
	return p, testenv.Serve(t, portLo, portHi, &http.Server{Handler: handler})
}

func TestHTTPCancelSendsNotification(t *testing.T) {
	// server-everything speaks a protocol version where a dropped HTTP
	// request is not a cancel, so the client must send
	// notifications/cancelled itself, over streamable HTTP and over SSE.
	tests := []struct {
		name, mode, path, transport string
	}{
		{"streamable-http", "streamableHttp", "/mcp", config.TransportStreamableHTTP},
		{"sse", "sse", "/sse", config.TransportSSE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkNoGoroutineLeak(t)
			port := startNodeServer(t, "mcp-server-everything", []string{tt.mode})
			proxy, base := startRecordingProxy(t, fmt.Sprintf("http://127.0.0.1:%d", port))
			b := &config.Backend{URL: base + tt.path, Transport: tt.transport, Timeout: 30 * time.Second}
			m := connect(t, map[string]*config.Backend{"ev": b})

			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			_, err := m.CallTool(ctx, runtime.ToolCall{Backend: "ev", Tool: "trigger-long-running-operation",
				Arguments: map[string]any{"duration": 20, "steps": 4}})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("long call past the caller's deadline: error = %v; want deadline exceeded", err)
			}
			calls := proxy.methods("tools/call")
			if len(calls) != 1 {
				t.Fatalf("proxy saw %d tools/call requests; want 1", len(calls))
			}
			var cancels []map[string]any
			if !eventually(5*time.Second, func() bool { cancels = proxy.methods("notifications/cancelled"); return len(cancels) > 0 }) {
				t.Fatalf("no notifications/cancelled reached the server")
			}
			params, _ := cancels[0]["params"].(map[string]any)
			if params["requestId"] != calls[0]["id"] {
				t.Errorf("notifications/cancelled requestId = %v; want the call's id %v", params["requestId"], calls[0]["id"])
			}
			// The session is still good.
			r, err := m.CallTool(context.Background(), runtime.ToolCall{Backend: "ev", Tool: "echo", Arguments: map[string]any{"message": "after"}})
			if err != nil || r.Content[0].Text != "Echo: after" {
				t.Errorf("echo after the cancel = %+v, %v", r, err)
			}
		})
	}
}

func TestHTTPSessionLostIsTransparent(t *testing.T) {
	// server-everything keeps sessions; after it restarts it answers the old
	// session id with 404, and the call goes out again on a new session.
	port := testenv.FreePort(t, portLo, portHi)
	stop := startNodeServerOn(t, port, "mcp-server-everything", []string{"streamableHttp"})
	b := &config.Backend{URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port), Transport: config.TransportStreamableHTTP, Timeout: 30 * time.Second}
	m := connect(t, map[string]*config.Backend{"ev": b})
	echo := func(msg string) (*runtime.ToolResult, error) {
		return m.CallTool(context.Background(), runtime.ToolCall{Backend: "ev", Tool: "echo", Arguments: map[string]any{"message": msg}})
	}
	if _, err := echo("first"); err != nil {
		t.Fatal(err)
	}
	stop()
	t.Cleanup(startNodeServerOn(t, port, "mcp-server-everything", []string{"streamableHttp"}))
	r, err := echo("after restart")
	if err != nil || r.Content[0].Text != "Echo: after restart" {
		t.Errorf("first call after the backend restarted = %+v, %v; want it answered on a new session", r, err)
	}
}
