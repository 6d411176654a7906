package runtime

import (
	"context"
	"fmt"
)

// LimitCalls returns a Backend that lets at most n calls to b be in flight
// at once, across every run that shares it (vmcp's server.maxParallel). A
// call waits for a free slot; the wait counts against the step's timeout,
// and a cancelled run stops waiting. n <= 0 means no limit.
func LimitCalls(b Backend, n int) Backend {
	if n <= 0 {
		return b
	}
	return &limitedBackend{b: b, slots: make(chan struct{}, n)}
}

type limitedBackend struct {
	b     Backend
	slots chan struct{}
}

func (l *limitedBackend) CallTool(ctx context.Context, call ToolCall) (*ToolResult, error) {
	select {
	case l.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a free backend call slot (at most %d calls at once, server.maxParallel): %w", cap(l.slots), context.Cause(ctx))
	}
	defer func() { <-l.slots }()
	return l.b.CallTool(ctx, call)
}
