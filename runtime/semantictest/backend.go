package semantictest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vmcp-dev/vmcp/runtime"
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
	content   []runtime.Content
	// result computes a structured result from the arguments (beside text
	// and content when they are set); nil echoes {"args": arguments}.
	result func(args map[string]any) any
}

// fakeBackend is an in-process runtime.Backend. It records every call and whether
// the call's context was cancelled while it ran.
type fakeBackend struct {
	tools map[string]*fakeTool // "backend.tool"

	mu       sync.Mutex
	calls    []runtime.ToolCall
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

func (f *fakeBackend) CallTool(ctx context.Context, call runtime.ToolCall) (*runtime.ToolResult, error) {
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
		return &runtime.ToolResult{IsError: true, Content: []runtime.Content{{Type: "text", Text: name + " failed: quota exceeded"}}}, nil
	}
	if t.text != nil || t.content != nil {
		var cs []runtime.Content
		for _, s := range t.text {
			cs = append(cs, runtime.Content{Type: "text", Text: s})
		}
		cs = append(cs, t.content...)
		res := &runtime.ToolResult{Content: cs}
		if t.result != nil {
			res.Structured = t.result(call.Arguments)
		}
		return res, nil
	}
	if t.result != nil {
		return &runtime.ToolResult{Structured: t.result(call.Arguments)}, nil
	}
	return &runtime.ToolResult{Structured: map[string]any{"args": call.Arguments}}, nil
}

func (f *fakeBackend) callsTo(stepID string) []runtime.ToolCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []runtime.ToolCall
	for _, c := range f.calls {
		if c.StepID == stepID {
			out = append(out, c)
		}
	}
	return out
}

// --- a scripted elicitor ---

// scriptedElicitor answers every question with res, or hangs until the
// context ends, and records the requests.
type scriptedElicitor struct {
	res  runtime.ElicitResult
	hang bool
	mu   sync.Mutex
	reqs []runtime.ElicitRequest
}

func (s *scriptedElicitor) Elicit(ctx context.Context, req runtime.ElicitRequest) (runtime.ElicitResult, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	if s.hang {
		<-ctx.Done()
		return runtime.ElicitResult{}, ctx.Err()
	}
	return s.res, nil
}
