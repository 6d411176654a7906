package mcpclient

// One backend connection and its lifecycle.
//
// A conn holds at most one live session (an initialized mcp-go client with
// its tool list). Calls take the session without holding any lock, so they
// run concurrently. When a call fails at the transport level (the stdio
// process exited, the HTTP connection broke), the first caller to notice
// detaches the session; closing it (once) reaps a dead stdio process and
// yields its exit status, which becomes the error of that call and of every
// other call that was in flight on the same session. The next call finds no
// session and starts a new one (a new process, initialize, tools/list)
// under startMu, so concurrent callers start it once. Failure reports are
// matched by session identity, so a late report from an old session never
// tears down its replacement.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/sys/unix"

	"github.com/vmcp-dev/vmcp/config"
)

// conn is one configured backend.
type conn struct {
	m   *Manager
	cfg *config.Backend
	// http carries this backend's requests: the manager's client, or one
	// that adds the backend's credential (backends.<name>.auth).
	http *http.Client

	// startMu serialises (re)starts, so concurrent calls to a dead backend
	// start it once. It is held for as long as a start takes; mu never is,
	// so Ready and Tools answer at once even while a backend starts.
	startMu sync.Mutex

	mu     sync.Mutex
	sess   *session // nil when not connected
	closed bool     // set by Manager.Close
	// down says why there is no session (the last exit or failure); nil
	// before the first start. downOf is the session whose loss it tells.
	down   error
	downOf *session
	// tools is the list from the most recent successful start; it stays
	// when the session goes down, so the catalog does not flicker.
	tools []mcp.Tool

	// asking lists the calls in flight, for the questions the backend
	// asks (relay.go).
	asking askingCalls
}

// session is one live connection: a started, initialized client.
type session struct {
	client *client.Client
	stderr *stderrTail // stdio only
	cmd    *exec.Cmd   // stdio only: the process, leader of its own group
	// stdio only: the process's pipes (see stdio.go). The end of file of
	// stderrR is how an exit is noticed while no call is in flight; exited
	// closes then. childEnds are the child's ends until it has started.
	stdin     *stdinWriter
	stdout    *os.File
	stderrR   *os.File
	exited    chan struct{}
	childEnds []*os.File
	// stdio only: set once the backend stopped reading its stdin and was
	// killed for it (a *StuckError).
	stalled     atomic.Value
	stalledOnce sync.Once
	// HTTP only: sends notifications/cancelled where mcp-go does not.
	canceller *canceller

	closeOnce sync.Once
	closeErr  error
}

// close shuts the session's transport down once; for stdio it waits for
// the process and returns its exit error (nil for status 0).
//
// A stdio backend gets closeGrace to exit after its stdin closes. One stuck
// in a tool handler ignores that, and the MCP client above vmcp gives vmcp
// only a few seconds to exit before killing it, which would orphan the
// backend. So after closeGrace the whole process group is killed.
func (s *session) close() error {
	s.closeOnce.Do(func() {
		if s.cmd == nil {
			s.closeErr = s.client.Close()
			return
		}
		s.closeErr = s.closeStdio()
	})
	return s.closeErr
}

// closeGrace is how long a stdio backend may take to exit on its own.
const closeGrace = time.Second

// killGroup sends SIGKILL to the backend's process group; ESRCH just means
// it is gone already.
func (s *session) killGroup() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// get returns the live session, starting one when there is none.
func (c *conn) get(ctx context.Context) (*session, error) {
	if s, err := c.current(); s != nil || err != nil {
		return s, err
	}
	c.startMu.Lock()
	defer c.startMu.Unlock()
	// Another caller may have started it while we waited.
	if s, err := c.current(); s != nil || err != nil {
		return s, err
	}
	c.mu.Lock()
	restart := c.down != nil
	c.mu.Unlock()
	s, tools, err := c.start(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		if s != nil {
			s.close()
		}
		return nil, c.closedErr()
	}
	if err != nil {
		c.down, c.downOf = err, nil
		return nil, err
	}
	c.sess, c.tools, c.down, c.downOf = s, tools, nil, nil
	if restart {
		c.m.log.Info("backend restarted", "backend", c.cfg.Name, "tools", len(tools))
	}
	return s, nil
}

// current returns the live session, or an error once the manager is
// closed, or neither.
func (c *conn) current() (*session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, c.closedErr()
	}
	return c.sess, nil
}

func (c *conn) closedErr() error {
	return fmt.Errorf("backend %q: manager is closed", c.cfg.Name)
}

