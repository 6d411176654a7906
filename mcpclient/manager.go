package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/auth/credentials"
	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/toolcall"
)

// Options configure Connect.
type Options struct {
	// Logger receives connection, restart and backend stderr logs (stderr
	// lines at debug level); nil discards them.
	Logger *slog.Logger
	// ClientName and ClientVersion are sent in initialize (defaults
	// "vmcp" and "dev").
	ClientName, ClientVersion string
	// MaxResultBytes bounds the size of one backend answer (vmcp.yaml's
	// limits.maxResultBytes): over stdio the JSON-RPC line, over HTTP the
	// response body. A call whose answer is larger fails with a
	// *ResultTooLargeError, and the session goes on. 0 means
	// config.DefaultMaxResultBytes; negative means no limit.
	MaxResultBytes int
}

// Manager holds one MCP client per backend. It is safe for concurrent use.
type Manager struct {
	opts  Options
	log   *slog.Logger
	names []string // sorted
	conns map[string]*conn
	// first is each backend's first start (start.go).
	first map[string]*firstStart

	// ctx lives as long as the manager: stdio processes and HTTP streams
	// are bound to it, and Close cancels it.
	ctx    context.Context
	cancel context.CancelFunc

	// watchers counts the goroutines reading stdio backends' stderr.
	watchers sync.WaitGroup

	// http carries every HTTP backend's requests (see newHTTPClient).
	http *http.Client

	// progress routes backends' progress to the calls that asked for it.
	progress progressRoutes

	closeOnce sync.Once
	closeErr  error
}

var _ toolcall.Backend = (*Manager)(nil)

