package mcpserver

// Scope checks on the streamable HTTP endpoint. A token (httpsafe.Auth)
// may carry fewer than every scope; a tools/call needs the scope its tool
// was registered with (RequireScope: author for the authoring tools, admin
// for vmcp_run_cancel) or run for every other tool, workflows included.
// The check reads the JSON-RPC body before mcp-go does, so a call the
// token may not make is refused with HTTP 403 and never reaches a
// handler. The body is a JSON-RPC error (so MCP clients show its message)
// whose data names the missing scope: {"missingScope": "author"}. Requests without a
// restricted token (stdio, a listener without tokens, a token with every
// scope) are not read twice. Other methods (initialize, tools/list,
// resources, prompts) need only a valid token.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
)

// RequireScope makes calls of the tool named tool need scope.
func (s *Server) RequireScope(tool string, scope httpsafe.Scope) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scopes[tool] = scope
}

// ToolScope is the scope a call of the tool needs.
func (s *Server) ToolScope(tool string) httpsafe.Scope {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if sc, ok := s.scopes[tool]; ok {
		return sc
	}
	return httpsafe.ScopeRun
}

// CallAllowed reports whether the request whose context is ctx may call
// the tool; handlers use it as a second line behind the HTTP check.
func (s *Server) CallAllowed(ctx context.Context, tool string) (httpsafe.Scope, bool) {
	sc := s.ToolScope(tool)
	return sc, httpsafe.Allowed(ctx, sc)
}

// restricted reports whether the request's token lacks some scope.
func restricted(ctx context.Context) bool {
	for _, sc := range httpsafe.Scopes {
		if !httpsafe.Allowed(ctx, sc) {
			return true
		}
	}
	return false
}

// toolCall is what the scope check reads of a JSON-RPC message.
type toolCall struct {
	ID     any    `json:"id"`
	Method string `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
}

// checkScopes answers 403 and returns false when r, a POST with a
// restricted token, calls a tool its token may not call. It leaves r.Body
// readable from the start.
func (e *Endpoint) checkScopes(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || r.Body == nil || !restricted(r.Context()) {
		return true
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeRPCError(w, http.StatusBadRequest, nil, mcp.PARSE_ERROR, "reading the request body: "+err.Error())
		return false
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var calls []toolCall
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' {
		_ = json.Unmarshal(trimmed, &calls) // mcp-go reports malformed bodies
	} else {
		var c toolCall
		_ = json.Unmarshal(trimmed, &c)
		calls = []toolCall{c}
	}
	for _, c := range calls {
		if c.Method != string(mcp.MethodToolsCall) {
			continue
		}
		if sc, ok := e.s.CallAllowed(r.Context(), c.Params.Name); !ok {
			writeForbidden(w, c.ID, sc, "calling "+c.Params.Name)
			return false
		}
	}
	return true
}

// forbiddenCode is the JSON-RPC error code of a call the token's scopes do
// not allow (in the implementation-defined server error range).
const forbiddenCode = -32003

func writeForbidden(w http.ResponseWriter, rpcID any, scope httpsafe.Scope, what string) {
	type rpcError struct {
		Code    int               `json:"code"`
		Message string            `json:"message"`
		Data    map[string]string `json:"data"`
	}
	body, _ := json.Marshal(struct {
		JSONRPC string   `json:"jsonrpc"`
		ID      any      `json:"id"`
		Error   rpcError `json:"error"`
	}{"2.0", rpcID, rpcError{forbiddenCode, httpsafe.ForbiddenMessage(scope, what), map[string]string{"missingScope": string(scope)}}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write(append(body, '\n'))
}