// fail tears the session down after a transport-level failure and returns
// the error for the call: for stdio, "backend "x" exited: <status>" with
// the stderr tail. Every call that was in flight on s gets the same error.
// Closing (and reaping) happens outside mu, so Ready never waits for it;
// until the first description of s is ready, Ready says "connection lost".
// Whoever describes s first (a failed call, or the watcher that saw the
// process exit) records the description, so a call that returns its
// ExitError never leaves Ready with less.
func (c *conn) fail(s *session, cause error) error {
	c.mu.Lock()
	mine := c.sess == s
	if mine {
		c.sess, c.downOf = nil, s
		c.down = fmt.Errorf("backend %q: connection lost: %w", c.cfg.Name, unwrapTransport(cause))
	}
	c.mu.Unlock()
	err := c.describeFailure(s, cause)
	c.mu.Lock()
	if c.sess == nil && !c.closed && c.downOf == s {
		c.down, c.downOf = err, nil
	}
	c.mu.Unlock()
	if mine {
		c.m.log.Warn("backend connection lost", "backend", c.cfg.Name, "err", err)
	}
	return err
}

// describeFailure closes s and says what happened to it.
func (c *conn) describeFailure(s *session, cause error) error {
	exitErr := s.close()
	if c.cfg.Transport != config.TransportStdio {
		return fmt.Errorf("backend %q: connection to %s failed: %w", c.cfg.Name, c.cfg.URL, cause)
	}
	s.awaitStderr()
	if stuck := s.stuckError(); stuck != nil {
		return stuck
	}
	status := "exit status 0"
	if exitErr != nil {
		status = exitErr.Error()
		if !strings.HasPrefix(status, "exit status") && !strings.HasPrefix(status, "signal") {
			status = "closed: " + status
		}
	}
	return &ExitError{Backend: c.cfg.Name, Status: status, Stderr: s.stderr.String(), cause: cause}
}

// ExitError is the failure of a call (or a start) whose stdio backend
// process exited.
type ExitError struct {
	Backend string
	Status  string // "exit status 7", "signal: killed", ...
	Stderr  string // the last lines the process wrote to stderr
	cause   error
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("backend %q exited: %s", e.Backend, e.Status)
	if e.Stderr != "" {
		msg += "; its stderr ends with:\n" + indent(e.Stderr)
	}
	return msg
}

func (e *ExitError) Unwrap() error { return e.cause }

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// start makes a new session: transport, client, initialize, tools/list.
// Everything is bounded by ctx and the backend's StartTimeout; the process and
// streams themselves live as long as the manager.
//
// A streamable HTTP backend is asked for the 2025-11-25 session handshake
// first (see legacyHTTP); one that refuses it, or fails the tool listing
// after it, is connected again with mcp-go's own negotiation, whose error
// is the one reported when both fail.
func (c *conn) start(ctx context.Context) (*session, []mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.StartTimeout)
	defer cancel()
	if c.cfg.Transport == config.TransportStreamableHTTP {
		s, tools, err := c.startOnce(ctx, true)
		if err == nil || ctx.Err() != nil {
			return s, tools, err
		}
		c.m.log.Debug("backend refused the 2025-11-25 handshake; negotiating the protocol version",
			"backend", c.cfg.Name, "err", err)
	}
	return c.startOnce(ctx, false)
}

// legacyHTTP is the protocol version asked of streamable HTTP backends
// first. Against mcp-go servers (measured with BenchmarkPartBackendHop and
// bench/mediator's variants) a tools/call at 2026-07-28 costs about twice as
// much as one in a 2025-11-25 session (p50 145µs against 78µs on loopback):
// the server makes a fresh session with its channels for every modern
// request and parses the body again for the standard headers, and the client
// re-encodes each call's parameters, and the tool's input schema, to mirror
// them into headers. What vmcp needs of a backend works the same on both:
// a cancelled call is cancelled with notifications/cancelled (cancel.go), a
// server that forgot the session is reconnected (sessionLost), and
// backend-initiated requests are not forwarded either way.
const legacyHTTP = mcp.LATEST_LEGACY_PROTOCOL_VERSION

