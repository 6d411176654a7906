package runtime

import (
	"context"
	"fmt"
	"sort"
)

// CallLimits bound the backend calls in flight at once, across every run
// that shares a Backend.
type CallLimits struct {
	// Total bounds the calls to all backends together (vmcp's
	// server.maxParallel); <= 0 means no limit.
	Total int
	// PerBackend bounds the calls to each named backend (backends.<name>
	// .maxParallel). A backend that is missing or <= 0 has only Total.
	// With a cap under Total, a backend that stops answering holds at most
	// its own slots, and calls to the others go on.
	PerBackend map[string]int
}

// LimitCalls returns a Backend that lets at most the limits' calls to b be
// in flight at once. A call first takes a slot of its backend, then one of
// the total, and gives both back when it returns; the wait counts against
// the step's timeout, and a cancelled run stops waiting. b must return
// when a call's context ends (mcpclient does, even for a backend that
// stopped reading), which is what frees the slots of calls that a stuck
// backend will never answer. With no limits at all, b itself is returned.
func LimitCalls(b Backend, lim CallLimits) Backend {
	l := &limitedBackend{b: b, perBackend: map[string]chan struct{}{}}
	if lim.Total > 0 {
		l.total = make(chan struct{}, lim.Total)
	}
	names := make([]string, 0, len(lim.PerBackend))
	for name := range lim.PerBackend {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if n := lim.PerBackend[name]; n > 0 {
			l.perBackend[name] = make(chan struct{}, n)
		}
	}
	if l.total == nil && len(l.perBackend) == 0 {
		return b
	}
	return l
}

type limitedBackend struct {
	b          Backend
	total      chan struct{}            // nil: no total limit
	perBackend map[string]chan struct{} // read-only after LimitCalls
}

func (l *limitedBackend) CallTool(ctx context.Context, call ToolCall) (*ToolResult, error) {
	if own := l.perBackend[call.Backend]; own != nil {
		select {
		case own <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for a free call slot of backend %q (at most %d calls at once, backends.%s.maxParallel): %w",
				call.Backend, cap(own), call.Backend, context.Cause(ctx))
		}
		defer func() { <-own }()
	}
	if l.total != nil {
		select {
		case l.total <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for a free backend call slot (at most %d calls at once, server.maxParallel): %w", cap(l.total), context.Cause(ctx))
		}
		defer func() { <-l.total }()
	}
	return l.b.CallTool(ctx, call)
}
