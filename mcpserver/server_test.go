package mcpserver

// These tests drive the MCP server with a real mcp-go client, in process or
// over streamable HTTP on a loopback port, and a scripted Runner, so each
// behaviour of the server (schemas, results, progress, cancellation,
// elicitation) is checked on its own. The end-to-end tests in e2e/ repeat
// them with the real engine and real backend processes.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// fakeRunner runs workflows by calling script.
type fakeRunner struct {
	wfs    []*ir.Workflow
	script func(ctx context.Context, wf string, params map[string]any, opts runtime.RunOptions) (*runtime.Run, error)
}

func (f *fakeRunner) Workflows() []*ir.Workflow { return f.wfs }
func (f *fakeRunner) Run(ctx context.Context, wf string, params map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
	return f.script(ctx, wf, params, opts)
}

func yes() *bool { b := true; return &b }

var testWorkflows = []*ir.Workflow{
	{
		Name:        "greet",
		Description: "Say hello",
		InputSchema: map[string]any{
			"type":                 "object",
			"properties":           map[string]any{"who": map[string]any{"type": "string", "minLength": 1.0}},
			"required":             []any{"who"},
			"additionalProperties": false,
		},
		Output: &ir.Output{Schema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"greeting": map[string]any{"type": "string"}},
			"required":   []any{"greeting"},
		}},
		Annotations: &ir.Annotations{Title: "Greeter", ReadOnlyHint: yes()},
	},
	{Name: "plain", Description: "No parameters", InputSchema: map[string]any{"type": "object", "properties": map[string]any{}}},
}

// completed builds a finished run record with two steps.
func completed(id, wf string, out any) *runtime.Run {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return &runtime.Run{
		ID: id, Workflow: wf, Status: runtime.RunCompleted, Output: out,
		StartedAt: t0, EndedAt: t0.Add(30 * time.Millisecond),
		Steps: []runtime.StepState{
			{ID: "a", Status: runtime.StepCompleted, Attempts: 1, StartedAt: t0.Add(time.Millisecond), EndedAt: t0.Add(21 * time.Millisecond)},
			{ID: "b", Status: runtime.StepSkipped},
		},
	}
}