// Connect starts or dials every backend concurrently, initializes each one
// and lists its tools (following pagination), and waits for all of them
// (Start, then Wait). Each start is bounded by the backend's StartTimeout;
// ctx bounds the wait. If any backend cannot start, Connect closes the
// others and returns an error naming each failed backend and what failed
// (with the stderr tail of a stdio process that exited).
func Connect(ctx context.Context, backends map[string]*config.Backend, opts Options) (*Manager, error) {
	m, err := Start(backends, opts)
	if err != nil {
		return nil, err
	}
	if err := m.Wait(ctx, m.names...); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// newManager checks the backends' configuration, fills in the defaults
// and builds the manager without starting anything.
func newManager(backends map[string]*config.Backend, opts Options) (*Manager, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.ClientName == "" {
		opts.ClientName = "vmcp"
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "dev"
	}
	if opts.MaxResultBytes == 0 {
		opts.MaxResultBytes = config.DefaultMaxResultBytes
	}
	m := &Manager{opts: opts, log: opts.Logger, conns: map[string]*conn{}, first: map[string]*firstStart{},
		http: newHTTPClient(opts.MaxResultBytes)}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	for name, b := range backends {
		if b == nil {
			m.cancel()
			return nil, fmt.Errorf("backend %q has no configuration", name)
		}
		cfg := *b
		cfg.Name = name
		if cfg.Timeout <= 0 {
			cfg.Timeout = config.DefaultCallTimeout
		}
		if cfg.StartTimeout <= 0 {
			cfg.StartTimeout = config.DefaultStartTimeout
		}
		if cfg.Transport == "" {
			cfg.Transport = config.TransportStdio
			if cfg.URL != "" {
				cfg.Transport = config.TransportStreamableHTTP
			}
		}
		c := &conn{m: m, cfg: &cfg, http: m.http}
		if cfg.Auth != nil {
			rt, err := credentials.Transport(name, credentialSpec(cfg.Auth), m.http.Transport, nil)
			if err != nil {
				m.cancel()
				return nil, err
			}
			c.http = &http.Client{Transport: rt}
		}
		m.conns[name] = c
		m.names = append(m.names, name)
	}
	sort.Strings(m.names)
	return m, nil
}

// Backends returns the backend names, sorted.
func (m *Manager) Backends() []string { return append([]string(nil), m.names...) }

// CallTool implements toolcall.Backend: it calls call.Tool on call.Backend
// and converts the MCP result. A result with isError is a ToolResult with
// IsError set, not a Go error; transport failures, timeouts, cancellation
// and a backend that exited are Go errors naming the backend.
func (m *Manager) CallTool(ctx context.Context, call toolcall.Call) (*toolcall.Result, error) {
	start := time.Now()
	res, err := m.callRaw(ctx, call.Backend, call.Tool, call.StepID, call.Arguments)
	m.logCall(ctx, call, time.Since(start), res, err)
	if err != nil {
		return nil, err
	}
	out, err := toToolResult(res)
	if err != nil {
		return nil, fmt.Errorf("backend %q: tool %q: %w", call.Backend, call.Tool, err)
	}
	return out, nil
}

// logCall logs one backend call at Debug: the backend and tool, the run
// and step it was for, how long it took and how big its result was (the
// result as JSON, in bytes), or its error. Never the arguments or the
// result's content: they may carry parameter values, which may be secrets.
func (m *Manager) logCall(ctx context.Context, call toolcall.Call, took time.Duration, res *mcp.CallToolResult, err error) {
	if !m.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	attrs := []slog.Attr{
		slog.String("backend", call.Backend), slog.String("tool", call.Tool),
		slog.String("run_id", call.RunID), slog.String("step_id", call.StepID),
		slog.Duration("duration", took),
	}
	if err != nil {
		attrs = append(attrs, slog.String("err", err.Error()))
	} else {
		size := 0
		if b, merr := json.Marshal(res); merr == nil {
			size = len(b)
		}
		attrs = append(attrs, slog.Int("result_bytes", size), slog.Bool("is_error", res.IsError))
	}
	m.log.LogAttrs(ctx, slog.LevelDebug, "backend call", attrs...)
}

// CallRaw calls a backend tool and returns the MCP result unconverted, for
// serving backend tools as they are. nil args are sent as {}.
//
// The call's deadline is the backend's timeout unless ctx ends earlier.
// When ctx is cancelled, the request is cancelled on the wire too (mcp-go
// sends notifications/cancelled over stdio). A stdio backend that exits
// fails the call with an *ExitError and is restarted by the next call.
// When ctx carries a toolcall.Progress, the backend is asked for
// progress and its notifications are passed on (progress.go).
func (m *Manager) CallRaw(ctx context.Context, backend, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	return m.callRaw(ctx, backend, tool, "", args)
}

// callRaw is CallRaw for step stepID ("" for none), which the backend's
// questions name (relay.go).
func (m *Manager) callRaw(ctx context.Context, backend, tool, stepID string, args map[string]any) (*mcp.CallToolResult, error) {
	c, ok := m.conns[backend]
	if !ok {
		return nil, fmt.Errorf("unknown backend %q (configured: %s)", backend, strings.Join(m.names, ", "))
	}
	if c.cfg.Auth != nil && credentials.ActsForCaller(c.cfg.Auth.Kind) {
		if err := credentials.CheckCaller(ctx, backend); err != nil {
			return nil, err
		}
	}
	if args == nil {
		// mcp-go would send "arguments": null, which TypeScript servers
		// reject.
		args = map[string]any{}
	}
	callCtx, budget := withBudget(ctx, c.cfg.Timeout)
	defer budget.stop()
	callCtx, done := c.beginCall(callCtx, tool, stepID, budget)
	defer done()
	callCtx, overLimit := withOverLimitMark(callCtx)
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	if fn := toolcall.ProgressFrom(ctx); fn != nil {
		token, done := m.progress.add(fn)
		defer done()
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
	}
	if tc, ok := toolcall.TraceFrom(ctx); ok {
		// The caller's trace goes on in params._meta (and, for HTTP
		// backends, in the headers: traceHeaders).
		if req.Params.Meta == nil {
			req.Params.Meta = &mcp.Meta{}
		}
		req.Params.Meta.AdditionalFields = traceMeta(tc)
	}
	s, err := c.get(callCtx)
	if err != nil {
		return nil, err
	}
	res, err := s.callTool(callCtx, req)
	if c.sessionLost(err) {
		// The HTTP server forgot the session (it restarted) and did not
		// run the call: start a new session and send it once more.
		c.fail(s, err)
		if s, err = c.get(callCtx); err != nil {
			return nil, err
		}
		res, err = s.callTool(callCtx, req)
	}
	if err == nil {
		if res == nil {
			return nil, fmt.Errorf("backend %q: tool %q returned no result", backend, tool)
		}
		return res, nil
	}
	var stuck *StuckError
	var noCredential *credentials.Error
	switch {
	case errors.As(err, &noCredential):
		// No token for this call (the endpoint refused it): the request
		// was not sent, and the session serves other calls on.
		return nil, noCredential
	case errors.As(err, &stuck):
		// This call's own write missed its deadline.
		return nil, c.fail(s, err)
	case strings.HasPrefix(err.Error(), resultTooLargeMark):
		size, _ := strconv.Atoi(strings.TrimPrefix(err.Error(), resultTooLargeMark))
		return nil, &ResultTooLargeError{Backend: backend, Tool: tool, Limit: m.opts.MaxResultBytes, Size: size}
	case errors.Is(err, errBodyTooLarge), overLimit.Load():
		return nil, &ResultTooLargeError{Backend: backend, Tool: tool, Limit: m.opts.MaxResultBytes}
	case ended(ctx):
		if ctx.Err() == nil || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("backend %q: tool %q: deadline exceeded: %w", backend, tool, context.DeadlineExceeded)
		}
		return nil, fmt.Errorf("backend %q: tool %q: call cancelled: %w", backend, tool, ctx.Err())
	case ended(callCtx):
		return nil, &TimeoutError{Backend: backend, Tool: tool, Timeout: c.cfg.Timeout}
	case !isTransportFailure(err):
		return nil, fmt.Errorf("backend %q: tool %q: %w", backend, tool, samplingRefused(backend, err))
	}
	return nil, c.fail(s, err)
}

