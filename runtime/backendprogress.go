package runtime

import (
	"context"

	"github.com/vmcp-dev/vmcp/toolcall"
)

// BackendProgress receives, in order, the notifications/progress a backend
// sends for one tool call (toolcall.Progress).
type BackendProgress = toolcall.Progress

// WithBackendProgress asks the backend client to request progress for the
// tool calls made with ctx and to pass each notification to fn.
func WithBackendProgress(ctx context.Context, fn BackendProgress) context.Context {
	return toolcall.WithProgress(ctx, fn)
}

// BackendProgressFrom returns the progress receiver of ctx, or nil.
func BackendProgressFrom(ctx context.Context) BackendProgress {
	return toolcall.ProgressFrom(ctx)
}
