package mcpserver

// Serving stdio before the server is built.
//
// `vmcp run` must connect its backends and compile the workflows against
// their live tools before it knows its tools, and npm backends take
// seconds to boot. An MCP host, though, waits for the answer to initialize
// (2025-11-25) or server/discover (2026-07-28) before anything else, and
// some give up; the TypeScript SDK v2 client in `auto` mode even starts the
// server twice, once only to probe it. So ServeStdioEarly answers at once
// what needs no tools, and holds the rest:
//
//   - initialize, server/discover and ping are answered by an early
//     mcp-go server with the capabilities the real one will have
//     (capabilityOptions, shared with New);
//   - every other message is queued, in order.
//
// When build returns the real server, it takes over the stream: it is
// given the client's initialize again, under a reserved id whose answer is
// not written (its session must record the client's capabilities), then,
// once that is answered, notifications/initialized and the queue, then the
// rest of the input as it comes. If build fails, every request held or
// still to come is answered with a JSON-RPC error that says why vmcp
// could not start (naming the backend that did not come up, or the
// workflow errors), until the input ends; ServeStdioEarly then returns the
// build error.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"
)

// EarlyOptions are what the early answers need to know of the server that
// build will return: they must match its Options.
type EarlyOptions struct {
	Name, Version string
	ListChanged   bool
	// Tasks is whether the server will serve tasks (Options.Tasks.Runs set).
	Tasks bool
}

// replayID is the id under which the client's initialize is given again to
// the real server; its answer is dropped.
const replayID = "vmcp-early-initialize"

// earlyMethods are answered before the server is built.
var earlyMethods = map[string]bool{
	string(mcp.MethodInitialize): true,
	"server/discover":            true,
	string(mcp.MethodPing):       true,
}

// ServeStdioEarly serves MCP on in and out like [Server.ServeStdio], but
// starts before the server exists: see the top of this file. build runs
// once, concurrently with the early answers, and has returned by the time
// ServeStdioEarly does. When ctx ends first, it returns build's error.
func ServeStdioEarly(ctx context.Context, in io.Reader, out io.Writer, opts EarlyOptions, build func() (*Server, error)) error {
	f := &front{out: out, early: newEarlyMCP(opts)}
	built := make(chan buildResult, 1)
	go func() {
		srv, err := build()
		built <- buildResult{srv, err}
	}()
	lines := readLines(in)
	for {
		select {
		case <-ctx.Done():
			return (<-built).err
		case line, ok := <-lines:
			if !ok {
				res := <-built // the input ended before the server was built
				return res.err
			}
			f.hold(ctx, line)
		case res := <-built:
			if res.err != nil {
				return f.refuse(ctx, lines, res.err)
			}
			return f.handOver(ctx, res.srv, lines)
		}
	}
}

type buildResult struct {
	srv *Server
	err error
}

// front is the stream's state before the server is built.
type front struct {
	out   io.Writer
	mu    sync.Mutex // serialises writes to out
	early *mcpgo.MCPServer
	// initialize and initialized are the client's handshake, for the replay.
	initialize, initialized []byte
	queue                   [][]byte
}

// message is what the front reads of a JSON-RPC message.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
}

func parseMessage(line []byte) (message, bool) {
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		return m, false
	}
	return m, true
}

// hold answers an early method or queues the message.
func (f *front) hold(ctx context.Context, line []byte) {
	m, ok := parseMessage(line)
	switch {
	case ok && len(m.ID) > 0 && earlyMethods[m.Method]:
		if m.Method == string(mcp.MethodInitialize) {
			f.initialize = line
		}
		f.write(f.early.HandleMessage(ctx, line))
	case ok && m.Method == string(mcp.MethodNotificationInitialized):
		f.initialized = line
	default:
		f.queue = append(f.queue, line)
	}
}

