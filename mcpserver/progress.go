package mcpserver

// Progress: when a tools/call carries a progress token, every finished step
// (completed, failed or skipped) becomes one notifications/progress with
// progress = steps finished so far, total = steps in the workflow, and a
// message naming the step and its status. Events of steps that finish at
// the same time arrive on different goroutines, so they are numbered under
// a lock: progress always increases, as MCP requires, and no step is
// reported twice.
//
// Over streamable HTTP each notification is written straight to the
// call's own response stream (stream.go), so it arrives in order, on the
// right stream, before the result. Without a call stream (stdio, or the
// mcp-go handler mounted without vmcp's endpoint) notifications go through
// mcp-go's session channel. Over HTTP mcp-go v1.2.1 moves them from there
// to the response on a forwarder goroutine and drops one the forwarder has
// taken but not yet written when the handler returns; over stdio another
// goroutine writes the channel to stdout, so the last notification often
// follows the response, and clients that drop progress for finished
// requests (the TypeScript SDK does) never see it. For both,
// flushMiddleware waits, after a handler that sent progress through the
// session, until the channel is empty and then NotifyFlush more, bounded
// by a second.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/runtime"
)

type progress struct {
	s     *Server
	ctx   context.Context
	token mcp.ProgressToken

	mu   sync.Mutex
	done int
}

// newProgress returns a progress reporter for the call, or nil when the
// client sent no progress token.
func (s *Server) newProgress(ctx context.Context, req mcp.CallToolRequest) *progress {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return nil
	}
	return &progress{s: s, ctx: ctx, token: req.Params.Meta.ProgressToken}
}

func (p *progress) onEvent(ev runtime.Event) {
	status := finishedStatus(ev.Kind)
	if status == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.s.sendProgress(p.ctx, p.token, p.done, ev, status)
}

// finishedStatus is the status word of a step-finished event, or "" for
// other events.
func finishedStatus(kind runtime.EventKind) string {
	switch kind {
	case runtime.EventStepCompleted:
		return "completed"
	case runtime.EventStepFailed:
		return "failed"
	case runtime.EventStepSkipped:
		return "skipped"
	}
	return ""
}

// sendProgress sends notifications/progress number n for the finished
// step of ev on the request of ctx, and marks the request for
// flushMiddleware.
func (s *Server) sendProgress(ctx context.Context, token mcp.ProgressToken, n int, ev runtime.Event, status string) {
	params := map[string]any{
		"progressToken": token,
		"progress":      n,
		"total":         ev.Total,
		"message":       fmt.Sprintf("step %s %s (%d/%d)", ev.StepID, status, n, ev.Total),
	}
	if err := s.notify(ctx, string(mcp.MethodNotificationProgress), params); err != nil {
		s.log.Debug("progress notification not sent", "run_id", ev.RunID, "step_id", ev.StepID, "err", err)
	}
}

// notify sends a notification that belongs to the request of ctx: on its
// call stream when it has one, otherwise through the session (and then
// marks the request for flushMiddleware).
func (s *Server) notify(ctx context.Context, method string, params map[string]any) error {
	if cs := callStreamFrom(ctx); cs != nil {
		return cs.notify(method, params)
	}
	if err := s.mcp.SendNotificationToClient(ctx, method, params); err != nil {
		return err
	}
	if sent, ok := ctx.Value(flushKey{}).(*atomic.Bool); ok {
		sent.Store(true)
	}
	return nil
}

type flushKey struct{}

// awaitForwarder waits until the session's notification channel is empty,
// plus NotifyFlush, at most one second in all.
func (s *Server) awaitForwarder(ctx context.Context) {
	session := mcpgo.ClientSessionFromContext(ctx)
	if session == nil {
		return
	}
	ch := session.NotificationChannel()
	deadline := time.NewTimer(time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Microsecond)
	defer tick.Stop()
	for len(ch) > 0 {
		select {
		case <-tick.C:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
	t := time.NewTimer(s.opts.NotifyFlush)
	defer t.Stop()
	select {
	case <-t.C:
	case <-deadline.C:
	case <-ctx.Done():
	}
}

// flushMiddleware closes the call stream to notifications when the tool
// handler returns, and otherwise gives every tool call a flag that notify
// sets when it sends a notification through the session; after a call
// that sent one, on either transport, it waits for the forwarder before
// returning the result (see the top of this file).
func (s *Server) flushMiddleware(next mcpgo.ToolHandlerFunc) mcpgo.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if cs := callStreamFrom(ctx); cs != nil {
			defer cs.endTool()
			return next(ctx, req)
		}
		sent := new(atomic.Bool)
		res, err := next(context.WithValue(ctx, flushKey{}, sent), req)
		if sent.Load() {
			s.awaitForwarder(ctx)
		}
		return res, err
	}
}
