package fake

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestCallLog: with $CMDB_CALL_LOG set, each tool call appends its start,
// end and tool name, and the span covers the handler's own time.
func TestCallLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.log")
	t.Setenv(CallLogEnv, path)
	s, err := NewServer("logged")
	if err != nil {
		t.Fatal(err)
	}
	const pause = 20 * time.Millisecond
	s.AddTool(mcp.NewTool("slow"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		time.Sleep(pause)
		return mcp.NewToolResultText("ok"), nil
	})
	c, err := client.NewInProcessClient(s)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		req := mcp.CallToolRequest{}
		req.Params.Name = "slow"
		if _, err := c.CallTool(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("call log has %d lines; want 2:\n%s", len(lines), data)
	}
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) != 3 || f[2] != "slow" {
			t.Fatalf("call log line %q; want \"START END slow\"", line)
		}
		start, err1 := strconv.ParseInt(f[0], 10, 64)
		end, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || time.Duration(end-start) < pause {
			t.Errorf("call log line %q: want two Unix-nanosecond times at least %s apart", line, pause)
		}
	}
}

// TestCallLogUnwritable: a log that cannot be opened is an error naming
// the variable, not a server that logs nothing.
func TestCallLogUnwritable(t *testing.T) {
	t.Setenv(CallLogEnv, filepath.Join(t.TempDir(), "missing", "calls.log"))
	if _, err := NewServer("logged"); err == nil || !strings.Contains(err.Error(), CallLogEnv) {
		t.Errorf("NewServer with an unwritable log: error = %v; want one naming %s", err, CallLogEnv)
	}
}
