package mcpserver

// The streamable HTTP endpoint: mcp-go's StreamableHTTPServer behind two
// things it lacks, the session table (sessions.go) and call streams
// (stream.go). Each request is classified before mcp-go sees it:
//
//   - 2026-07-28 requests (by the MCP-Protocol-Version header or the
//     protocol version in params._meta) have no session and go straight
//     through, a POST with its call stream, except (with tasks on) those
//     of the Tasks extension, which tasks_wire.go serves;
//   - POST initialize reserves a session id, refused with 503 when the table
//     is full; mcp-go then issues exactly that id (sessionIDs.Generate). An
//     initialize that fails gives the slot back;
//   - every other POST, GET or DELETE must name a live session: without a
//     Mcp-Session-Id header it is 400, with an unknown one 404; with tasks
//     on, the session's 2025-11-25 task requests (and the answers to the
//     questions tasks/result streams carry) go to tasks_wire.go;
//   - DELETE removes the session, cancelling its open requests (its GET
//     stream, calls in flight), before mcp-go frees its state.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/runtime"
)

// Endpoint is the streamable HTTP MCP endpoint (see MCPHandler).
type Endpoint struct {
	s        *Server
	mcp      *mcpgo.StreamableHTTPServer
	sessions *sessionTable
}

type reservedIDKey struct{}

// MCPHandler returns the streamable HTTP MCP endpoint. Mount it at MCPPath
// (HTTPHandler does). Call CloseSessions on it to end open sessions.
func (s *Server) MCPHandler() *Endpoint {
	e := &Endpoint{s: s}
	e.sessions = newSessionTable(s.opts.SessionIdleTimeout, s.opts.MaxSessions, func(ids []string) {
		s.log.Info("idle MCP sessions expired", "count", len(ids), "open", e.sessions.len())
		for _, id := range ids {
			e.freeSession(id)
		}
	})
	e.mcp = mcpgo.NewStreamableHTTPServer(s.mcp,
		mcpgo.WithEndpointPath(MCPPath),
		mcpgo.WithStreamableHTTPLogger(libraryLogger(s.log)),
		mcpgo.WithSessionIdManagerResolver(sessionIDs{e.sessions}),
		// httpsafe.CheckHost refuses foreign Host names on loopback for
		// every endpoint, with server.allowedHosts; mcp-go's own check
		// would refuse those allowed names on /mcp.
		mcpgo.WithDisableLocalhostProtection(true),
		mcpgo.WithHTTPContextFunc(func(ctx context.Context, _ *http.Request) context.Context {
			return context.WithValue(ctx, transportKey{}, transportHTTP)
		}),
	)
	return e
}

// Sessions is the number of open MCP sessions.
func (e *Endpoint) Sessions() int { return e.sessions.len() }

// CloseSessions ends every session: GET streams are closed, mcp-go's state
// is freed, and new sessions are refused. Calls in flight go on (ServeHTTP
// gives them its grace period).
func (e *Endpoint) CloseSessions(ctx context.Context) {
	e.sessions.stop()
	e.mcp.CloseSessions(ctx)
}

// ServeHTTP classifies r (see the top of the file) and hands it to mcp-go.
func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !e.checkScopes(w, r) { // scopes.go
		return
	}
	modern := mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion))
	if modern && e.s.tasks == nil && r.Method != http.MethodPost {
		e.serve(w, r) // no sessions and no body
		return
	}
	var body []byte
	if r.Method == http.MethodPost && r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			writeRPCError(w, http.StatusBadRequest, nil, mcp.PARSE_ERROR, fmt.Sprintf("reading the request body: %v", err))
			return
		}
		body = b
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	msg := peekMessage(body)
	if modern && acceptBareCancel(w, r, msg) {
		return
	}
	if modern || mcp.IsModernProtocol(msg.protocolVersion()) {
		if r.Method == http.MethodPost && e.s.tasks != nil && e.serveExtension(w, r, body) {
			return
		}
		e.serve(w, r)
		return
	}
	if r.Method == http.MethodPost && msg.Method == string(mcp.MethodInitialize) {
		e.initialize(w, r, body, msg.ID)
		return
	}
	switch r.Method {
	case http.MethodPost, http.MethodGet, http.MethodDelete:
	default:
		e.mcp.ServeHTTP(w, r)
		return
	}
	id := r.Header.Get(mcpgo.HeaderKeySessionID)
	if id == "" {
		writeRPCError(w, http.StatusBadRequest, msg.ID, mcp.INVALID_REQUEST,
			"missing Mcp-Session-Id header: send initialize first and then the session id it returns with every request")
		return
	}
	if r.Method == http.MethodDelete {
		if !e.sessions.remove(id) {
			writeSessionNotFound(w, msg.ID)
			return
		}
		e.mcp.ServeHTTP(w, r) // frees mcp-go's state of the session
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	end, ok := e.sessions.begin(id, r.Method == http.MethodGet, cancel)
	if !ok {
		writeSessionNotFound(w, msg.ID)
		return
	}
	defer end()
	if r.Method == http.MethodPost && e.s.tasks != nil && e.serveV1(w, r.WithContext(ctx), id, body, msg) {
		return
	}
	e.serve(w, r.WithContext(ctx))
}

