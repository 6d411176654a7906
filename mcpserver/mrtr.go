package mcpserver

// Elicitation for MCP 2026-07-28 clients, over stdio and streamable HTTP.
//
// That protocol removed server-initiated requests: a tool call that needs
// the user's input returns an input_required result carrying the question
// and an opaque requestState, and the client retries the same tools/call
// with the answer. A workflow run, however, is one long computation that
// may ask several questions while other steps keep running. So the first
// call starts the run in the background and waits; when the run asks (its
// Elicitor blocks), the call returns input_required with a fresh token; the
// retry that brings the answer hands it to the blocked Elicitor and waits
// again, until the run asks the next question or ends, and the retry that
// sees the end returns the result.
//
// A backend tool served as it is (proxy.go) is driven the same way for such
// clients: its backend call is the computation, and the questions the
// backend asks while it runs are its questions.
//
// Between round trips no request is open: the run goes on, and the
// progress of the steps that finish meanwhile is kept and sent at the start
// of the next round trip, before anything newer, so the client sees every
// step once and in order, numbered from the start of the run. An
// unanswered question times out with the elicitation deadline. A client that cancels a round trip
// cancels the run. Tokens are random and single-use.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// elicitationKey names the single input request of an input_required result.
const elicitationKey = "elicitation"

// pendingRun is a run driven over several tools/call round trips.
type pendingRun struct {
	s      *Server
	owner  string // the caller that started it (httpsafe.Identity.Subject)
	cancel context.CancelFunc
	asks   chan *question           // the run's questions, one at a time
	done   chan *mcp.CallToolResult // the run's result (buffered: nobody may wait)
	mu     sync.Mutex
	req    context.Context   // the open round trip, for progress; nil between
	token  mcp.ProgressToken // its progress token
	sent   int               // finished steps reported so far
	missed []finishedStep    // finished between round trips, not yet sent
}

// finishedStep is a progress notification kept for the next round trip.
type finishedStep struct {
	n      int
	ev     runtime.Event
	status string
}

// question is one elicitation waiting for the client's answer.
type question struct {
	req    runtime.ElicitRequest
	answer chan answerOrErr
}

type answerOrErr struct {
	res runtime.ElicitResult
	err error
}

// waiting holds the questions sent to clients, by requestState token.
type waiting struct {
	mu sync.Mutex
	m  map[string]waitingEntry
}

type waitingEntry struct {
	run *pendingRun
	q   *question
}

func (w *waiting) put(run *pendingRun, q *question) string {
	token := uuid.NewString()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]waitingEntry{}
	}
	w.m[token] = waitingEntry{run, q}
	return token
}

// take removes and returns the entry of token if who may answer it (it
// sees the run's owner); another caller's token is unknown to it and stays.
func (w *waiting) take(token string, who httpsafe.Identity) (waitingEntry, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	e, ok := w.m[token]
	if !ok || !who.Sees(e.run.owner) {
		return waitingEntry{}, false
	}
	delete(w.m, token)
	return e, ok
}

// drop forgets every token of q (it timed out or its run ended).
func (w *waiting) drop(q *question) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, e := range w.m {
		if e.q == q {
			delete(w.m, k)
		}
	}
}

// usesMultiRoundTrip reports whether a call must ask its questions with
// input_required results: a 2026-07-28 client that declared elicitation,
// on either transport. Such a client does not answer server-initiated
// requests even on stdio, where the pipe would carry them (the TypeScript
// SDK v2 client leaves an elicitation/create unanswered).
func usesMultiRoundTrip(ctx context.Context) bool {
	return mcpgo.IsModernRequest(ctx) && ClientCanElicit(ctx)
}

// multiRoundTrip serves one round trip of a workflow call for a
// 2026-07-28 client (see the top of this file).
func (s *Server) multiRoundTrip(ctx context.Context, wf *ir.Workflow, req mcp.CallToolRequest, args map[string]any) *mcp.CallToolResult {
	return s.roundTrip(ctx, req, "workflow "+wf.Name, func() (*pendingRun, *mcp.CallToolResult) {
		release, err := s.admitRun(ctx, httpsafe.Caller(ctx).Subject, wf.Name)
		if err != nil {
			return nil, startError(wf, err)
		}
		return s.startPending(ctx, wf, req, args, release), nil
	})
}

// roundTrip serves one round trip of a call driven over several: the
// first starts the work (start, or says why it could not start), a retry
// brings an answer. label names the call in errors.
func (s *Server) roundTrip(ctx context.Context, req mcp.CallToolRequest, label string, start func() (*pendingRun, *mcp.CallToolResult)) *mcp.CallToolResult {
	var run *pendingRun
	if state := req.Params.RequestState; state != "" {
		e, ok := s.waiting.take(state, httpsafe.Caller(ctx))
		if !ok {
			return mcp.NewToolResultError(fmt.Sprintf("%s: requestState is unknown or was already used (the question may have timed out)", label))
		}
		run = e.run
		run.attach(ctx, req)
		e.q.answer <- answerFromClient(req.Params.InputResponses)
	} else {
		var refused *mcp.CallToolResult
		if run, refused = start(); refused != nil {
			return refused
		}
	}
	defer run.detach()
	select {
	case q := <-run.asks:
		token := s.waiting.put(run, q)
		return mcpgo.NewInputRequestBuilder(token).Elicit(elicitationKey, mcp.ElicitationParams{
			Message:         q.req.Message,
			RequestedSchema: q.req.Schema,
		}).ToolResult()
	case res := <-run.done:
		return res
	case <-ctx.Done():
		// The client gave up on this round trip: stop the run.
		run.cancel()
		return mcp.NewToolResultError(label + " was cancelled")
	}
}

