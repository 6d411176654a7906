package mcpclient

// Questions backends ask while a call runs, relayed to the call's caller.
//
// vmcp declares the elicitation capability (form mode) to every stdio and
// streamable HTTP backend (not SSE: mcp-go's SSE client cannot answer server
// requests, so SSE backends get mcp-go's own error for every request). A backend may then ask while one of its tools runs, in one of
// three ways, and each reaches relay.Elicit with a context:
//
//   - on MCP 2026-07-28 the tool returns an input_required result; mcp-go's
//     client calls the handler with the call's own context and retries the
//     call with the answer;
//   - over streamable HTTP (2025-11-25 session) the elicitation/create
//     request arrives on the call's response stream, and the handler's
//     context is derived from the call's;
//   - over stdio the request carries nothing that ties it to a call, and the
//     handler's context is the transport's.
//
// So every call carries its *askingCall in its context and is listed, while
// it runs, in its conn's table. A question whose context names a call goes
// to that call's asker; one that does not goes to the only caller with calls
// in flight on that backend (when several calls of the same caller, a run's
// parallel steps, are in flight, the oldest one's step is named). When
// callers of different runs or clients have calls in flight the question
// cannot be placed and the backend gets an error saying so, as it does when
// the call's caller cannot answer (no asker, or the client declared no
// elicitation capability): at once, never a wait.
//
// The wait is bounded by the call's context (the step's timeout) and not by
// the backend's timeout: the call's budget (callBudget) stops running while
// a question of it is open. mcp-go gives the handler of a request on an
// HTTP response stream 30 seconds, after which the answer cannot be
// delivered; stdio and input_required have no such bound.
//
// Sampling (sampling/createMessage) is refused: vmcp has no model. The
// capability is not declared, and a backend that asks anyway gets a clear
// error (refuseSampling, and samplingRefused for input_required).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/toolcall"
)

// askingCall is one call in flight: the asker of its caller (nil when the
// caller cannot be asked) and the budget of its backend timeout.
type askingCall struct {
	seq    uint64
	tool   string
	step   string // the engine's step id, or ""
	asker  toolcall.Asker
	ctx    context.Context // the call's context
	budget *callBudget
}

// caller names who answers for the call ("" when no one can).
func (a *askingCall) caller() string {
	if a.asker == nil {
		return ""
	}
	return a.asker.Caller()
}

type askingKey struct{}

// askingCalls are a conn's calls in flight.
type askingCalls struct {
	mu    sync.Mutex
	seq   uint64
	calls map[uint64]*askingCall
}

// add lists a call until remove is called.
func (t *askingCalls) add(a *askingCall) (remove func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seq++
	a.seq = t.seq
	if t.calls == nil {
		t.calls = map[uint64]*askingCall{}
	}
	t.calls[a.seq] = a
	return func() {
		t.mu.Lock()
		delete(t.calls, a.seq)
		t.mu.Unlock()
	}
}

// pick returns the call a question without a call of its own belongs to:
// the oldest call in flight when all of them have the same caller.
func (t *askingCalls) pick(backend string) (*askingCall, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var oldest *askingCall
	callers := map[string]bool{}
	for _, a := range t.calls {
		callers[a.caller()] = true
		if oldest == nil || a.seq < oldest.seq {
			oldest = a
		}
	}
	switch {
	case oldest == nil:
		return nil, fmt.Errorf("vmcp relays questions asked during a tool call only, and no call to backend %q is in flight", backend)
	case len(callers) > 1:
		return nil, fmt.Errorf("vmcp cannot tell which of the %d calls in flight to backend %q (from %d different callers) this question belongs to: "+
			"this transport does not tie a question to its call; ask during a call with no other caller's call in flight, or serve the backend over streamable HTTP",
			len(t.calls), backend, len(callers))
	}
	return oldest, nil
}

// beginCall lists a call in its conn's table and puts it into its context.
func (c *conn) beginCall(ctx context.Context, tool, stepID string, budget *callBudget) (context.Context, func()) {
	a := &askingCall{tool: tool, step: stepID, asker: toolcall.AskerFrom(ctx), budget: budget}
	ctx = context.WithValue(ctx, askingKey{}, a)
	a.ctx = ctx
	return ctx, c.asking.add(a)
}

// relay is a conn's elicitation handler (mcp-go's client.ElicitationHandler).
type relay struct{ c *conn }

