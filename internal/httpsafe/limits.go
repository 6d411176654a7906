package httpsafe

// Body limits and timeouts. net/http's ReadTimeout cannot be used on an MCP
// server: it also covers the time a handler streams its response, and when
// it fires the server cancels the request's context, which would kill
// long tool calls and the server-sent-event streams of streamable HTTP. So
// the server sets only ReadHeaderTimeout and IdleTimeout, and LimitBody
// bounds the body instead: it reads the whole body (at most MaxBody bytes)
// under a read deadline set through http.ResponseController, then clears
// the deadline before the handler runs. A body over the limit gets 413
// before the handler sees anything; a client that sends its body too
// slowly gets 408.
//
// BodyTimeout bounds the whole body, not only its first bytes: a client
// that trickles a body a byte at a time gets 408 and its connection closed
// when BodyTimeout has passed since the headers were read. The deadline is
// set first of all (BoundBody, the outermost layer of Protect), not only
// in LimitBody: a request refused before its body is read (401, 403) has
// its body drained by net/http after the handler returns, and without a
// deadline a trickling client would hold that connection for as long as
// it kept trickling.
//
// Connections are capped by the listener (Listen, see listen.go): it stops
// accepting once MaxConnections are open, so further clients wait in the
// kernel's accept queue, unserved, until one closes, and one client address
// may hold at most MaxConnectionsPerClient of them. What closes them is
// the server: IdleTimeout ends keep-alive connections that sit idle (also
// after a 401), and ReadHeaderTimeout ends connections that do not finish
// their request headers in time, the first request's included.

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// Defaults for Limits.
const (
	DefaultMaxBody           = 4 << 20 // 4 MiB
	DefaultBodyTimeout       = 10 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultMaxHeaderBytes    = 64 << 10
	DefaultMaxConnections    = 1024
)

// Limits bound what one request may cost. Zero fields take the defaults.
type Limits struct {
	MaxBody           int64
	BodyTimeout       time.Duration
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int
	// MaxConnections caps the connections open at once (Listen).
	MaxConnections int
	// MaxConnectionsPerClient caps the connections open at once from one
	// client address (ClientKey); default DefaultPerClient(MaxConnections).
	MaxConnectionsPerClient int
}

// DefaultPerClient is the default of MaxConnectionsPerClient: an eighth of
// maxConnections, but at least 8 (or maxConnections, when that is less).
func DefaultPerClient(maxConnections int) int {
	return max(maxConnections/8, min(maxConnections, 8))
}

func (l Limits) withDefaults() Limits {
	if l.MaxBody <= 0 {
		l.MaxBody = DefaultMaxBody
	}
	if l.BodyTimeout <= 0 {
		l.BodyTimeout = DefaultBodyTimeout
	}
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.MaxConnections <= 0 {
		l.MaxConnections = DefaultMaxConnections
	}
	if l.MaxConnectionsPerClient <= 0 {
		l.MaxConnectionsPerClient = DefaultPerClient(l.MaxConnections)
	}
	l.MaxConnectionsPerClient = min(l.MaxConnectionsPerClient, l.MaxConnections)
	return l
}

// BoundBody puts a read deadline of l.BodyTimeout on each request that
// has a body, before next sees it; LimitBody clears it once the body is
// read whole.
func BoundBody(l Limits, next http.Handler) http.Handler {
	l = l.withDefaults()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(l.BodyTimeout))
		}
		next.ServeHTTP(w, r)
	})
}

// LimitBody buffers each request body of at most l.MaxBody bytes, read
// within l.BodyTimeout, before calling next.
func LimitBody(l Limits, next http.Handler) http.Handler {
	l = l.withDefaults()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > l.MaxBody {
			w.Header().Set("Connection", "close")
			httpError(w, http.StatusRequestEntityTooLarge, "request body too large")
			return
		}
		rc := http.NewResponseController(w)
		deadline := rc.SetReadDeadline(time.Now().Add(l.BodyTimeout)) == nil
		body, err := io.ReadAll(io.LimitReader(r.Body, l.MaxBody+1))
		// The deadline stays on when the read failed or the body was too
		// long: the connection is closed after the error response, and the
		// server's attempt to drain the rest of the body must not hang.
		if deadline && err == nil && int64(len(body)) <= l.MaxBody {
			_ = rc.SetReadDeadline(time.Time{})
		}
		switch {
		case err != nil && isTimeout(err):
			w.Header().Set("Connection", "close")
			httpError(w, http.StatusRequestTimeout, "request body not received in time")
			return
		case err != nil:
			httpError(w, http.StatusBadRequest, "cannot read request body")
			return
		case int64(len(body)) > l.MaxBody:
			w.Header().Set("Connection", "close")
			httpError(w, http.StatusRequestEntityTooLarge, "request body too large")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// NewServer returns an *http.Server for handler with header and idle
// timeouts and a header size cap. It sets no ReadTimeout or WriteTimeout
// (see the top of this file); wrap handler with LimitBody (Protect does).
func NewServer(handler http.Handler, l Limits) *http.Server {
	l = l.withDefaults()
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
	}
}

// Listen listens on the TCP address addr and accepts at most
// l.MaxConnections connections at once, and l.MaxConnectionsPerClient from
// one client address (see listen.go). Serve it with NewServer's server,
// whose timeouts are what closes idle and stalled connections.
func Listen(addr string, l Limits) (net.Listener, error) {
	l = l.withDefaults()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return newCapListener(ln, l), nil
}
