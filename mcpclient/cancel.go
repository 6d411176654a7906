package mcpclient

// Cancellation over HTTP.
//
// mcp-go's client sends notifications/cancelled for a request whose context
// ends only over stdio. Over streamable HTTP at protocol versions before
// 2026-07-28, and over SSE, it just drops the HTTP request, and the MCP
// specification says a server must not take a disconnect as a cancel: the
// backend would keep working on a call the workflow no longer wants. These
// wrappers embed the mcp-go transports (so every interface the client looks
// for is still there) and send the notification themselves, off the
// caller's path and bounded by cancelNotifyTimeout.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

const cancelNotifyTimeout = 5 * time.Second

// canceller sends notifications/cancelled through a transport.
type canceller struct {
	// legacy is set once initialize settled on a protocol version whose
	// HTTP transport does not cancel by closing the stream.
	legacy atomic.Bool
	wg     sync.WaitGroup
}

// afterSend is called with the outcome of every request.
func (c *canceller) afterSend(ctx context.Context, req transport.JSONRPCRequest, err error,
	send func(context.Context, mcp.JSONRPCNotification) error) {
	if err == nil || !ended(ctx) || !c.legacy.Load() ||
		req.Method == string(mcp.MethodInitialize) || req.Method == string(mcp.MethodServerDiscover) {
		return
	}
	n := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationCancelled),
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{
				"requestId": req.ID,
				"reason":    endReason(ctx),
			}},
		},
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelNotifyTimeout)
		defer cancel()
		_ = send(nctx, n)
	}()
}

// cancellingStreamable is a streamable HTTP transport that sends
// notifications/cancelled on legacy protocol versions.
type cancellingStreamable struct {
	*transport.StreamableHTTP
	canceller
	backend string
}

// SetRequestHandler refuses sampling (relay.go).
func (t *cancellingStreamable) SetRequestHandler(h transport.RequestHandler) {
	t.StreamableHTTP.SetRequestHandler(refuseSampling(t.backend, h))
}

func (t *cancellingStreamable) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := t.StreamableHTTP.SendRequest(ctx, req)
	t.afterSend(ctx, req, err, t.StreamableHTTP.SendNotification)
	return resp, err
}

func (t *cancellingStreamable) Close() error {
	t.wg.Wait()
	return t.StreamableHTTP.Close()
}

// cancellingSSE is an SSE transport that sends notifications/cancelled
// (SSE is always the legacy protocol).
type cancellingSSE struct {
	*transport.SSE
	canceller
}

func (t *cancellingSSE) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := t.SSE.SendRequest(ctx, req)
	t.afterSend(ctx, req, err, t.SSE.SendNotification)
	return resp, err
}

func (t *cancellingSSE) Close() error {
	t.wg.Wait()
	return t.SSE.Close()
}

// ended reports whether ctx is done or past its deadline. The SSE
// transport races its own timer against the context's, so a request can
// fail on the deadline a moment before ctx.Err is set.
func ended(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// endReason says why ctx ended, for notifications/cancelled.
func endReason(ctx context.Context) string {
	if err := ctx.Err(); err != nil {
		return err.Error()
	}
	return context.DeadlineExceeded.Error()
}
