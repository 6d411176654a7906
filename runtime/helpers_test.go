package runtime

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

// --- fake backend ---

// fakeTool describes how one fake backend tool behaves.
type fakeTool struct {
	latency   time.Duration
	failFirst int           // fail the first N attempts with a Go error
	fail      bool          // always fail with a Go error
	isError   bool          // answer with an isError result
	hang      bool          // block until the context ends
	hangFirst int           // block until the context ends in the first N attempts
	stubborn  time.Duration // sleep this long, ignoring the context
	text      []string
	content   []Content
	// result computes a structured result from the arguments (beside text
	// and content when they are set); nil echoes {"args": arguments}.
	result func(args map[string]any) any
}

// fakeBackend is an in-process Backend. It records every call and whether
// the call's context was cancelled while it ran.
type fakeBackend struct {
	tools map[string]*fakeTool // "backend.tool"

	mu       sync.Mutex
	calls    []ToolCall
	attempts map[string]int

	inFlight   atomic.Int32
	maxFlight  atomic.Int32
	sawCancel  atomic.Int32
	started    chan string // optional: receives "backend.tool" when a call starts
	startTimes sync.Map    // step id -> time.Time of first call
}

func newFake(tools map[string]*fakeTool) *fakeBackend {
	return &fakeBackend{tools: tools, attempts: map[string]int{}}
}

var errFakeDown = errors.New("backend unavailable")

func (f *fakeBackend) CallTool(ctx context.Context, call ToolCall) (*ToolResult, error) {
	name := call.Backend + "." + call.Tool
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxFlight.Load()
		if n <= m || f.maxFlight.CompareAndSwap(m, n) {
			break
		}
	}
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.attempts[call.StepID]++
	attempt := f.attempts[call.StepID]
	f.mu.Unlock()
	f.startTimes.LoadOrStore(call.StepID, time.Now())
	if f.started != nil {
		f.started <- name
	}
	t := f.tools[name]
	if t == nil {
		t = &fakeTool{}
	}
	if t.hang || attempt <= t.hangFirst {
		<-ctx.Done()
		f.sawCancel.Add(1)
		return nil, ctx.Err()
	}
	if t.stubborn > 0 {
		time.Sleep(t.stubborn)
	}
	if t.latency > 0 {
		timer := time.NewTimer(t.latency)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			f.sawCancel.Add(1)
			return nil, ctx.Err()
		}
	}
	if t.fail || attempt <= t.failFirst {
		return nil, errFakeDown
	}
	if t.isError {
		return &ToolResult{IsError: true, Content: []Content{{Type: "text", Text: name + " failed: quota exceeded"}}}, nil
	}
	if t.text != nil || t.content != nil {
		var cs []Content
		for _, s := range t.text {
			cs = append(cs, Content{Type: "text", Text: s})
		}
		cs = append(cs, t.content...)
		res := &ToolResult{Content: cs}
		if t.result != nil {
			res.Structured = t.result(call.Arguments)
		}
		return res, nil
	}
	if t.result != nil {
		return &ToolResult{Structured: t.result(call.Arguments)}, nil
	}
	return &ToolResult{Structured: map[string]any{"args": call.Arguments}}, nil
}

func (f *fakeBackend) callsTo(stepID string) []ToolCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []ToolCall
	for _, c := range f.calls {
		if c.StepID == stepID {
			out = append(out, c)
		}
	}
	return out
}

// --- plan builders ---

// pos gives templates and steps distinct, predictable positions.
func at(line, col int) ir.Pos { return ir.Pos{File: "wf.yaml", Line: line, Col: col} }

func single(src string) bool {
	return strings.HasPrefix(src, "{{") && strings.HasSuffix(src, "}}") && strings.Count(src, "{{") == 1
}

func tpl(src string) *ir.Template {
	return &ir.Template{Source: src, Pos: at(1, 1), Single: single(src)}
}

// val converts a Go value into an ir.Value: strings with "{{" become
// templates, maps objects (keys sorted), slices arrays.
func val(v any) *ir.Value {
	switch x := v.(type) {
	case *ir.Value:
		return x
	case string:
		if strings.Contains(x, "{{") {
			return &ir.Value{Kind: ir.KindTemplate, Template: tpl(x)}
		}
		return &ir.Value{Kind: ir.KindLiteral, Literal: x}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := &ir.Value{Kind: ir.KindObject}
		for _, k := range keys {
			out.Fields = append(out.Fields, &ir.Field{Key: k, Value: val(x[k])})
		}
		return out
	case []any:
		out := &ir.Value{Kind: ir.KindArray}
		for _, e := range x {
			out.Items = append(out.Items, val(e))
		}
		return out
	case int:
		return &ir.Value{Kind: ir.KindLiteral, Literal: int64(x)}
	}
	return &ir.Value{Kind: ir.KindLiteral, Literal: v}
}