// callTool calls a tool on the session. Over stdio it returns as soon as
// ctx ends, even while mcp-go is still blocked writing the request to a
// backend that does not read (see stdio.go); the abandoned call ends when
// the write does, at the latest when the stall kills the backend.
func (s *session) callTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if s.stdin == nil {
		return s.client.CallTool(ctx, req)
	}
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := s.client.CallTool(ctx, req)
		done <- answer{res, err}
	}()
	select {
	case a := <-done:
		return a.res, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// ResultTooLargeError is a call whose answer was over the manager's
// MaxResultBytes (limits.maxResultBytes). The answer was discarded unread;
// the backend keeps serving.
type ResultTooLargeError struct {
	Backend, Tool string
	Limit         int
	// Size is the answer's size in bytes when it is known (stdio reads
	// to its end, discarding it; HTTP stops at the limit), else 0.
	Size int
}

func (e *ResultTooLargeError) Error() string {
	size := ""
	if e.Size > 0 {
		size = fmt.Sprintf(" (%d bytes)", e.Size)
	}
	return fmt.Sprintf("backend %q: tool %q returned an answer%s over limits.maxResultBytes (%d bytes); raise the limit in vmcp.yaml or make the tool return less",
		e.Backend, e.Tool, size, e.Limit)
}

// idleConnsPerBackend is how many idle keep-alive connections to one HTTP
// backend are kept for reuse: more than a workflow's steps or forEach
// iterations run at once by default (10; forEach at most 50), so parallel
// calls do not dial new connections.
const idleConnsPerBackend = 64

// newHTTPClient returns the HTTP client of a manager's HTTP backends.
// mcp-go's transports default to net/http's default client, which keeps
// only 2 idle connections per host: with 10 calls to one backend in
// parallel it dialed and dropped a connection about every 30 calls (205
// connections for 5000 calls), and the calls' p50 was 10% higher.
//
// maxResultBytes > 0 bounds the body of every answer (see bodylimit.go).
func newHTTPClient(maxResultBytes int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 0 // no limit across backends
	t.MaxIdleConnsPerHost = idleConnsPerBackend
	if maxResultBytes <= 0 {
		return &http.Client{Transport: t}
	}
	return &http.Client{Transport: &limitedTransport{next: t, limit: int64(maxResultBytes)}}
}

// credentialSpec is backends.<name>.auth for package credentials.
func credentialSpec(a *config.BackendAuth) credentials.Spec {
	return credentials.Spec{Kind: a.Kind, Token: a.Token, Header: a.Header, Value: a.Value,
		TokenURL: a.TokenURL, ClientID: a.ClientID, ClientSecret: a.ClientSecret, Scopes: a.Scopes, Audience: a.Audience}
}

// TimeoutError is a call that the backend did not answer within its
// configured timeout. It matches context.DeadlineExceeded with errors.Is.
type TimeoutError struct {
	Backend, Tool string
	Timeout       time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("backend %q: tool %q did not answer within %s (the backend's timeout)", e.Backend, e.Tool, e.Timeout)
}

func (e *TimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// sessionLost reports whether an HTTP backend rejected a request because
// it no longer knows the session: mcp-go's ErrSessionTerminated for the
// 404 the specification prescribes, or a JSON-RPC error about the session
// id, which is what the TypeScript SDK sends (400 "No valid session ID
// provided"). Either way the server did not run the request.
func (c *conn) sessionLost(err error) bool {
	if err == nil || c.cfg.Transport == config.TransportStdio {
		return false
	}
	if errors.Is(err, transport.ErrSessionTerminated) {
		return true
	}
	msg := strings.ToLower(err.Error())
	return !isTransportFailure(err) && strings.Contains(msg, "session")
}

// isTransportFailure reports whether err came from the transport (mcp-go
// wraps those in *transport.Error) rather than being the server's JSON-RPC
// error response (unknown tool, invalid params, ...), after which the
// session is still fine.
func isTransportFailure(err error) bool {
	var te *transport.Error
	return errors.As(err, &te)
}

// Tools returns the tools a backend listed at its last (re)start, sorted
// by name, or nil for an unknown backend.
func (m *Manager) Tools(backend string) []mcp.Tool {
	c, ok := m.conns[backend]
	if !ok {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]mcp.Tool(nil), c.tools...)
}

// Catalog returns the tool schemas of every backend.
func (m *Manager) Catalog() *catalog.Catalog {
	tools := map[string][]mcp.Tool{}
	for _, n := range m.names {
		tools[n] = m.Tools(n)
	}
	cat, err := toCatalog(tools)
	if err != nil {
		// Tools decoded from JSON always encode again; this is a bug.
		panic(fmt.Sprintf("mcpclient: building the catalog: %v", err))
	}
	return cat
}

// Ready reports each backend's health: nil when it has a live session,
// otherwise why not (for example the exit of a stdio process that the next
// call will restart, or a *StuckError for one that stopped reading its
// stdin: blocked for a while, then killed).
func (m *Manager) Ready() map[string]error {
	out := make(map[string]error, len(m.names))
	for _, n := range m.names {
		c := m.conns[n]
		c.mu.Lock()
		switch {
		case c.sess != nil && c.sess.stdin != nil && c.sess.stdin.blocked() >= stdinBlockedReport:
			out[n] = &StuckError{Backend: n, Blocked: c.sess.stdin.blocked()}
		case c.sess != nil:
			out[n] = nil
		case c.down != nil:
			out[n] = c.down
		default:
			out[n] = fmt.Errorf("backend %q is not connected", n)
		}
		c.mu.Unlock()
	}
	return out
}

// Close shuts every backend down (closing stdin of stdio processes, then
// killing what is left of their process groups) and waits for them. It is
// safe to call more than once; calls after Close fail.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var errs []error
		for _, n := range m.names {
			c := m.conns[n]
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.mu.Lock()
				s := c.sess
				c.sess = nil
				c.closed = true
				c.down = c.closedErr()
				c.mu.Unlock()
				if s == nil {
					return
				}
				if err := s.close(); err != nil && !isExitAfterClose(err) {
					mu.Lock()
					errs = append(errs, fmt.Errorf("backend %q: close: %w", n, err))
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		// Starts still in flight fail now; get closes what they made.
		m.cancel()
		m.http.CloseIdleConnections()
		// The processes are gone, so their stderr readers end; a
		// grandchild that escaped the process group could hold one open,
		// and is not worth hanging for.
		watched := make(chan struct{})
		go func() { m.watchers.Wait(); close(watched) }()
		select {
		case <-watched:
		case <-time.After(5 * time.Second):
			m.log.Warn("a backend's stderr is still open after Close")
		}
		sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
		m.closeErr = errors.Join(errs...)
	})
	return m.closeErr
}

// isExitAfterClose reports whether a close error only says that the
// process ended by a signal we sent or with a non-zero status on shutdown,
// which is normal for servers that do not exit cleanly on EOF.
func isExitAfterClose(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "signal:") || strings.HasPrefix(s, "exit status")
}
