package mcpserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestBareModernCancelAccepted: a 2026-07-28 notifications/cancelled that
// names the version only in the MCP-Protocol-Version header (no _meta, as
// the official Go SDK sends it) is accepted with 202, not refused with
// mcp-go's 400 (on which that SDK closes its session).
func TestBareModernCancelAccepted(t *testing.T) {
	e := newTestServer(t, &fakeRunner{}).MCPHandler()
	body := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"context canceled"}}`
	req := httptest.NewRequest(http.MethodPost, MCPPath, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted {
		t.Errorf("bare cancel: status %d, body %s; want 202", rec.Code, rec.Body.String())
	}
}