// startOnce is one attempt of start; legacy pins a streamable HTTP backend
// to legacyHTTP.
func (c *conn) startOnce(ctx context.Context, legacy bool) (*session, []mcp.Tool, error) {
	s := &session{}
	var err error
	switch c.cfg.Transport {
	case config.TransportStdio:
		err = c.newStdio(s)
	case config.TransportStreamableHTTP:
		err = c.newStreamable(s, legacy)
	case config.TransportSSE:
		err = c.newSSE(s)
	default:
		err = fmt.Errorf("unknown transport %q", c.cfg.Transport)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("backend %q: %w", c.cfg.Name, err)
	}
	if s.cmd != nil {
		err = s.startProcess()
	}
	if err == nil {
		err = s.client.Start(c.m.ctx)
	}
	if err != nil {
		if s.stderrR != nil {
			s.stderrR.Close()
			close(s.exited)
		}
		s.close()
		return nil, nil, c.startError(s, "starting", err)
	}
	if s.stderrR != nil {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			s.stderrR.Close()
			s.close()
			return nil, nil, c.closedErr()
		}
		c.m.watchers.Add(1) // under mu, so never after Close's Wait began
		c.mu.Unlock()
		go c.watch(s)
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: c.m.opts.ClientName, Version: c.m.opts.ClientVersion}
	init.Params.Capabilities = mcp.ClientCapabilities{}
	if _, err := s.client.Initialize(ctx, init); err != nil {
		return nil, nil, c.startError(s, "initialize", err)
	}
	if s.canceller != nil {
		s.canceller.legacy.Store(c.cfg.Transport == config.TransportSSE || !mcp.IsModernProtocol(s.client.ProtocolVersion()))
	}
	s.client.OnNotification(func(n mcp.JSONRPCNotification) {
		switch n.Method {
		case string(mcp.MethodNotificationToolsListChanged):
			c.refreshTools(s)
		case string(mcp.MethodNotificationProgress):
			c.m.progress.route(n)
		}
	})
	tools, err := listTools(ctx, s)
	if err != nil {
		return nil, nil, c.startError(s, "tools/list", err)
	}
	return s, tools, nil
}

// listTools lists every page of a session's tools, sorted by name.
func listTools(ctx context.Context, s *session) ([]mcp.Tool, error) {
	res, err := s.client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return nil, err
	}
	tools := res.Tools
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	return tools, nil
}

// refreshTools lists the tools again after the backend said they changed
// (notifications/tools/list_changed). It runs in the background, bounded
// by the start timeout and the manager's life; a failed refresh keeps the
// old list.
func (c *conn) refreshTools(s *session) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.m.watchers.Add(1) // under mu, so never after Close's Wait began
	c.mu.Unlock()
	go func() {
		defer c.m.watchers.Done()
		ctx, cancel := context.WithTimeout(c.m.ctx, c.cfg.StartTimeout)
		defer cancel()
		tools, err := listTools(ctx, s)
		if err != nil {
			c.mu.Lock()
			stale := c.closed || c.sess != s
			c.mu.Unlock()
			if stale || c.m.ctx.Err() != nil {
				// The session ended under the refresh (Close, a restart):
				// nothing is wrong, and the next session lists its own tools.
				c.m.log.Debug("tool list refresh ended with its session", "backend", c.cfg.Name, "err", err)
				return
			}
			c.m.log.Warn("refreshing the tool list failed", "backend", c.cfg.Name, "err", err)
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		// Keep the list of the live session only; a refresh that raced
		// with a restart must not overwrite the newer list.
		if c.sess == s || (c.sess == nil && !c.closed) {
			c.tools = tools
			c.m.log.Info("backend tools changed", "backend", c.cfg.Name, "tools", len(tools))
		}
	}()
}

// startError closes a session that failed to start and says why, with the
// process's exit status and stderr when it died.
func (c *conn) startError(s *session, stage string, err error) error {
	timedOut := errors.Is(err, context.DeadlineExceeded)
	exitErr := s.close()
	s.awaitStderr()
	var b strings.Builder
	fmt.Fprintf(&b, "backend %q", c.cfg.Name)
	if c.cfg.URL != "" {
		fmt.Fprintf(&b, " (%s)", c.cfg.URL)
	}
	switch {
	case c.cfg.Transport == config.TransportStdio && stage == "starting":
		fmt.Fprintf(&b, ": cannot start %q: %v", c.cfg.Command, unwrapTransport(err))
	case timedOut:
		fmt.Fprintf(&b, ": %s: no answer within %s (the backend's startTimeout)", stage, c.cfg.StartTimeout)
	case strings.HasPrefix(err.Error(), resultTooLargeMark):
		fmt.Fprintf(&b, ": %s: the answer (%s bytes) is over limits.maxResultBytes (%d bytes)",
			stage, strings.TrimPrefix(err.Error(), resultTooLargeMark), c.m.opts.MaxResultBytes)
	case c.cfg.Transport == config.TransportStdio && s.stderr != nil && exitErr != nil:
		fmt.Fprintf(&b, " exited during %s: %v", stage, exitErr)
	default:
		fmt.Fprintf(&b, ": %s: %v", stage, unwrapTransport(err))
	}
	if s.stderr != nil {
		if tail := s.stderr.String(); tail != "" {
			b.WriteString("; its stderr ends with:\n" + indent(tail))
		}
	}
	return errors.New(b.String())
}