// acceptBareCancel answers 202 to a 2026-07-28 notifications/cancelled
// whose params carry no _meta protocol version: the header already names
// the version (the official Go SDK sends it so, and closes the session on
// mcp-go's 400). The notification itself has nothing left to do: in
// 2026-07-28 every call has its own response stream, and a client that
// cancels closes it, which cancels the call's context (and so its run).
func acceptBareCancel(w http.ResponseWriter, r *http.Request, msg rpcMessage) bool {
	if r.Method != http.MethodPost || msg.Method != string(mcp.MethodNotificationCancelled) ||
		msg.ID != nil || msg.protocolVersion() != "" {
		return false
	}
	w.WriteHeader(http.StatusAccepted)
	return true
}

// initialize serves an initialize request under a freshly reserved
// session id. mcp-go issues the id (and registers the session) even when
// it answers initialize with an error, so the answer is buffered: an error
// frees the session and goes out without the id.
func (e *Endpoint) initialize(w http.ResponseWriter, r *http.Request, body []byte, rpcID any) {
	id, err := e.sessions.reserve()
	if err != nil {
		writeRPCError(w, http.StatusServiceUnavailable, rpcID, mcp.INTERNAL_ERROR, err.Error())
		return
	}
	buf := &bufferedResponse{header: http.Header{}, status: http.StatusOK}
	e.mcp.ServeHTTP(buf, r.WithContext(context.WithValue(r.Context(), reservedIDKey{}, id)))
	var reply struct {
		Error json.RawMessage `json:"error"`
	}
	issued := buf.header.Get(mcpgo.HeaderKeySessionID) == id
	if !issued || json.Unmarshal(buf.body.Bytes(), &reply) != nil || len(reply.Error) > 0 {
		buf.header.Del(mcpgo.HeaderKeySessionID)
		if e.sessions.remove(id) && issued {
			e.freeSession(id)
		}
	}
	if issued && e.s.tasks != nil {
		e.sessions.setCanElicit(id, declaresElicitation(body))
	}
	for k, v := range buf.header {
		w.Header()[k] = v
	}
	w.WriteHeader(buf.status)
	_, _ = w.Write(buf.body.Bytes())
}

// bufferedResponse holds a whole response (initialize's, which is one
// JSON object).
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header         { return b.header }
func (b *bufferedResponse) WriteHeader(code int)        { b.status = code }
func (b *bufferedResponse) Write(p []byte) (int, error) { return b.body.Write(p) }

// serve hands r to mcp-go, a POST with a call stream.
func (e *Endpoint) serve(w http.ResponseWriter, r *http.Request) *callStream {
	cs := newCallStream(w)
	if r.Method == http.MethodPost {
		r = r.WithContext(context.WithValue(r.Context(), callStreamKey{}, cs))
	}
	e.mcp.ServeHTTP(cs, r)
	return cs
}

// freeSession frees mcp-go's state of a session that expired or failed to
// initialize: mcp-go's DELETE handling is the public way to reach all of
// it.
func (e *Endpoint) freeSession(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, MCPPath, nil)
	if err != nil {
		return
	}
	req.Header.Set(mcpgo.HeaderKeySessionID, id)
	e.mcp.ServeHTTP(discardResponse{http.Header{}}, req)
}

type discardResponse struct{ h http.Header }

func (d discardResponse) Header() http.Header         { return d.h }
func (d discardResponse) Write(p []byte) (int, error) { return len(p), nil }
func (d discardResponse) WriteHeader(int)             {}

// sessionIDs is mcp-go's session id manager over the session table: it
// issues the id the endpoint reserved for the initialize request, and
// knows only live sessions.
type sessionIDs struct{ t *sessionTable }

func (m sessionIDs) ResolveSessionIdManager(r *http.Request) mcpgo.SessionIdManager {
	reserved := ""
	if r != nil {
		reserved, _ = r.Context().Value(reservedIDKey{}).(string)
	}
	return requestSessionIDs{t: m.t, reserved: reserved}
}

type requestSessionIDs struct {
	t        *sessionTable
	reserved string
}

func (m requestSessionIDs) Generate() string { return m.reserved }

func (m requestSessionIDs) Validate(id string) (bool, error) {
	if !m.t.known(id) {
		return false, errors.New("unknown session")
	}
	return false, nil
}

func (m requestSessionIDs) Terminate(id string) (bool, error) {
	m.t.remove(id)
	return false, nil
}

// rpcMessage is what the endpoint reads of a POSTed JSON-RPC message: the
// id and method, and of params._meta only the protocol version (decoding
// the whole _meta as an mcp.Meta cost about 15µs a call).
type rpcMessage struct {
	ID     any    `json:"id"`
	Method string `json:"method"`
	Params struct {
		Meta struct {
			ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	} `json:"params"`
}

func peekMessage(body []byte) rpcMessage {
	var m rpcMessage
	if len(body) > 0 {
		_ = json.Unmarshal(body, &m) // mcp-go reports malformed bodies
	}
	return m
}

func (m rpcMessage) protocolVersion() string { return m.Params.Meta.ProtocolVersion }

// sessionNotFound is the JSON-RPC error code the TypeScript SDK uses for an
// unknown session.
const sessionNotFound = -32001

func writeSessionNotFound(w http.ResponseWriter, rpcID any) {
	writeRPCError(w, http.StatusNotFound, rpcID, sessionNotFound,
		"session not found: it was deleted, it expired (server.sessions.idleTimeout) or it was never issued; send initialize to start a new session")
}

func writeRPCError(w http.ResponseWriter, status int, rpcID any, code int, message string) {
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	body, _ := runtime.MarshalJSON(struct {
		JSONRPC string   `json:"jsonrpc"`
		ID      any      `json:"id"`
		Error   rpcError `json:"error"`
	}{"2.0", rpcID, rpcError{code, message}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
