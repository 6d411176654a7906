package runtime

import "context"

// BackendProgress receives, in order, the notifications/progress a backend
// sends for one tool call: progress, total (0 when the backend gave none)
// and message ("" when none).
type BackendProgress func(progress, total float64, message string)

type backendProgressKey struct{}

// WithBackendProgress asks the backend client to request progress for the
// tool calls made with ctx and to pass each notification to fn.
func WithBackendProgress(ctx context.Context, fn BackendProgress) context.Context {
	return context.WithValue(ctx, backendProgressKey{}, fn)
}

// BackendProgressFrom returns the progress receiver of ctx, or nil.
func BackendProgressFrom(ctx context.Context) BackendProgress {
	fn, _ := ctx.Value(backendProgressKey{}).(BackendProgress)
	return fn
}
