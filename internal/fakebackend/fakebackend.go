package fakebackend

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vmcp-dev/vmcp/toolcall"
)

// Tool describes how one fake backend tool behaves.
type Tool struct {
	Latency   time.Duration
	FailFirst int           // fail the first N attempts with a Go error
	Fail      bool          // always fail with a Go error
	IsError   bool          // answer with an isError result
	Hang      bool          // block until the context ends
	HangFirst int           // block until the context ends in the first N attempts
	Stubborn  time.Duration // sleep this long, ignoring the context
	Text      []string
	Content   []toolcall.Content
	// Result computes a structured result from the arguments (beside Text
	// and Content when they are set); nil echoes {"args": arguments}.
	Result func(args map[string]any) any
}

// Backend is an in-process toolcall.Backend. It records every call and
// whether the call's context was cancelled while it ran. A tool missing
// from Tools echoes its arguments.
type Backend struct {
	Tools map[string]*Tool // "backend.tool"

	mu       sync.Mutex
	calls    []toolcall.Call
	attempts map[string]int

	InFlight   atomic.Int32 // the calls running now
	MaxFlight  atomic.Int32 // the most calls that ran at once
	SawCancel  atomic.Int32 // calls that returned because their context ended
	Started    chan string  // optional: receives "backend.tool" when a call starts
	StartTimes sync.Map     // step id -> time.Time of its first call
}

// New returns a Backend with these tools.
func New(tools map[string]*Tool) *Backend {
	return &Backend{Tools: tools, attempts: map[string]int{}}
}

// ErrDown is the Go error of a failing call (Tool.Fail, Tool.FailFirst).
var ErrDown = errors.New("backend unavailable")

// CallTool implements toolcall.Backend.
func (f *Backend) CallTool(ctx context.Context, call toolcall.Call) (*toolcall.Result, error) {
	name := call.Backend + "." + call.Tool
	n := f.InFlight.Add(1)
	defer f.InFlight.Add(-1)
	for {
		m := f.MaxFlight.Load()
		if n <= m || f.MaxFlight.CompareAndSwap(m, n) {
			break
		}
	}
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.attempts[call.StepID]++
	attempt := f.attempts[call.StepID]
	f.mu.Unlock()
	f.StartTimes.LoadOrStore(call.StepID, time.Now())
	if f.Started != nil {
		f.Started <- name
	}
	t := f.Tools[name]
	if t == nil {
		t = &Tool{}
	}
	if t.Hang || attempt <= t.HangFirst {
		<-ctx.Done()
		f.SawCancel.Add(1)
		return nil, ctx.Err()
	}
	if t.Stubborn > 0 {
		time.Sleep(t.Stubborn)
	}
	if t.Latency > 0 {
		timer := time.NewTimer(t.Latency)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			f.SawCancel.Add(1)
			return nil, ctx.Err()
		}
	}
	if t.Fail || attempt <= t.FailFirst {
		return nil, ErrDown
	}
	if t.IsError {
		return &toolcall.Result{IsError: true, Content: []toolcall.Content{{Type: "text", Text: name + " failed: quota exceeded"}}}, nil
	}
	if t.Text != nil || t.Content != nil {
		var cs []toolcall.Content
		for _, s := range t.Text {
			cs = append(cs, toolcall.Content{Type: "text", Text: s})
		}
		cs = append(cs, t.Content...)
		res := &toolcall.Result{Content: cs}
		if t.Result != nil {
			res.Structured = t.Result(call.Arguments)
		}
		return res, nil
	}
	if t.Result != nil {
		return &toolcall.Result{Structured: t.Result(call.Arguments)}, nil
	}
	return &toolcall.Result{Structured: map[string]any{"args": call.Arguments}}, nil
}

// Calls returns every call so far, in the order they started.
func (f *Backend) Calls() []toolcall.Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]toolcall.Call(nil), f.calls...)
}

// CallsTo returns the calls step stepID made, in order.
func (f *Backend) CallsTo(stepID string) []toolcall.Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []toolcall.Call
	for _, c := range f.calls {
		if c.StepID == stepID {
			out = append(out, c)
		}
	}
	return out
}
