package server

// Progress: when a tools/call carries a progress token, every finished step
// (completed, failed or skipped) becomes one notifications/progress with
// progress = steps finished so far, total = steps in the workflow, and a
// message naming the step and its status. Events of steps that finish at
// the same time arrive on different goroutines, so they are numbered under
// a lock: progress always increases, as MCP requires, and no step is
// reported twice.
//
// Over streamable HTTP mcp-go v1.2.1 moves notifications to the response
// stream on a forwarder goroutine; one taken off the channel just as the
// handler returns is dropped when the response wins the race. The
// flushMiddleware below waits NotifyFlush after a handler that sent
// progress over HTTP, which lets the forwarder write it first.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/runtime"
)

type progress struct {
	s     *Server
	ctx   context.Context
	token mcp.ProgressToken
	sent  *atomic.Bool // set when a notification went out; read by flushMiddleware

	mu   sync.Mutex
	done int
}

// newProgress returns a progress reporter for the call, or nil when the
// client sent no progress token.
func (s *Server) newProgress(ctx context.Context, req mcp.CallToolRequest) *progress {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return nil
	}
	sent, _ := ctx.Value(flushKey{}).(*atomic.Bool)
	if sent == nil {
		sent = new(atomic.Bool)
	}
	return &progress{s: s, ctx: ctx, token: req.Params.Meta.ProgressToken, sent: sent}
}

func (p *progress) onEvent(ev runtime.Event) {
	var status string
	switch ev.Kind {
	case runtime.EventStepCompleted:
		status = "completed"
	case runtime.EventStepFailed:
		status = "failed"
	case runtime.EventStepSkipped:
		status = "skipped"
	default:
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	msg := fmt.Sprintf("step %s %s (%d/%d)", ev.StepID, status, p.done, ev.Total)
	params := map[string]any{
		"progressToken": p.token,
		"progress":      p.done,
		"total":         ev.Total,
		"message":       msg,
	}
	if err := p.s.mcp.SendNotificationToClient(p.ctx, string(mcp.MethodNotificationProgress), params); err != nil {
		p.s.log.Debug("progress notification not sent", "run", ev.RunID, "step", ev.StepID, "err", err)
		return
	}
	p.sent.Store(true)
}

type flushKey struct{}

// flushMiddleware gives every tool call a flag that progress sets when it
// sends a notification, and after an HTTP call that sent one, waits
// NotifyFlush before returning the result (see the top of this file).
func (s *Server) flushMiddleware(next mcpserver.ToolHandlerFunc) mcpserver.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		sent := new(atomic.Bool)
		res, err := next(context.WithValue(ctx, flushKey{}, sent), req)
		if sent.Load() && transportOf(ctx) == transportHTTP {
			t := time.NewTimer(s.opts.NotifyFlush)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
		return res, err
	}
}
