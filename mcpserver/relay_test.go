package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/toolcall"
)

// askingBackends serve one tool, ev.ask, which reports progress, asks its
// caller "Name?", reports progress again and returns the answer as text
// ("ACTION CONTENT"), or the asker's error as an isError result.
type askingBackends struct{}

func (askingBackends) Tools(backend string) []mcp.Tool {
	if backend != "ev" {
		return nil
	}
	return []mcp.Tool{mcp.NewTool("ask", mcp.WithDescription("Ask the caller"))}
}

func (askingBackends) CallRaw(ctx context.Context, _, _ string, _ map[string]any) (*mcp.CallToolResult, error) {
	progress := runtime.BackendProgressFrom(ctx)
	if progress == nil {
		progress = func(float64, float64, string) {}
	}
	progress(1, 2, "asking")
	a := toolcall.AskerFrom(ctx)
	if a == nil {
		return mcp.NewToolResultError("the call carries no asker"), nil
	}
	ans, err := a.Ask(ctx, toolcall.Question{Backend: "ev", Tool: "ask", Message: "Name?", Schema: map[string]any{"type": "object"}})
	if err != nil {
		return mcp.NewToolResultError("no answer: " + err.Error()), nil
	}
	progress(2, 2, "answered")
	content, _ := json.Marshal(ans.Content)
	return mcp.NewToolResultText(fmt.Sprintf("%s %s", ans.Action, content)), nil
}

// TestExposedBackendToolAsksItsCaller: a backend tool served as it is asks
// the client that called it, over HTTP at 2026-07-28 (input_required round
// trips, with the backend's progress on the open round trip) and at
// 2025-11-25 (elicitation/create); a client without the capability makes
// the backend's question fail at once.
func TestExposedBackendToolAsksItsCaller(t *testing.T) {
	s, err := New(Options{Runner: &fakeRunner{}, Backends: askingBackends{}, BackendNames: []string{"ev"}, Expose: true})
	if err != nil {
		t.Fatal(err)
	}
	url := serveHTTP(t, s, 17525)
	for _, tt := range []struct {
		name string
		opts []client.ClientOption
	}{
		{"2026-07-28", nil},
		{"2025-11-25", []client.ClientOption{client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ans := &countingAnswer{}
			c := testenv.HTTPClient(t, url, append(tt.opts, client.WithElicitationHandler(ans))...)
			progress := testenv.RecordProgress(c)
			res := call(t, c, "ev_ask", nil, &mcp.Meta{ProgressToken: "p"})
			if text := testenv.ResultText(res); res.IsError || text != `accept {"n":1}` {
				t.Errorf("ev_ask = (isError %v) %q; want the client's answer", res.IsError, text)
			}
			if diff := cmp.Diff([]string{"Name?"}, ans.asks); diff != "" {
				t.Errorf("questions asked (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"1/2 asking", "2/2 answered"}, progress.Of("p")); diff != "" {
				t.Errorf("the backend's progress (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("no capability", func(t *testing.T) {
		c := testenv.HTTPClient(t, url)
		res := call(t, c, "ev_ask", nil, nil)
		if text := testenv.ResultText(res); !res.IsError || !strings.Contains(text, ErrNoElicitation.Error()) {
			t.Errorf("ev_ask = (isError %v) %q; want an error containing %q", res.IsError, text, ErrNoElicitation)
		}
	})
}