// handOver gives the stream to srv: the replayed handshake, the queue,
// then everything else read from the input.
func (f *front) handOver(ctx context.Context, srv *Server, lines <-chan []byte) error {
	pr, pw := io.Pipe()
	replayed := make(chan struct{})
	out := &dropReply{w: f.out, mu: &f.mu, id: replayID, seen: replayed}
	done := make(chan error, 1)
	go func() {
		done <- srv.ServeStdio(ctx, pr, out)
	}()
	feed := func(line []byte) bool {
		_, err := pw.Write(append(bytes.TrimRight(line, "\n"), '\n'))
		return err == nil
	}
	go func() {
		defer pw.Close()
		if f.initialize != nil {
			if !feed(withID(f.initialize, replayID)) {
				return
			}
			select {
			case <-replayed:
			case <-ctx.Done():
				return
			}
		}
		if f.initialized != nil && !feed(f.initialized) {
			return
		}
		for _, line := range f.queue {
			if !feed(line) {
				return
			}
		}
		for line := range lines {
			if !feed(line) {
				return
			}
		}
	}()
	return <-done
}

// refuse answers every held and later request with the build error, and
// the early methods as before, until the input ends.
func (f *front) refuse(ctx context.Context, lines <-chan []byte, err error) error {
	msg := fmt.Sprintf("vmcp could not start: %v", err)
	answer := func(line []byte) {
		m, ok := parseMessage(line)
		switch {
		case !ok || len(m.ID) == 0: // a notification: no answer
		case earlyMethods[m.Method]:
			f.write(f.early.HandleMessage(ctx, line))
		default:
			f.write(mcp.NewJSONRPCError(mcp.NewRequestId(rawID(m.ID)), mcp.INTERNAL_ERROR, msg, nil))
		}
	}
	for _, line := range f.queue {
		answer(line)
	}
	f.queue = nil
	for {
		select {
		case <-ctx.Done():
			return err
		case line, ok := <-lines:
			if !ok {
				return err
			}
			answer(line)
		}
	}
}

// write writes one answer as a line.
func (f *front) write(resp mcp.JSONRPCMessage) {
	if resp == nil {
		return
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	_, _ = f.out.Write(append(b, '\n'))
}

// rawID decodes a JSON-RPC id (a number or a string).
func rawID(raw json.RawMessage) any {
	var id any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&id) != nil {
		return string(raw)
	}
	if n, ok := id.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i
		}
	}
	return id
}

// withID returns the request line with its id replaced.
func withID(line []byte, id string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	m["id"], _ = json.Marshal(id)
	b, err := json.Marshal(m)
	if err != nil {
		return line
	}
	return b
}

// readLines sends each line of r (without its newline) until r ends.
func readLines(r io.Reader) <-chan []byte {
	ch := make(chan []byte)
	go func() {
		defer close(ch)
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				ch <- bytes.TrimRight(line, "\r\n")
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

// dropReply writes the real server's output, except the answer to the
// replayed initialize, whose arrival it signals. The server writes whole
// lines.
type dropReply struct {
	w     io.Writer
	mu    *sync.Mutex // the front's: guards w
	id    string
	seen  chan struct{}
	once  sync.Once
	bufMu sync.Mutex
	buf   []byte
}

func (d *dropReply) Write(p []byte) (int, error) {
	d.bufMu.Lock()
	defer d.bufMu.Unlock()
	d.buf = append(d.buf, p...)
	for {
		i := bytes.IndexByte(d.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := append([]byte(nil), d.buf[:i+1]...)
		d.buf = d.buf[i+1:]
		if d.isReplayAnswer(line) {
			d.once.Do(func() { close(d.seen) })
			continue
		}
		d.mu.Lock()
		_, err := d.w.Write(line)
		d.mu.Unlock()
		if err != nil {
			return len(p), err
		}
	}
}

func (d *dropReply) isReplayAnswer(line []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != "" {
		return false
	}
	var id string
	return json.Unmarshal(m.ID, &id) == nil && id == d.id
}
