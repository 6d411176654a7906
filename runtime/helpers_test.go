package runtime

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/irbuild"
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

// The plan builders live in internal/irbuild; these names keep the
// cases short.
type (
	M         = irbuild.M
	A         = irbuild.A
	step      = irbuild.Step
	schemaMap = irbuild.SchemaMap
)

var (
	at       = irbuild.At
	tpl      = irbuild.Tpl
	val      = irbuild.Val
	tool     = irbuild.Tool
	when     = irbuild.When
	defaults = irbuild.Defaults
	onError  = irbuild.OnError
	timeout  = irbuild.Timeout
	forEach  = irbuild.ForEach
	elicit   = irbuild.Elicit
	build    = irbuild.Build
	plan     = irbuild.Plan
)

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
