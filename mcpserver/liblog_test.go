package mcpserver

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/runtime"
)

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLibraryLogAtDebug: after a question answered over HTTP, mcp-go's
// (2025-11-25: a server-initiated elicitation/create, answered by POST)
// "Delivered sampling response" is absent from vmcp's log at INFO and
// present (lowered to DEBUG) at debug.
func TestLibraryLogAtDebug(t *testing.T) {
	for i, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		t.Run(level.String(), func(t *testing.T) {
			runner := &fakeRunner{wfs: testWorkflows}
			runner.script = func(ctx context.Context, wf string, _ map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
				if _, err := opts.Elicitor.Elicit(ctx, runtime.ElicitRequest{Message: "go on?", Schema: map[string]any{"type": "object"}}); err != nil {
					return nil, err
				}
				return completed(opts.RunID, wf, map[string]any{"ok": true}), nil
			}
			logs := &lockedBuffer{}
			s, err := New(Options{Runner: runner, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: level}))})
			if err != nil {
				t.Fatal(err)
			}
			c := testenv.HTTPClient(t, serveHTTP(t, s, 17710+i), client.WithElicitationHandler(&countingAnswer{}), client.WithLegacyProtocolOnly())
			if res := call(t, c, "plain", nil, nil); res.IsError {
				t.Fatalf("plain failed: %s", testenv.ResultText(res))
			}
			// mcp-go logs the delivery after it hands the answer to the
			// waiting run, so the run can finish first: wait for the line
			// (at DEBUG) or give it the same time to appear (at INFO).
			deadline := time.Now().Add(5 * time.Second)
			if level == slog.LevelInfo {
				deadline = time.Now().Add(500 * time.Millisecond)
			}
			for !strings.Contains(logs.String(), "Delivered sampling response") && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			got := logs.String()
			switch has := strings.Contains(got, "Delivered sampling response"); {
			case level == slog.LevelInfo && has:
				t.Errorf("mcp-go's wording in vmcp's log at INFO:\n%s", got)
			case level == slog.LevelDebug && !strings.Contains(got, `level=DEBUG msg="Delivered sampling response"`):
				t.Errorf("want mcp-go's message at DEBUG; log:\n%s", got)
			}
		})
	}
}