// unwrapTransport drops mcp-go's "transport error: " prefix.
func unwrapTransport(err error) error {
	var te *transport.Error
	if errors.As(err, &te) && te.Err != nil {
		return te.Err
	}
	return err
}

// watch copies a stdio session's stderr into its tail until end of file,
// then waits for the process to exit (without reaping it: the transport
// does that and reports the status). A process that exits by itself while
// idle is so torn down at once: Ready reports it, and the next call
// restarts it rather than failing.
func (c *conn) watch(s *session) {
	defer c.m.watchers.Done()
	_, _ = io.Copy(s.stderr, s.stderrR)
	s.stderrR.Close()
	close(s.exited)
	awaitExit(s.cmd.Process.Pid)
	c.mu.Lock()
	mine := c.sess == s
	c.mu.Unlock()
	if mine {
		c.fail(s, errProcessExited)
	}
}

// awaitExit blocks until the child pid has exited, leaving it to be reaped
// by its exec.Cmd. It returns at once if the child is already reaped.
func awaitExit(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// errProcessExited is the cause recorded for an exit noticed while idle.
var errProcessExited = errors.New("process exited")

// awaitStderr waits briefly for the stderr copy to reach end of file after
// the process ended, so the tail quoted in errors is complete. A
// grandchild that keeps stderr open only costs the wait.
func (s *session) awaitStderr() {
	if s.exited == nil {
		return
	}
	select {
	case <-s.exited:
	case <-time.After(time.Second):
	}
}

func (c *conn) newStreamable(s *session, legacy bool) error {
	hc := c.http
	if len(c.cfg.Headers) > 0 {
		// The headers go on through the HTTP client too: mcp-go v1.2.1
		// sends the session's DELETE on Close without WithHTTPHeaders'
		// headers, which an authenticated backend refuses (401), keeping
		// the session until its own idle expiry.
		withHeaders := *hc
		withHeaders.Transport = &headerTransport{next: hc.Transport, headers: c.cfg.Headers}
		hc = &withHeaders
	}
	opts := []transport.StreamableHTTPCOption{transport.WithHTTPLogger(c.m.log), transport.WithHTTPBasicClient(hc), transport.WithHTTPHeaderFunc(traceHeaders)}
	if len(c.cfg.Headers) > 0 {
		opts = append(opts, transport.WithHTTPHeaders(c.cfg.Headers))
	}
	if c.cfg.ContinuousListening {
		opts = append(opts, transport.WithContinuousListening())
	}
	t, err := transport.NewStreamableHTTP(c.cfg.URL, opts...)
	if err != nil {
		return err
	}
	w := &cancellingStreamable{StreamableHTTP: t, backend: c.cfg.Name}
	copts := []client.ClientOption{client.WithElicitationHandler(relay{c})}
	if legacy {
		copts = append(copts, client.WithProtocolVersion(legacyHTTP))
	}
	s.client = client.NewClient(w, copts...)
	s.canceller = &w.canceller
	return nil
}

// headerTransport sets a backend's configured headers on each request that
// lacks them (see newStreamable) and passes it to next.
type headerTransport struct {
	next    http.RoundTripper
	headers map[string]string
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var missing bool
	for k := range t.headers {
		missing = missing || req.Header.Get(k) == ""
	}
	if missing {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			if req.Header.Get(k) == "" {
				req.Header.Set(k, v)
			}
		}
	}
	return t.next.RoundTrip(req)
}

// CloseIdleConnections closes next's idle connections.
func (t *headerTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (c *conn) newSSE(s *session) error {
	opts := []transport.ClientOption{
		transport.WithSSELogger(c.m.log),
		transport.WithHTTPClient(c.http),
		transport.WithEndpointTimeout(c.cfg.StartTimeout),
		// Our own per-call deadline must fire first, with its clearer error.
		transport.WithResponseTimeout(c.cfg.Timeout + 5*time.Second),
	}
	if len(c.cfg.Headers) > 0 {
		opts = append(opts, transport.WithHeaders(c.cfg.Headers))
	}
	t, err := transport.NewSSE(c.cfg.URL, opts...)
	if err != nil {
		return err
	}
	// No elicitation handler: mcp-go's SSE client cannot answer server
	// requests at all (see relay.go).
	w := &cancellingSSE{SSE: t}
	s.client = client.NewClient(w)
	s.canceller = &w.canceller
	return nil
}
