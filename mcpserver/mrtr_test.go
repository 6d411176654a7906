package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/runtime"
)

// countingAnswer accepts every question with {"n": <how many so far>}.
// meanwhile, when set, runs before each answer: while the client holds the
// question, between two round trips.
type countingAnswer struct {
	mu        sync.Mutex
	asks      []string
	meanwhile func()
}

func (a *countingAnswer) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.meanwhile != nil {
		a.meanwhile()
	}
	a.asks = append(a.asks, req.Params.Message)
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
		Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"n": float64(len(a.asks))},
	}}, nil
}

// TestMultiRoundTrip: a run that asks two questions, with steps finishing
// before, between and after them, completes over input_required round trips
// with both answers, and progress keeps counting across the rounds.
func TestMultiRoundTrip(t *testing.T) {
	runner := &fakeRunner{wfs: testWorkflows}
	runner.script = func(ctx context.Context, wf string, _ map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
		finish := func(id string, n int) {
			opts.OnEvent(runtime.Event{Kind: runtime.EventStepCompleted, StepID: id, Done: n, Total: 3})
		}
		var got []any
		for i, id := range []string{"first", "second"} {
			finish("before_"+id, i+1)
			res, err := opts.Elicitor.Elicit(ctx, runtime.ElicitRequest{Message: "question " + id, Schema: map[string]any{"type": "object"}})
			if err != nil {
				return nil, err
			}
			got = append(got, res.Content["n"])
		}
		finish("last", 3)
		return completed(opts.RunID, wf, map[string]any{"answers": got}), nil
	}
	ans := &countingAnswer{}
	c := testenv.HTTPClient(t, serveHTTP(t, newTestServer(t, runner), 17325), client.WithElicitationHandler(ans))
	progress := testenv.RecordProgress(c)
	res := call(t, c, "plain", nil, &mcp.Meta{ProgressToken: "p"})
	if res.IsError {
		t.Fatalf("plain failed: %s", testenv.ResultText(res))
	}
	if diff := cmp.Diff(map[string]any{"answers": []any{1.0, 2.0}}, res.StructuredContent); diff != "" {
		t.Errorf("structuredContent mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"question first", "question second"}, ans.asks); diff != "" {
		t.Errorf("questions asked (-want +got):\n%s", diff)
	}
	// Each round trip gets the progress of the steps that finished while it
	// was open; numbering continues across rounds.
	want := []string{"1/3 step before_first completed (1/3)", "2/3 step before_second completed (2/3)", "3/3 step last completed (3/3)"}
	if diff := cmp.Diff(want, progress.Of("p")); diff != "" {
		t.Errorf("progress across round trips (-want +got):\n%s", diff)
	}
}

// TestMultiRoundTripProgressBetweenRounds: a step that finishes while no
// round trip is open (the client is answering the question) is reported at
// the start of the next round trip, in order.
func TestMultiRoundTripProgressBetweenRounds(t *testing.T) {
	runner := &fakeRunner{wfs: testWorkflows}
	onEvent := make(chan func(runtime.Event), 1)
	runner.script = func(ctx context.Context, wf string, _ map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
		onEvent <- opts.OnEvent
		opts.OnEvent(runtime.Event{Kind: runtime.EventStepCompleted, StepID: "before", Done: 1, Total: 3})
		if _, err := opts.Elicitor.Elicit(ctx, runtime.ElicitRequest{Message: "go on?", Schema: map[string]any{"type": "object"}}); err != nil {
			return nil, err
		}
		opts.OnEvent(runtime.Event{Kind: runtime.EventStepCompleted, StepID: "after", Done: 3, Total: 3})
		return completed(opts.RunID, wf, map[string]any{"ok": true}), nil
	}
	ans := &countingAnswer{meanwhile: func() {
		// A parallel step of the run finishes now, with no request open.
		(<-onEvent)(runtime.Event{Kind: runtime.EventStepFailed, StepID: "meanwhile", Done: 2, Total: 3})
	}}
	c := testenv.HTTPClient(t, serveHTTP(t, newTestServer(t, runner), 17335), client.WithElicitationHandler(ans))
	progress := testenv.RecordProgress(c)
	if res := call(t, c, "plain", nil, &mcp.Meta{ProgressToken: "p"}); res.IsError {
		t.Fatalf("plain failed: %s", testenv.ResultText(res))
	}
	want := []string{"1/3 step before completed (1/3)", "2/3 step meanwhile failed (2/3)", "3/3 step after completed (3/3)"}
	if diff := cmp.Diff(want, progress.Of("p")); diff != "" {
		t.Errorf("progress across round trips (-want +got):\n%s", diff)
	}
}

func TestUnknownRequestState(t *testing.T) {
	runner := &fakeRunner{wfs: testWorkflows}
	runner.script = func(context.Context, string, map[string]any, runtime.RunOptions) (*runtime.Run, error) {
		t.Errorf("a retry with an unknown requestState started a run")
		return nil, fmt.Errorf("unexpected run")
	}
	s := newTestServer(t, runner)
	req := mcp.CallToolRequest{}
	req.Params.Name = "plain"
	req.Params.RequestState = "not-a-token"
	res, err := s.workflowHandler(testWorkflows[1])(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := "workflow plain: requestState is unknown or was already used (the question may have timed out)"
	if !res.IsError || testenv.ResultText(res) != want {
		t.Errorf("call with a stale requestState = (isError %v) %q; want isError %q", res.IsError, testenv.ResultText(res), want)
	}
}

// TestMultiRoundTripOverStdio: a 2026-07-28 client on stdio that declared
// elicitation gets the question as an input_required result, as over HTTP,
// and its retry with the answer gets the run's result. vmcp used to send
// such a client an elicitation/create request, which it never answers.
func TestMultiRoundTripOverStdio(t *testing.T) {
	runner := &fakeRunner{wfs: testWorkflows}
	runner.script = func(ctx context.Context, wf string, _ map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
		res, err := opts.Elicitor.Elicit(ctx, runtime.ElicitRequest{Message: "ok?", Schema: map[string]any{"type": "object"}})
		if err != nil {
			return nil, err
		}
		return completed(opts.RunID, wf, map[string]any{"action": res.Action}), nil
	}
	s := newTestServer(t, runner)
	c := serveEarly(t, func() (*Server, error) { return s, nil })
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	c.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plain","arguments":{},`+meta+`}}`)
	first := c.next(t)
	res, _ := first["result"].(map[string]any)
	asks, _ := res["inputRequests"].(map[string]any)
	ask, _ := asks[elicitationKey].(map[string]any)
	state, _ := res["requestState"].(string)
	if first["id"] != 1.0 || res["resultType"] != "input_required" || ask["method"] != "elicitation/create" || state == "" {
		t.Fatalf("the first round trip got %v; want an input_required result asking %q with a requestState", first, elicitationKey)
	}
	c.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"plain","arguments":{},"requestState":`+string(mustJSON(t, state))+
		`,"inputResponses":{"`+elicitationKey+`":{"action":"decline"}},`+meta+`}}`)
	second := c.next(t)
	res, _ = second["result"].(map[string]any)
	if second["id"] != 2.0 || fmt.Sprint(res["structuredContent"]) != fmt.Sprint(map[string]any{"action": "decline"}) {
		t.Fatalf("the retry got %v; want the run's result with action decline", second)
	}
}

// TestRequestStateBelongsToItsOwner: another owner's requestState (a multi
// round trip's answer token) is unknown to a caller and stays for its
// owner; admin may answer it.
func TestRequestStateBelongsToItsOwner(t *testing.T) {
	var w waiting
	run := &pendingRun{owner: "alice"}
	token := w.put(run, &question{})
	bob := httpsafe.Identity{Subject: "bob", Scopes: []httpsafe.Scope{httpsafe.ScopeRun}, Authenticated: true}
	if _, ok := w.take(token, bob); ok {
		t.Fatalf("bob took alice's requestState")
	}
	alice := httpsafe.Identity{Subject: "alice", Scopes: []httpsafe.Scope{httpsafe.ScopeRun}, Authenticated: true}
	if e, ok := w.take(token, alice); !ok || e.run != run {
		t.Fatalf("alice's own requestState = %v, %v; want her run", e, ok)
	}
	token = w.put(run, &question{})
	if _, ok := w.take(token, httpsafe.LocalOperator); !ok {
		t.Errorf("the local operator (every scope) could not answer")
	}
}
