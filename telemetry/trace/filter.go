package trace

// The iteration filter: a span processor in front of the batch processor
// that exports an iteration's subtree only when the iteration failed or
// was slow (see the package doc for why). It knows an iteration's span
// by its name when it starts, opens a group for it, and puts into the
// group every span started under it (by parent span id, transitively).
// Spans of a group that end before the iteration are held; when the
// iteration's span ends, the group is released (to the enclosing
// iteration's group, when there is one, else to the exporter) if the
// span has status error or lasted at least slow, and dropped otherwise.
// A span that ends after its iteration (an abandoned call) goes straight
// on. Memory is bounded by the iterations in flight times their spans.

import (
	"context"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
)

type iterationFilter struct {
	next sdktrace.SpanProcessor
	slow time.Duration

	mu     sync.Mutex
	groups map[oteltrace.SpanID]*spanGroup // a span id -> the innermost iteration it is in
}

type spanGroup struct {
	root    oteltrace.SpanID
	parent  *spanGroup
	members []oteltrace.SpanID
	held    []sdktrace.ReadOnlySpan
}

func newIterationFilter(next sdktrace.SpanProcessor, slow time.Duration) *iterationFilter {
	return &iterationFilter{next: next, slow: slow, groups: map[oteltrace.SpanID]*spanGroup{}}
}

func (f *iterationFilter) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) {
	id := s.SpanContext().SpanID()
	f.mu.Lock()
	outer := f.groups[s.Parent().SpanID()]
	switch {
	case strings.HasPrefix(s.Name(), iterationPrefix):
		g := &spanGroup{root: id, parent: outer}
		g.members = append(g.members, id)
		f.groups[id] = g
	case outer != nil:
		outer.members = append(outer.members, id)
		f.groups[id] = outer
	}
	f.mu.Unlock()
	f.next.OnStart(ctx, s)
}

func (f *iterationFilter) OnEnd(s sdktrace.ReadOnlySpan) {
	id := s.SpanContext().SpanID()
	f.mu.Lock()
	g := f.groups[id]
	if g == nil {
		f.mu.Unlock()
		f.next.OnEnd(s)
		return
	}
	if g.root != id {
		g.held = append(g.held, s)
		f.mu.Unlock()
		return
	}
	for _, m := range g.members {
		delete(f.groups, m)
	}
	keep := s.Status().Code == codes.Error || s.EndTime().Sub(s.StartTime()) >= f.slow
	if !keep {
		f.mu.Unlock()
		return
	}
	held := append(g.held, s)
	if p := g.parent; p != nil && f.groups[p.root] == p {
		// The enclosing iteration decides for these too.
		p.held = append(p.held, held...)
		f.mu.Unlock()
		return
	}
	f.mu.Unlock()
	for _, h := range held {
		f.next.OnEnd(h)
	}
}

func (f *iterationFilter) Shutdown(ctx context.Context) error   { return f.next.Shutdown(ctx) }
func (f *iterationFilter) ForceFlush(ctx context.Context) error { return f.next.ForceFlush(ctx) }
