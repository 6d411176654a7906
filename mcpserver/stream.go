package mcpserver

// Call streams: the notifications of a tools/call go on that call's own
// response stream, in the order they are sent.
//
// mcp-go v1.2.1 queues every notification of a session in one channel. Each
// POST in flight and the standalone GET stream (which the TypeScript SDK
// always opens) read from it, so a call's progress is spread over several
// streams and the client sees it out of order (1, 3, 2, 4), or as part of
// another call's response; and a notification the POST's forwarder holds
// when the handler returns is lost. So vmcp does not queue the progress it
// sends: the endpoint (endpoint.go) hands mcp-go a callStream wrapping the
// POST's ResponseWriter and puts the same callStream in the request
// context, and sendProgress writes each notification to it directly, as an
// SSE event, before the tool handler returns.
//
// callStream serialises every write to the response, vmcp's and mcp-go's
// (whose forwarder goroutine may still write other notifications), and
// keeps the framing right whoever starts the response: when vmcp upgrades
// it to SSE first, the JSON reply mcp-go then writes (json.Encoder, one
// Write) is sent as the final SSE event. mcp-go's header changes go to a
// shadow header that is copied to the response when mcp-go writes its
// status, so the two never touch the same map concurrently. Once the tool
// handler has returned (toolDone), the stream takes no more notifications.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/vmcp-dev/vmcp/runtime"
)

type callStreamKey struct{}

// callStreamFrom returns the call stream of the request of ctx, or nil.
func callStreamFrom(ctx context.Context) *callStream {
	cs, _ := ctx.Value(callStreamKey{}).(*callStream)
	return cs
}

var errCallStreamDone = errors.New("the call's response has already been written")

type callStream struct {
	w       http.ResponseWriter
	flusher http.Flusher
	shadow  http.Header // mcp-go's view of the headers

	mu          sync.Mutex
	wroteHeader bool // the response's status line is out
	ownSSE      bool // vmcp switched the response to SSE before mcp-go wrote
	mcpSSE      bool // mcp-go's own response is SSE
	toolDone    bool // the tool handler returned
}

func newCallStream(w http.ResponseWriter) *callStream {
	f, _ := w.(http.Flusher)
	return &callStream{w: w, flusher: f, shadow: http.Header{}}
}

// Header is mcp-go's header map (see the top of the file).
func (c *callStream) Header() http.Header { return c.shadow }

func (c *callStream) WriteHeader(code int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writeHeaderLocked(code)
}

// writeHeaderLocked sends mcp-go's status and headers, unless vmcp already
// sent its own. Either way it notes whether what mcp-go writes next is SSE
// (it sets the Content-Type before each WriteHeader).
func (c *callStream) writeHeaderLocked(code int) {
	c.mcpSSE = strings.HasPrefix(c.shadow.Get("Content-Type"), "text/event-stream")
	if c.wroteHeader {
		return
	}
	c.wroteHeader = true
	h := c.w.Header()
	for k, v := range c.shadow {
		h[k] = v
	}
	c.w.WriteHeader(code)
}

// Write is mcp-go writing the response body: SSE events, or one JSON
// reply, which becomes an SSE event when vmcp already made the response
// SSE.
func (c *callStream) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.wroteHeader {
		c.writeHeaderLocked(http.StatusOK)
	}
	if c.ownSSE && !c.mcpSSE {
		if _, err := fmt.Fprintf(c.w, "event: message\ndata: %s\n\n", bytes.TrimRight(p, "\n")); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.w.Write(p)
}

func (c *callStream) Flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.flusher != nil {
		c.flusher.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (c *callStream) Unwrap() http.ResponseWriter { return c.w }

// notify writes one JSON-RPC notification to the call's response as an SSE
// event, upgrading the response to SSE if nothing was written yet.
func (c *callStream) notify(method string, params map[string]any) error {
	data, err := runtime.MarshalJSON(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.toolDone:
		return errCallStreamDone
	case c.flusher == nil:
		return errors.New("the response writer cannot stream")
	case !c.wroteHeader:
		h := c.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("Connection", "keep-alive")
		c.w.WriteHeader(http.StatusOK)
		c.wroteHeader, c.ownSSE = true, true
	case !c.ownSSE && !c.mcpSSE:
		return errCallStreamDone // a plain JSON reply has begun
	}
	if _, err := fmt.Fprintf(c.w, "event: message\ndata: %s\n\n", data); err != nil {
		return err
	}
	c.flusher.Flush()
	return nil
}

// endTool marks the tool handler as returned.
func (c *callStream) endTool() {
	c.mu.Lock()
	c.toolDone = true
	c.mu.Unlock()
}