// Elicit relays a backend's question to the caller of the call it belongs
// to and returns the caller's answer unchanged (see the top of the file).
func (r relay) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	name := r.c.cfg.Name
	if req.Params.Mode == mcp.ElicitationModeURL {
		return nil, fmt.Errorf("vmcp relays form elicitation only; backend %q asked for URL mode, which vmcp did not declare", name)
	}
	call, ok := ctx.Value(askingKey{}).(*askingCall)
	if !ok {
		var err error
		if call, err = r.c.asking.pick(name); err != nil {
			return nil, err
		}
	}
	if call.asker == nil {
		return nil, fmt.Errorf("vmcp cannot relay this question: the caller of backend %q tool %q cannot be asked", name, call.tool)
	}
	schema, err := schemaObject(req.Params.RequestedSchema)
	if err != nil {
		return nil, err
	}
	resume := call.budget.pause()
	defer resume()
	wait, cancel := context.WithCancel(call.ctx)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	ans, err := call.asker.Ask(wait, toolcall.Question{Backend: name, Tool: call.tool, StepID: call.step, Message: req.Params.Message, Schema: schema})
	if err != nil {
		r.c.m.log.Debug("a backend's question got no answer", "backend", name, "tool", call.tool, "err", err)
		return nil, fmt.Errorf("vmcp got no answer from the caller of %q: %w", call.tool, err)
	}
	res := &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseAction(ans.Action)}}
	if ans.Action == string(mcp.ElicitationResponseActionAccept) && ans.Content != nil {
		res.Content = ans.Content
	}
	return res, nil
}

// schemaObject returns a requested schema as a JSON object.
func schemaObject(v any) (map[string]any, error) {
	if m, ok := v.(map[string]any); ok || v == nil {
		return m, nil
	}
	b, err := json.Marshal(v)
	var m map[string]any
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		return nil, fmt.Errorf("the requested schema is not a JSON object: %v", err)
	}
	return m, nil
}

// samplingRefusal is what a backend's sampling request gets.
func samplingRefusal(backend string) string {
	return fmt.Sprintf("vmcp does not relay sampling: backend %q asked for sampling/createMessage, but vmcp has no model to answer with and did not declare the sampling capability", backend)
}

// refuseSampling wraps the request handler mcp-go gives a transport so that
// a sampling request gets samplingRefusal as its JSON-RPC error (mcp-go's
// own is "no sampling handler configured").
func refuseSampling(backend string, next transport.RequestHandler) transport.RequestHandler {
	return func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		if req.Method == string(mcp.MethodSamplingCreateMessage) {
			return transport.NewJSONRPCErrorResponse(req.ID, mcp.METHOD_NOT_FOUND, samplingRefusal(backend), nil), nil
		}
		return next(ctx, req)
	}
}

// samplingRefused rewrites the error of a call whose backend asked for
// sampling in an input_required result.
func samplingRefused(backend string, err error) error {
	if err != nil && strings.Contains(err.Error(), "no sampling handler configured") {
		return errors.New(samplingRefusal(backend))
	}
	return err
}

// stdioRelay is the stdio transport with sampling refused.
type stdioRelay struct {
	*transport.Stdio
	backend string
}

func (t *stdioRelay) SetRequestHandler(h transport.RequestHandler) {
	t.Stdio.SetRequestHandler(refuseSampling(t.backend, h))
}

// callBudget is a call's backend timeout (backends.NAME.timeout), which does
// not run while the call waits for its caller's answer to a question: a
// person may take longer to answer than the backend may take to work.
type callBudget struct {
	cancel  context.CancelCauseFunc
	timeout time.Duration

	mu      sync.Mutex
	timer   *time.Timer
	left    time.Duration // what remains when paused
	started time.Time     // when the timer last started
	paused  int           // questions open
	done    bool
}

// errBudgetSpent is the cause of a call context whose backend timeout ran out.
var errBudgetSpent = errors.New("the backend's timeout ran out")

// withBudget returns ctx bounded by a backend timeout d that pauses while
// questions are open; stop releases it.
func withBudget(ctx context.Context, d time.Duration) (context.Context, *callBudget) {
	ctx, cancel := context.WithCancelCause(ctx)
	b := &callBudget{cancel: cancel, timeout: d, left: d, started: time.Now()}
	b.timer = time.AfterFunc(d, func() { cancel(errBudgetSpent) })
	return ctx, b
}

// pause stops the budget until the returned resume is called; pauses nest.
func (b *callBudget) pause() (resume func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.paused == 0 && !b.done && b.timer.Stop() {
		b.left -= time.Since(b.started)
	}
	b.paused++
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.paused--
			if b.paused == 0 && !b.done {
				b.started = time.Now()
				b.timer.Reset(max(b.left, 0))
			}
		})
	}
}

// stop ends the budget and releases its context.
func (b *callBudget) stop() {
	b.mu.Lock()
	b.done = true
	b.timer.Stop()
	b.mu.Unlock()
	b.cancel(context.Canceled)
}
