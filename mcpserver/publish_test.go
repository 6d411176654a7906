package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

func listTools(t *testing.T, c interface {
	ListTools(context.Context, mcp.ListToolsRequest) (*mcp.ListToolsResult, error)
}) []string {
	t.Helper()
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// TestPublishWorkflows: a new set of workflows is served at once, clients
// get notifications/tools/list_changed, and a set that would take another
// tool's name is refused without changing anything.
func TestPublishWorkflows(t *testing.T) {
	r := &fakeRunner{wfs: testWorkflows[1:], script: func(_ context.Context, wf string, _ map[string]any, _ runtime.RunOptions) (*runtime.Run, error) {
		return completed("r", wf, map[string]any{"ran": wf}), nil
	}}
	other := mcpgo.ServerTool{Tool: mcp.NewToolWithRawSchema("other", "x", json.RawMessage(`{"type":"object"}`)),
		Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		}}
	s, err := New(Options{Runner: r, ListChanged: true, ExtraTools: []mcpgo.ServerTool{other}})
	if err != nil {
		t.Fatal(err)
	}
	c := inProcessClient(t, s)
	var changed atomic.Int32
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			changed.Add(1)
		}
	})
	fresh := &ir.Workflow{Name: "fresh", Description: "New", InputSchema: map[string]any{"type": "object"}}
	if err := s.PublishWorkflows([]*ir.Workflow{testWorkflows[1], fresh}); err != nil {
		t.Fatal(err)
	}
	if got := listTools(t, c); !slices.Equal(got, []string{"fresh", "other", "plain"}) {
		t.Fatalf("tools after publishing fresh = %v", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for changed.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if changed.Load() == 0 {
		t.Error("no notifications/tools/list_changed after PublishWorkflows")
	}
	if wf, ok := s.Workflow("fresh"); !ok || wf != fresh {
		t.Errorf("Workflow(fresh) = %v, %v", wf, ok)
	}
	if err := s.PublishWorkflows([]*ir.Workflow{{Name: "other", InputSchema: map[string]any{"type": "object"}}}); err == nil {
		t.Error("PublishWorkflows(a workflow named like the extra tool) = nil; want an error")
	}
	if got := listTools(t, c); !slices.Equal(got, []string{"fresh", "other", "plain"}) {
		t.Fatalf("tools after a refused publish = %v; want them unchanged", got)
	}
	if err := s.PublishWorkflows(nil); err != nil {
		t.Fatal(err)
	}
	if got := listTools(t, c); !slices.Equal(got, []string{"other"}) || !slices.Equal(s.ToolNames(), []string{"other"}) {
		t.Fatalf("tools after publishing none = %v (ToolNames %v); want only other", got, s.ToolNames())
	}
	if err := s.AddTools(other); err == nil {
		t.Error("AddTools(a name that is taken) = nil; want an error")
	}
}

// TestScopeCheck: over HTTP a tools/call of a tool that needs a scope the
// token lacks is refused with 403 before any handler runs; other calls and
// unauthenticated requests go through.
func TestScopeCheck(t *testing.T) {
	called := atomic.Int32{}
	r := &fakeRunner{wfs: testWorkflows[1:], script: func(_ context.Context, wf string, _ map[string]any, _ runtime.RunOptions) (*runtime.Run, error) {
		called.Add(1)
		return completed("r", wf, map[string]any{}), nil
	}}
	s := newTestServer(t, r)
	s.RequireScope("plain", httpsafe.ScopeAuthor)
	e := s.MCPHandler()
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"plain","arguments":{}}}`
	post := func(scopes []httpsafe.Scope, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", MCPPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if scopes != nil {
			req = req.WithContext(httpsafe.WithIdentity(req.Context(), httpsafe.Identity{Subject: "t", Scopes: scopes}))
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec
	}
	for _, body := range []string{call, "[" + call + "]"} {
		rec := post([]httpsafe.Scope{httpsafe.ScopeRun}, body)
		var reply struct {
			ID    int `json:"id"`
			Error struct {
				Message string            `json:"message"`
				Data    map[string]string `json:"data"`
			} `json:"error"`
		}
		json.Unmarshal(rec.Body.Bytes(), &reply)
		if rec.Code != http.StatusForbidden || reply.Error.Data["missingScope"] != "author" || reply.ID != 3 {
			t.Errorf("tools/call plain with a run token (%s) = %d %s; want 403 naming author, id 3", body[:1], rec.Code, rec.Body)
		}
	}
	// A request with every scope, or none at all, reaches mcp-go (which
	// wants a session here: 400, not 403).
	for _, scopes := range [][]httpsafe.Scope{httpsafe.Scopes, nil} {
		if rec := post(scopes, call); rec.Code == http.StatusForbidden {
			t.Errorf("tools/call plain with scopes %v = 403; want it let through", scopes)
		}
	}
	if called.Load() != 0 {
		t.Errorf("the workflow ran %d times; a refused call must not reach it", called.Load())
	}
}