// startPending starts the run in the background, detached from this
// round trip's context (it outlives it) but cancellable through run.cancel.
// release gives back the run's slot (runlimits.go) once the run returns.
func (s *Server) startPending(ctx context.Context, wf *ir.Workflow, req mcp.CallToolRequest, args map[string]any, release func()) *pendingRun {
	id := uuid.NewString()
	return s.startWork(ctx, req, func(runCtx context.Context, run *pendingRun) *mcp.CallToolResult {
		defer release()
		r, err := s.opts.Runner.Run(runCtx, wf.Name, args, runtime.RunOptions{
			RunID:    id,
			Owner:    run.owner,
			Elicitor: &roundTripElicitor{run: run},
			OnEvent:  run.onEvent,
		})
		if err != nil {
			return startError(wf, err)
		}
		s.log.Info("run finished", "workflow", wf.Name, "run_id", id, "status", r.Status, "rounds", "multi")
		return RunResult(r)
	})
}

// startWork starts work in the background, detached from this round
// trip's context (it outlives it) but cancellable through run.cancel; its
// questions go to run's roundTripElicitor, and its result ends the call.
func (s *Server) startWork(ctx context.Context, req mcp.CallToolRequest, work func(context.Context, *pendingRun) *mcp.CallToolResult) *pendingRun {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	run := &pendingRun{
		s:      s,
		owner:  httpsafe.Caller(ctx).Subject,
		cancel: cancel,
		asks:   make(chan *question),
		done:   make(chan *mcp.CallToolResult, 1),
	}
	run.attach(ctx, req)
	go func() {
		defer cancel()
		run.done <- work(runCtx, run)
	}()
	return run
}

func answerFromClient(responses mcp.InputResponses) answerOrErr {
	res := mcpgo.ElicitationResponse(responses, elicitationKey)
	if res == nil {
		return answerOrErr{err: errors.New("the client retried the call without answering the elicitation")}
	}
	out, err := convertElicitResult(res)
	return answerOrErr{res: out, err: err}
}

// attach makes req the round trip that receives progress, and sends it
// what finished since the last one, if it asked for progress.
func (p *pendingRun) attach(ctx context.Context, req mcp.CallToolRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.req, p.token = ctx, nil
	if req.Params.Meta != nil {
		p.token = req.Params.Meta.ProgressToken
	}
	if p.token != nil {
		for _, f := range p.missed {
			p.s.sendProgress(p.req, p.token, f.n, f.ev, f.status)
		}
	}
	p.missed = nil
}

func (p *pendingRun) detach() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.req, p.token = nil, nil
}

// onEvent numbers finished steps over the whole run and reports them to
// the open round trip if it asked for progress, or keeps them for the next
// one when none is open.
func (p *pendingRun) onEvent(ev runtime.Event) {
	status := finishedStatus(ev.Kind)
	if status == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent++
	switch {
	case p.req == nil:
		p.missed = append(p.missed, finishedStep{p.sent, ev, status})
	case p.token != nil:
		p.s.sendProgress(p.req, p.token, p.sent, ev, status)
	}
}

// backendProgress passes a proxied backend call's progress to the open
// round trip, under its token, when it asked for progress; progress while
// no round trip is open is dropped (the backend's numbers need no catching
// up, unlike a run's finished steps).
func (p *pendingRun) backendProgress(progress, total float64, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.req != nil && p.token != nil {
		p.s.relayProgress(p.req, p.token)(progress, total, message)
	}
}

// roundTripElicitor hands the run's questions to the round trips.
type roundTripElicitor struct{ run *pendingRun }

func (e *roundTripElicitor) Elicit(ctx context.Context, req runtime.ElicitRequest) (runtime.ElicitResult, error) {
	timeout := time.NewTimer(e.run.s.opts.ElicitTimeout)
	defer timeout.Stop()
	q := &question{req: req, answer: make(chan answerOrErr, 1)}
	defer e.run.s.waiting.drop(q)
	select {
	case e.run.asks <- q:
	case <-ctx.Done():
		return runtime.ElicitResult{}, ctx.Err()
	case <-timeout.C:
		return runtime.ElicitResult{}, errors.New("no client round trip came to take the elicitation before its deadline")
	}
	select {
	case a := <-q.answer:
		return a.res, a.err
	case <-ctx.Done():
		return runtime.ElicitResult{}, ctx.Err()
	case <-timeout.C:
		return runtime.ElicitResult{}, errors.New("the client did not answer the elicitation before its deadline")
	}
}
