package mcpserver

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
)

type transportKey struct{}

const (
	transportStdio = "stdio"
	transportHTTP  = "http"
)

func transportOf(ctx context.Context) string {
	t, _ := ctx.Value(transportKey{}).(string)
	return t
}

// ServeStdio serves MCP on in and out until in ends or ctx is cancelled.
// Only one stdio session may run per process (an mcp-go limit). Nothing but
// MCP messages is written to out.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	if s.tasks != nil { // task requests are served before mcp-go (tasks_stdio.go)
		var wait func()
		in, out, wait = s.tasks.stdioFilter(ctx, in, out)
		defer wait()
	}
	st := mcpgo.NewStdioServer(s.mcp)
	mcpgo.WithWorkerPoolSize(s.opts.StdioWorkers)(st)
	st.SetErrorLogger(slog.NewLogLogger(s.log.Handler(), slog.LevelError))
	st.SetContextFunc(func(ctx context.Context) context.Context {
		return context.WithValue(ctx, transportKey{}, transportStdio)
	})
	err := st.Listen(ctx, in, out)
	if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// MCPPath is where the streamable HTTP endpoint is served.
const MCPPath = "/mcp"

// Route is an extra HTTP endpoint served next to MCP.
type Route struct {
	// Pattern is an http.ServeMux pattern, e.g. "GET /healthz" or "/api/v1/".
	Pattern string
	Handler http.Handler
}

// HTTPHandler builds vmcp's HTTP mux: mcpHandler at MCPPath plus the extra
// routes (the run API, health and metrics endpoints are added this way).
// wrap, when not nil, wraps the whole mux (for authentication, say).
func HTTPHandler(mcpHandler http.Handler, wrap func(http.Handler) http.Handler, extra ...Route) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(MCPPath, mcpHandler)
	for _, r := range extra {
		mux.Handle(r.Pattern, r.Handler)
	}
	if wrap != nil {
		return wrap(mux)
	}
	return mux
}

// ServeHTTP serves handler on ln until ctx is cancelled, then shuts down:
// it closes MCP sessions (mcp may be nil), stops accepting connections and
// waits up to grace for calls in flight.
func ServeHTTP(ctx context.Context, ln net.Listener, handler http.Handler, limits httpsafe.Limits, mcp *Endpoint, grace time.Duration) error {
	// Header, idle and header-size limits, so slow or huge requests cannot
	// hold connections open; no read or write timeout, which would cut off
	// long tool calls and event streams.
	srv := httpsafe.NewServer(handler, limits)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if mcp != nil {
		mcp.CloseSessions(sctx)
	}
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	<-errc
	return err
}
