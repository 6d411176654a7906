package toolcall

import "context"

// Backend calls one tool on one backend MCP server. The context carries the
// step's deadline and is cancelled when the run is cancelled or aborts; an
// implementation must stop the call (and tell the server) when it is.
type Backend interface {
	CallTool(ctx context.Context, call Call) (*Result, error)
}

// Call is one backend tool invocation.
type Call struct {
	Backend   string
	Tool      string
	Arguments map[string]any // never nil
	RunID     string
	StepID    string
}

// Result is a backend's answer, independent of the MCP library.
type Result struct {
	// Structured is the result's structuredContent, or nil.
	Structured any
	Content    []Content
	IsError    bool
}

// Content is one content item of a tool result.
type Content struct {
	Type string // "text", "image", "audio", "resource", "resource_link", ...
	Text string // text items, and the text of an embedded text resource
	Data string // base64 data of images and audio, the blob of a blob resource
	URI  string // resource links and embedded resources
	// Raw is the MCP JSON form of a non-text item.
	Raw map[string]any
}

// Progress receives, in order, the notifications/progress a backend sends
// for one tool call: progress, total (0 when the backend gave none) and
// message ("" when none).
type Progress func(progress, total float64, message string)

type progressKey struct{}

// WithProgress asks the backend client to request progress for the tool
// calls made with ctx and to pass each notification to fn.
func WithProgress(ctx context.Context, fn Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ProgressFrom returns the progress receiver of ctx, or nil.
func ProgressFrom(ctx context.Context) Progress {
	fn, _ := ctx.Value(progressKey{}).(Progress)
	return fn
}

// Question is what a backend asks the caller of one of its tools while the
// tool runs: an elicitation/create request, or the elicitation of an
// input_required result (MCP 2026-07-28). Only form questions are relayed.
type Question struct {
	Backend, Tool string // who asks
	// StepID is the StepID of the Call the question came during, set by
	// the Backend that made the call ("" for a call made without a Call:
	// a backend tool served as it is).
	StepID  string
	Message string
	Schema  map[string]any // the requested schema (JSON Schema of the form)
}

// Answer is the caller's answer to a Question: Action is accept, decline
// or cancel; Content is the form's content on accept.
type Answer struct {
	Action  string
	Content map[string]any
}

// Asker relays the questions a backend asks during the tool calls made with
// a context to whoever answers for the call's caller. Caller names that
// answerer: calls with the same Caller may share a question when the
// transport does not say which call it belongs to (stdio). Ask blocks
// until the answer comes or ctx ends. It is an interface so that a run can
// be its own asker: the engine hands its run state over, allocating
// nothing, and Caller's name is built only when a question comes.
type Asker interface {
	Caller() string
	Ask(ctx context.Context, q Question) (Answer, error)
}

// FuncAsker is an Asker made of a name and a function.
type FuncAsker struct {
	Name    string
	AskFunc func(ctx context.Context, q Question) (Answer, error)
}

// Caller returns a.Name.
func (a *FuncAsker) Caller() string { return a.Name }

// Ask calls a.AskFunc.
func (a *FuncAsker) Ask(ctx context.Context, q Question) (Answer, error) { return a.AskFunc(ctx, q) }

type askerKey struct{}

// WithAsker makes the backend client relay the questions backends ask
// during the tool calls made with ctx to a.
func WithAsker(ctx context.Context, a Asker) context.Context {
	return context.WithValue(ctx, askerKey{}, a)
}

// AskerFrom returns the asker of ctx, or nil.
func AskerFrom(ctx context.Context) Asker {
	a, _ := ctx.Value(askerKey{}).(Asker)
	return a
}

// Trace is the W3C trace context of one backend call (the traceparent
// and tracestate values), which the backend client sends in the call's
// params._meta and, to HTTP backends, as the HTTP headers of the same
// names, so a backend that traces joins the caller's trace. The tracing
// Backend decorator (telemetry/trace) sets it; the client only copies it.
type Trace struct {
	Traceparent, Tracestate string
}

type traceKey struct{}

// WithTrace makes the backend client send tc with the calls made with ctx.
func WithTrace(ctx context.Context, tc Trace) context.Context {
	return context.WithValue(ctx, traceKey{}, tc)
}

// TraceFrom returns the trace context of ctx; ok is false when it has none.
func TraceFrom(ctx context.Context) (tc Trace, ok bool) {
	tc, ok = ctx.Value(traceKey{}).(Trace)
	return tc, ok && tc.Traceparent != ""
}
