package e2e

// A raw streamable HTTP client, for what the SDK clients hide: which stream
// a message arrives on, status codes, and session ids.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawSession is one MCP session spoken over raw HTTP.
type rawSession struct {
	t   *testing.T
	url string
	id  string
}

// rawReply is the answer to one POST: its status, and the JSON-RPC
// messages of its body (one for a JSON body, every event of an SSE one).
type rawReply struct {
	status   int
	header   http.Header
	messages []map[string]any
	body     string
}

// rawPost sends one JSON-RPC message with the given session id ("" for
// none), within 60 seconds.
func rawPost(t *testing.T, url, session string, msg map[string]any) rawReply {
	t.Helper()
	body, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %v: %v", msg["method"], err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %v: reading the response: %v", msg["method"], err)
	}
	r := rawReply{status: resp.StatusCode, header: resp.Header, body: string(raw)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		r.messages = sseMessages(t, bytes.NewReader(raw), nil)
	} else if len(bytes.TrimSpace(raw)) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("POST %v: body %q is not JSON: %v", msg["method"], raw, err)
		}
		r.messages = append(r.messages, m)
	}
	return r
}

// sseMessages parses the data of each SSE event of r, calling each (when
// not nil) as events arrive.
func sseMessages(t *testing.T, r io.Reader, each func(map[string]any)) []map[string]any {
	var out []map[string]any
	var data strings.Builder
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "data:"):
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		case line == "" && data.Len() > 0:
			var m map[string]any
			if err := json.Unmarshal([]byte(data.String()), &m); err != nil {
				t.Errorf("SSE event %q is not JSON: %v", data.String(), err)
			} else {
				out = append(out, m)
				if each != nil {
					each(m)
				}
			}
			data.Reset()
		}
	}
	return out
}

// rawInitialize opens a session and sends notifications/initialized.
func rawInitialize(t *testing.T, url string) *rawSession {
	t.Helper()
	r := rawPost(t, url, "", rawInitializeMsg())
	id := r.header.Get("Mcp-Session-Id")
	if r.status != http.StatusOK || id == "" {
		t.Fatalf("initialize: status %d, session %q, body %s", r.status, id, r.body)
	}
	s := &rawSession{t: t, url: url, id: id}
	if r := s.post(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); r.status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: status %d, body %s", r.status, r.body)
	}
	return s
}

func rawInitializeMsg() map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "raw-e2e", "version": "1"},
	}}
}

func (s *rawSession) post(msg map[string]any) rawReply {
	s.t.Helper()
	return rawPost(s.t, s.url, s.id, msg)
}

// request sends method with params as request id.
func (s *rawSession) request(id int, method string, params map[string]any) rawReply {
	s.t.Helper()
	return s.post(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

// rawDo sends a bodiless request (GET, DELETE) for session id and returns
// the status and body, reading at most 64 KB within 10 seconds.
func rawDo(t *testing.T, method, url, session string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp.StatusCode, "" // a stream that stays open
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, string(b)
}

// listenStream is the standalone GET stream of a session, as the
// TypeScript SDK opens it after initialize.
type listenStream struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	got    []map[string]any
}

func (s *rawSession) listen() *listenStream {
	s.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", s.id)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		s.t.Fatalf("GET stream: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		s.t.Fatalf("GET stream: status %d: %s", resp.StatusCode, b)
	}
	l := &listenStream{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		defer resp.Body.Close()
		sseMessages(s.t, resp.Body, func(m map[string]any) {
			l.mu.Lock()
			l.got = append(l.got, m)
			l.mu.Unlock()
		})
	}()
	s.t.Cleanup(l.close)
	return l
}

func (l *listenStream) close() {
	l.cancel()
	<-l.done
}

func (l *listenStream) messages() []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]map[string]any(nil), l.got...)
}

// progressOf returns the progress values of the notifications/progress in
// msgs for token, in order, and whether the final message is the response
// to request id.
func progressOf(msgs []map[string]any, token string) []float64 {
	var out []float64
	for _, m := range msgs {
		if m["method"] != "notifications/progress" {
			continue
		}
		p, _ := m["params"].(map[string]any)
		if fmt.Sprint(p["progressToken"]) == token {
			f, _ := p["progress"].(float64)
			out = append(out, f)
		}
	}
	return out
}