func newTestServer(t *testing.T, r Runner) *Server {
	t.Helper()
	s, err := New(Options{Runner: r})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func inProcessClient(t *testing.T, s *Server, opts ...client.ClientOption) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClientWithOptions(s.MCP(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatalf("Initialize: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// listenLocal listens on the first free port of [from, from+10).
func listenLocal(t *testing.T, from int) net.Listener {
	t.Helper()
	for p := from; p < from+10; p++ {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err == nil {
			return ln
		}
	}
	t.Fatalf("no free port in %d-%d", from, from+9)
	return nil
}

// serveHTTP serves s on a loopback port and returns the MCP URL.
func serveHTTP(t *testing.T, s *Server, port int) string {
	t.Helper()
	ln := listenLocal(t, port)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	h := s.MCPHandler()
	go func() { done <- ServeHTTP(ctx, ln, HTTPHandler(h, nil), httpsafe.Limits{}, h, 5*time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	})
	return "http://" + ln.Addr().String() + MCPPath
}

func call(t *testing.T, c *client.Client, name string, args any, meta *mcp.Meta) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	req.Params.Meta = meta
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

func TestToolsList(t *testing.T) {
	s := newTestServer(t, &fakeRunner{wfs: testWorkflows})
	c := inProcessClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	raw, err := json.Marshal(res.Tools)
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	byName := map[string]map[string]any{}
	for _, tool := range got {
		byName[tool["name"].(string)] = tool
	}
	greet := byName["greet"]
	if greet == nil || byName["plain"] == nil || len(got) != 2 {
		t.Fatalf("tools/list = %s; want greet and plain", raw)
	}
	want := map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"who": map[string]any{"type": "string", "minLength": 1.0}},
		"required":             []any{"who"},
		"additionalProperties": false,
	}
	if diff := cmp.Diff(want, greet["inputSchema"]); diff != "" {
		t.Errorf("greet inputSchema mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(testWorkflows[0].Output.Schema, greet["outputSchema"]); diff != "" {
		t.Errorf("greet outputSchema mismatch (-want +got):\n%s", diff)
	}
	if greet["description"] != "Say hello" {
		t.Errorf("greet description = %v; want %q", greet["description"], "Say hello")
	}
	ann, _ := greet["annotations"].(map[string]any)
	if ann["title"] != "Greeter" || ann["readOnlyHint"] != true {
		t.Errorf("greet annotations = %v; want title Greeter, readOnlyHint true", ann)
	}
	if _, ok := byName["plain"]["outputSchema"]; ok {
		t.Errorf("plain has an outputSchema although the workflow has no output")
	}
}

func TestCallResults(t *testing.T) {
	runner := &fakeRunner{wfs: testWorkflows}
	runner.script = func(_ context.Context, wf string, params map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
		switch params["case"] {
		case "completed":
			return completed(opts.RunID, wf, map[string]any{"greeting": "hello " + fmt.Sprint(params["who"])}), nil
		case "scalar":
			return completed(opts.RunID, wf, "just text"), nil
		case "failed":
			r := completed(opts.RunID, wf, nil)
			r.Status = runtime.RunFailed
			r.Error = &runtime.StepError{Step: "a", Pos: ir.Pos{File: "wf.yaml", Line: 12, Col: 7}, Msg: "backend said no"}
			return r, nil
		case "timed_out":
			r := completed(opts.RunID, wf, nil)
			r.Status = runtime.RunTimedOut
			return r, nil
		case "invalid":
			return nil, &runtime.InputError{Workflow: wf, Problems: []string{`"who": required`}}
		}
		return nil, errors.New("unknown workflow")
	}
	c := inProcessClient(t, newTestServer(t, runner))
	tests := []struct {
		name       string
		args       any
		wantError  bool
		wantText   string
		structured any
		status     string
	}{
		{"completed", map[string]any{"case": "completed", "who": "ada"}, false, `{"greeting":"hello ada"}`, map[string]any{"greeting": "hello ada"}, "completed"},
		{"scalar output is wrapped", map[string]any{"case": "scalar"}, false, `{"result":"just text"}`, map[string]any{"result": "just text"}, "completed"},
		{"failed names step and position", map[string]any{"case": "failed"}, true, `workflow greet failed: step "a" (wf.yaml:12:7): backend said no`, nil, "failed"},
		{"timed out", map[string]any{"case": "timed_out"}, true, "workflow greet timed out", nil, "timed_out"},
		{"invalid arguments", map[string]any{"case": "invalid"}, true, `invalid arguments for greet: "who": required`, nil, ""},
		{"start error", map[string]any{"case": "other"}, true, "workflow greet could not start: unknown workflow", nil, ""},
		{"arguments not an object", []any{1, 2}, true, "invalid arguments for greet: arguments must be a JSON object, not an array", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, c, "greet", tt.args, nil)
			if res.IsError != tt.wantError {
				t.Errorf("IsError = %v; want %v (text %q)", res.IsError, tt.wantError, testenv.ResultText(res))
			}
			if got := testenv.ResultText(res); got != tt.wantText {
				t.Errorf("text = %q; want %q", got, tt.wantText)
			}
			if diff := cmp.Diff(tt.structured, res.StructuredContent); diff != "" {
				t.Errorf("structuredContent mismatch (-want +got):\n%s", diff)
			}
			if tt.status == "" {
				return
			}
			if res.Meta == nil {
				t.Fatalf("result has no _meta")
			}
			m := res.Meta.AdditionalFields
			if id, _ := m[MetaRunID].(string); len(id) != 36 {
				t.Errorf("_meta %s = %v; want a UUID", MetaRunID, m[MetaRunID])
			}
			if m[MetaStatus] != tt.status || m[MetaWorkflow] != "greet" {
				t.Errorf("_meta status, workflow = %v, %v; want %s, greet", m[MetaStatus], m[MetaWorkflow], tt.status)
			}
			wantTL := []any{map[string]any{"step": "a", "status": "completed", "attempts": 1.0, "startMs": 1.0, "endMs": 21.0}}
			if diff := cmp.Diff(wantTL, m[MetaTimeline]); diff != "" {
				t.Errorf("_meta timeline mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProgressOverHTTP counts progress notifications across many runs over
// streamable HTTP: every finished step must arrive, in order, before the
// result. Without flushMiddleware mcp-go drops the last one about half the
// time.
func TestProgressOverHTTP(t *testing.T) {
	const steps, runs = 6, 20
	runner := &fakeRunner{wfs: testWorkflows}
	runner.script = func(_ context.Context, wf string, _ map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
		kinds := []runtime.EventKind{runtime.EventStepCompleted, runtime.EventStepSkipped, runtime.EventStepFailed}
		if opts.OnEvent == nil {
			return completed(opts.RunID, wf, map[string]any{"greeting": "hi"}), nil
		}
		opts.OnEvent(runtime.Event{Kind: runtime.EventRunStarted, Total: steps})
		for i := range steps {
			id := fmt.Sprintf("s%d", i)
			opts.OnEvent(runtime.Event{Kind: runtime.EventStepStarted, StepID: id, Done: i, Total: steps})
			opts.OnEvent(runtime.Event{Kind: kinds[i%3], StepID: id, Done: i + 1, Total: steps})
		}
		opts.OnEvent(runtime.Event{Kind: runtime.EventRunFinished, Done: steps, Total: steps})
		return completed(opts.RunID, wf, map[string]any{"greeting": "hi"}), nil
	}
	url := serveHTTP(t, newTestServer(t, runner), 17300)
	c := testenv.HTTPClient(t, url)
	progress := testenv.RecordProgress(c)
	for r := range runs {
		tok := fmt.Sprintf("tok-%d", r)
		res := call(t, c, "greet", map[string]any{"who": "x"}, &mcp.Meta{ProgressToken: tok})
		if res.IsError {
			t.Fatalf("run %d: %s", r, testenv.ResultText(res))
		}
		n := progress.Of(tok)
		want := []string{
			"1/6 step s0 completed (1/6)", "2/6 step s1 skipped (2/6)", "3/6 step s2 failed (3/6)",
			"4/6 step s3 completed (4/6)", "5/6 step s4 skipped (5/6)", "6/6 step s5 failed (6/6)",
		}
		if diff := cmp.Diff(want, n); diff != "" {
			t.Errorf("run %d: progress notifications received before the result (-want +got):\n%s", r, diff)
		}
	}
	// A call without a progress token gets no notifications.
	before := progress.Tokens()
	call(t, c, "greet", map[string]any{"who": "x"}, nil)
	if progress.Tokens() != before {
		t.Errorf("a call without a progress token received progress notifications")
	}
}

// TestCancellation: a client that gives up on a call sends
// notifications/cancelled, and the run's context must end.
func TestCancellation(t *testing.T) {
	for _, tr := range []string{"inprocess", "http"} {
		t.Run(tr, func(t *testing.T) {
			started := make(chan struct{})
			stopped := make(chan error, 1)
			runner := &fakeRunner{wfs: testWorkflows}
			runner.script = func(ctx context.Context, wf string, _ map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
				close(started)
				select {
				case <-ctx.Done():
					stopped <- ctx.Err()
				case <-time.After(10 * time.Second):
					stopped <- errors.New("the run was not cancelled within 10s")
				}
				r := completed(opts.RunID, wf, nil)
				r.Status = runtime.RunCancelled
				return r, nil
			}
			s := newTestServer(t, runner)
			var c *client.Client
			if tr == "http" {
				c = testenv.HTTPClient(t, serveHTTP(t, s, 17310))
			} else {
				c = inProcessClient(t, s)
			}
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				req := mcp.CallToolRequest{}
				req.Params.Name = "greet"
				req.Params.Arguments = map[string]any{"who": "x"}
				_, err := c.CallTool(ctx, req)
				errc <- err
			}()
			select {
			case <-started:
			case <-time.After(10 * time.Second):
				t.Fatal("the run did not start")
			}
			cancel()
			if err := <-stopped; !errors.Is(err, context.Canceled) {
				t.Errorf("run context ended with %v; want context.Canceled", err)
			}
			// The in-process transport hands the result back whatever the
			// context; over HTTP the client gives up on the call.
			if err := <-errc; err == nil && tr == "http" {
				t.Errorf("CallTool after cancel returned no error")
			}
		})
	}
}

type answer struct {
	action  mcp.ElicitationResponseAction
	content any
	seen    chan mcp.ElicitationRequest
}

func (a *answer) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.seen <- req
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: a.action, Content: a.content}}, nil
}

// TestElicitation forwards an elicitation to clients that can answer it and
// refuses it clearly to clients that cannot.
func TestElicitation(t *testing.T) {
	type outcome struct {
		Result runtime.ElicitResult
		Err    string
	}
	results := make(chan outcome, 1)
	runner := &fakeRunner{wfs: testWorkflows}
	runner.script = func(ctx context.Context, wf string, _ map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
		res, err := opts.Elicitor.Elicit(ctx, runtime.ElicitRequest{
			RunID: opts.RunID, StepID: "confirm", Message: "Deploy?",
			Schema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}},
		})
		o := outcome{Result: res}
		if err != nil {
			o.Err = err.Error()
		}
		results <- o
		return completed(opts.RunID, wf, map[string]any{"greeting": "done"}), nil
	}
	s := newTestServer(t, runner)
	url := serveHTTP(t, s, 17320)
	tests := []struct {
		name    string
		connect func(opts ...client.ClientOption) *client.Client
		handler *answer
		want    outcome
	}{
		{"accept in process", func(o ...client.ClientOption) *client.Client { return inProcessClient(t, s, o...) },
			&answer{action: mcp.ElicitationResponseActionAccept, content: map[string]any{"ok": true}},
			outcome{Result: runtime.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}}},
		{"accept over HTTP", func(o ...client.ClientOption) *client.Client {
			return testenv.HTTPClient(t, url, append(o, client.WithLegacyProtocolOnly())...)
		},
			&answer{action: mcp.ElicitationResponseActionAccept, content: map[string]any{"ok": false}},
			outcome{Result: runtime.ElicitResult{Action: "accept", Content: map[string]any{"ok": false}}}},
		{"decline over HTTP", func(o ...client.ClientOption) *client.Client {
			return testenv.HTTPClient(t, url, append(o, client.WithLegacyProtocolOnly())...)
		},
			&answer{action: mcp.ElicitationResponseActionDecline},
			outcome{Result: runtime.ElicitResult{Action: "decline"}}},
		{"cancel in process", func(o ...client.ClientOption) *client.Client { return inProcessClient(t, s, o...) },
			&answer{action: mcp.ElicitationResponseActionCancel},
			outcome{Result: runtime.ElicitResult{Action: "cancel"}}},
		{"client without the capability", func(o ...client.ClientOption) *client.Client {
			return testenv.HTTPClient(t, url, client.WithLegacyProtocolOnly())
		}, nil, outcome{Err: ErrNoElicitation.Error()}},
		{"accept, 2026-07-28 client over HTTP", func(o ...client.ClientOption) *client.Client { return testenv.HTTPClient(t, url, o...) },
			&answer{action: mcp.ElicitationResponseActionAccept, content: map[string]any{"ok": true}},
			outcome{Result: runtime.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}}},
		{"decline, 2026-07-28 client over HTTP", func(o ...client.ClientOption) *client.Client { return testenv.HTTPClient(t, url, o...) },
			&answer{action: mcp.ElicitationResponseActionDecline},
			outcome{Result: runtime.ElicitResult{Action: "decline"}}},
		{"2026-07-28 client over HTTP without the capability", func(o ...client.ClientOption) *client.Client { return testenv.HTTPClient(t, url) },
			nil, outcome{Err: ErrNoElicitation.Error()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []client.ClientOption
			if tt.handler != nil {
				tt.handler.seen = make(chan mcp.ElicitationRequest, 1)
				opts = append(opts, client.WithElicitationHandler(tt.handler))
			}
			c := tt.connect(opts...)
			res := call(t, c, "plain", nil, nil)
			if res.IsError {
				t.Fatalf("call failed: %s", testenv.ResultText(res))
			}
			got := <-results
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Elicit outcome mismatch (-want +got):\n%s", diff)
			}
			if tt.want.Err != "" || tt.handler == nil {
				return
			}
			req := <-tt.handler.seen
			if req.Params.Message != "Deploy?" {
				t.Errorf("client saw message %q; want %q", req.Params.Message, "Deploy?")
			}
		})
	}
}

func TestDuplicateToolNames(t *testing.T) {
	extra := mcpgo.ServerTool{Tool: mcp.NewTool("greet"), Handler: func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("x"), nil
	}}
	_, err := New(Options{Runner: &fakeRunner{wfs: testWorkflows}, ExtraTools: []mcpgo.ServerTool{extra}})
	want := `server: two tools are named "greet" (a workflow, an exposed backend tool or an extra tool)`
	if err == nil || err.Error() != want {
		t.Errorf("New with a clashing extra tool: error %v; want %q", err, want)
	}
}

// ServeHTTP's server caps header size, so a huge request cannot hold memory
// or a connection.
func TestServeHTTPLimitsHeaderSize(t *testing.T) {
	url := serveHTTP(t, newTestServer(t, &fakeRunner{}), 17480)
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Padding", strings.Repeat("x", 256<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("request with a 256 KiB header: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("status for a 256 KiB header = %d; want %d", resp.StatusCode, http.StatusRequestHeaderFieldsTooLarge)
	}
}
