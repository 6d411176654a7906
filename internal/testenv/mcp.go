package testenv

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// HTTPClient connects an mcp-go client to the streamable HTTP endpoint url,
// initializes it within 30 seconds, and closes it when the test ends.
func HTTPClient(t testing.TB, url string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	return HTTPClientHeaders(t, url, nil, opts...)
}

// HTTPClientHeaders is HTTPClient with request headers (nil for none).
func HTTPClientHeaders(t testing.TB, url string, headers map[string]string, opts ...client.ClientOption) *client.Client {
	t.Helper()
	var topts []transport.StreamableHTTPCOption
	if headers != nil {
		topts = append(topts, transport.WithHTTPHeaders(headers))
	}
	tr, err := transport.NewStreamableHTTP(url, topts...)
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Progress records the notifications/progress a client receives, by
// progress token, each as "progress/total message".
type Progress struct {
	mu  sync.Mutex
	got map[string][]string
}

// RecordProgress starts recording c's progress notifications.
func RecordProgress(c *client.Client) *Progress {
	p := &Progress{got: map[string][]string{}}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != string(mcp.MethodNotificationProgress) {
			return
		}
		f := n.Params.AdditionalFields
		p.mu.Lock()
		defer p.mu.Unlock()
		tok := fmt.Sprint(f["progressToken"])
		p.got[tok] = append(p.got[tok], fmt.Sprintf("%v/%v %v", f["progress"], f["total"], f["message"]))
	})
	return p
}

// Of returns a copy of the notifications received for token.
func (p *Progress) Of(token string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.got[token]...)
}

// Tokens returns how many distinct tokens have received notifications.
func (p *Progress) Tokens() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.got)
}

// ResultText joins the text content items of a tool result with newlines.
func ResultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