type M = map[string]any
type A = []any

// step describes a step for build(); after names its dependencies.
type step struct {
	*ir.Step
	after []string
}

func tool(id, ref string, args M, after ...string) step {
	b, t, _ := strings.Cut(ref, ".")
	s := &ir.Step{ID: id, Type: ir.StepTool, Pos: at(10, 5), Tool: &ir.ToolRef{Backend: b, Name: t}}
	if args != nil {
		s.Arguments = val(args)
	}
	return step{s, after}
}

func (s step) with(f func(*ir.Step)) step { f(s.Step); return s }

func when(cond string) func(*ir.Step) {
	return func(s *ir.Step) { s.Condition = tpl(cond); s.MaySkip = true }
}

func defaults(v any) func(*ir.Step) {
	return func(s *ir.Step) { s.DefaultResults = v }
}

func onError(action string, retries int) func(*ir.Step) {
	return func(s *ir.Step) {
		s.OnError = ir.OnError{Action: action, MaxRetries: retries, RetryDelay: ir.Duration(time.Millisecond)}
	}
}

func timeout(d time.Duration) func(*ir.Step) {
	return func(s *ir.Step) { s.Timeout = ir.Duration(d) }
}

func forEach(id, coll, itemVar string, inner step, after ...string) step {
	inner.ID = id
	s := &ir.Step{ID: id, Type: ir.StepForEach, Pos: at(20, 5), ForEach: &ir.ForEach{
		Collection: tpl(coll), ItemVar: itemVar, MaxParallel: 10, MaxIterations: 100, Step: inner.Step,
	}}
	return step{s, after}
}

func elicit(id, msg string, after ...string) step {
	s := &ir.Step{ID: id, Type: ir.StepElicitation, Pos: at(30, 5), Message: tpl(msg),
		Schema: M{"type": "object"}, OnDecline: ir.ActionAbort, OnCancel: ir.ActionAbort}
	return step{s, after}
}

// probeShape is the scheduling probe of TestSchedulingProbe and
// BenchmarkSchedulingProbe: slow (50ms) and fast (5ms) without
// dependencies, after_fast (5ms) after fast, join (5ms) after slow and
// after_fast.
func probeShape() (*ir.Workflow, *fakeBackend) {
	wf := build("probe",
		tool("slow", "svc.slow", nil),
		tool("fast", "svc.fast", nil),
		tool("after_fast", "svc.fast", nil, "fast"),
		tool("join", "svc.fast", nil, "slow", "after_fast"),
	)
	return wf, newFake(map[string]*fakeTool{"svc.slow": {latency: 50 * time.Millisecond}, "svc.fast": {latency: 5 * time.Millisecond}})
}

// build makes a one-workflow plan; steps must be listed in dependency order.
func build(name string, steps ...step) *ir.Workflow {
	wf := &ir.Workflow{Name: name, Description: "test", Pos: at(1, 1), Timeout: ir.Duration(time.Minute),
		FailureMode: ir.FailureAbort, MaxParallel: 10, InputSchema: M{"type": "object"}}
	index := map[string]int{}
	for i, s := range steps {
		s.Index = i
		index[s.ID] = i
		for _, a := range s.after {
			d, ok := index[a]
			if !ok {
				panic(fmt.Sprintf("step %q: dependency %q not defined before it", s.ID, a))
			}
			s.Deps = append(s.Deps, d)
		}
		sort.Ints(s.Deps)
		wf.Steps = append(wf.Steps, s.Step)
	}
	return wf
}

func plan(wfs ...*ir.Workflow) *ir.Plan { return &ir.Plan{Version: ir.Version, Workflows: wfs} }

// mustEngine makes an engine. Without a store of the test's own, its runs
// go to a replayStore: every finished run of every test is replayed.
func mustEngine(t testing.TB, p *ir.Plan, opts Options) *Engine {
	t.Helper()
	var rs *replayStore
	if opts.Store == nil {
		rs = &replayStore{MemoryStore: NewMemoryStore(0), t: t}
		opts.Store = rs
	}
	e, err := New(p, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if rs != nil {
		rs.e = e
	}
	return e
}

func stepStatuses(run *Run) map[string]StepStatus {
	out := map[string]StepStatus{}
	for _, s := range run.Steps {
		out[s.ID] = s.Status
	}
	return out
}

// eventLog collects events safely.
type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *eventLog) find(kind EventKind, stepID string) (Event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		if e.Kind == kind && e.StepID == stepID {
			return e, true
		}
	}
	return Event{}, false
}
