package mcpserver

// MCP 2025-11-25 tasks on stdio.
//
// mcp-go's stdio server reads the client's messages itself, so tasks put a
// line filter in front of it: every line goes on to mcp-go except the
// task requests (tools/call of a workflow with params.task, and tasks/*),
// which tasks_wire.go answers, each on its own goroutine, writing to the
// same stdout through one lock (mcp-go writes each message with one
// Write, so whole lines never interleave). The filter also notes whether
// initialize declared elicitation.
//
// There is one session on stdio, and its client owns the process, so every
// task is the one caller's. A question goes out as an elicitation/create
// request tied to the task through mcp-go's stdio session, once the client
// has asked about the task (tasks/get or tasks/result); the answer comes
// back through mcp-go.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/runtime"
)

// stdioSession is the id of mcp-go's one stdio session.
const stdioSession = "stdio"

// lockedWriter serialises whole writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// lineReply answers one request with a line on stdout.
type lineReply struct {
	out io.Writer
	id  any
}

func (l lineReply) result(v any) { l.write(map[string]any{"jsonrpc": "2.0", "id": l.id, "result": v}) }

func (l lineReply) fail(code int, message string) {
	l.write(map[string]any{"jsonrpc": "2.0", "id": l.id, "error": rpcErr{code, message}})
}

func (l lineReply) write(msg map[string]any) {
	b, err := runtime.MarshalJSON(msg)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": l.id, "error": rpcErr{mcp.INTERNAL_ERROR, err.Error()}})
	}
	_, _ = l.out.Write(append(b, '\n'))
}

// stdioFilter returns what mcp-go's stdio server reads and writes instead
// of in and out. It serves task requests until in ends or ctx is
// cancelled; wait cancels it and returns once the task requests it serves
// have ended. The goroutine that reads in is not waited for: like mcp-go's
// own reader it may be blocked in a read of stdin, which nothing can end
// but the client; once the filter is cancelled it forwards nothing more.
func (t *tasks) stdioFilter(ctx context.Context, in io.Reader, out io.Writer) (io.Reader, io.Writer, func()) {
	lw := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(ctx)
	g := &handlerGroup{}
	canElicit := false
	go func() {
		defer cancel()
		r := bufio.NewReader(in)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 && !t.serveStdioLine(ctx, g, line, lw, &canElicit) {
				if _, werr := pw.Write(line); werr != nil {
					return
				}
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				pw.CloseWithError(err)
				return
			}
		}
	}()
	go func() { // a cancelled ctx ends mcp-go's read too
		<-ctx.Done()
		pw.CloseWithError(io.EOF)
	}()
	return pr, lw, func() {
		g.close()
		cancel()
		g.wg.Wait()
	}
}

// handlerGroup counts the task requests in flight; once closed it starts
// no more.
type handlerGroup struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func (g *handlerGroup) goServe(f func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return
	}
	g.wg.Go(f)
}

func (g *handlerGroup) close() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
}

// serveStdioLine serves line when it is a task request and reports whether
// it was.
func (t *tasks) serveStdioLine(ctx context.Context, g *handlerGroup, line []byte, out io.Writer, canElicit *bool) bool {
	// Most lines are none of these; a substring test spares decoding them
	// (arguments may be megabytes).
	if !bytes.Contains(line, []byte(`"tasks/`)) && !bytes.Contains(line, []byte(`"task"`)) &&
		!bytes.Contains(line, []byte(`"initialize"`)) {
		return false
	}
	msg := peekMessage(line)
	if msg.Method == string(mcp.MethodInitialize) {
		*canElicit = declaresElicitation(line)
		return false
	}
	if mcp.IsModernProtocol(msg.protocolVersion()) {
		return false // the extension is served over streamable HTTP only
	}
	req, ok := t.s.v1TaskRequest(msg.Method, line)
	if !ok {
		return false
	}
	elicit := *canElicit
	g.goServe(func() {
		rep := lineReply{out, req.ID}
		if req.Method == "tasks/result" {
			t.stdioTaskResult(ctx, req, rep)
			return
		}
		t.v1Request(ctx, httpsafe.LocalOperator, stdioSession, elicit, req, rep)
	})
	return true
}

// stdioTaskResult waits for the run of the task to end and answers with
// its tool result. Its questions go out through the stdio session.
func (t *tasks) stdioTaskResult(ctx context.Context, req *taskRequest, rep lineReply) {
	id := req.Params.TaskID
	v, err := t.get(ctx, httpsafe.LocalOperator, id, flavourV1)
	if err != nil {
		failTask(rep, "Failed to retrieve task result", err)
		return
	}
	t.markSeen(id)
	for !v.run.Status.Finished() {
		wait := make(<-chan struct{})
		if lt := t.liveTaskOf(id); lt != nil {
			wait = lt.done
		}
		select {
		case <-ctx.Done():
			return
		case <-wait:
		case <-time.After(t.opts.PollInterval / 5):
		}
		if v, err = t.get(ctx, httpsafe.LocalOperator, id, flavourV1); err != nil {
			failTask(rep, "Failed to retrieve task result", err)
			return
		}
	}
	res := RunResult(v.run)
	res.Meta.AdditionalFields[mcp.RelatedTaskMetaKey] = mcp.RelatedTaskMeta(id)
	rep.result(toolResultJSON(res))
}
