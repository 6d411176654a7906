package fake

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// CallLogEnv names the environment variable that, when set, is a file
// every tool call of a fake server is appended to, one line per call:
// its start and end in Unix nanoseconds and the tool's name. Both servers
// may share the file (each line is one append). bench/cmdb/firstwave
// reads it for the calls in flight.
const CallLogEnv = "CMDB_CALL_LOG"

// NewServer is an mcp-go server with tool capabilities, logging its calls
// when $CMDB_CALL_LOG is set.
func NewServer(name string) (*server.MCPServer, error) {
	opts := []server.ServerOption{server.WithToolCapabilities(false)}
	if path := os.Getenv(CallLogEnv); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", CallLogEnv, err)
		}
		opts = append(opts, server.WithToolHandlerMiddleware((&callLog{f: f}).wrap))
	}
	return server.NewMCPServer(name, "1.0.0", opts...), nil
}

type callLog struct {
	mu sync.Mutex
	f  *os.File
}

func (l *callLog) wrap(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		res, err := next(ctx, req)
		line := fmt.Sprintf("%d %d %s\n", start.UnixNano(), time.Now().UnixNano(), req.Params.Name)
		l.mu.Lock()
		_, _ = l.f.WriteString(line)
		l.mu.Unlock()
		return res, err
	}
}
