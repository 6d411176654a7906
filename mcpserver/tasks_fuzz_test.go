package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/internal/fuzzkit"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/toolcall"
)

// FuzzTaskRequest sends one JSON-RPC message through the two places the
// tasks code reads requests, in process: the stdio line filter (2025-11-25
// tools/call with params.task, tasks/get, tasks/result, tasks/list,
// tasks/cancel) and the streamable HTTP extension handler (2026-07-28
// tools/call, tasks/get, tasks/update, tasks/cancel, with the Mcp-Method
// and Mcp-Name headers the input gives). Whatever the message, each answer
// is one JSON-RPC response that echoes the request's id, with a result or
// an error whose message is free of Go's rendering of values
// (fuzzkit.GoText), and it comes within hangLimit.
//
// The server serves one workflow, echo (parameter text; the backend
// fails when it is "fail"), on a real engine, and knows two finished
// tasks by fixed ids (fuzzTaskID(1) completed, fuzzTaskID(2) failed) so
// that seeds can name them.
//
//	go test -run '^$' -fuzz '^FuzzTaskRequest$' -fuzztime 30s -fuzzminimizetime 500x ./mcpserver
func FuzzTaskRequest(f *testing.F) {
	done, failed := fuzzTaskID(1), fuzzTaskID(2)
	for _, s := range []struct{ body, method, name string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"` + done + `"}}`, "tasks/get", done},
		{`{"jsonrpc":"2.0","id":"r","method":"tasks/result","params":{"taskId":"` + failed + `"}}`, "tasks/result", failed},
		{`{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"taskId":"` + done + `"}}`, "tasks/cancel", done},
		{`{"jsonrpc":"2.0","id":3,"method":"tasks/list","params":{"cursor":"1"}}`, "tasks/list", ""},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"task":{"ttl":60000}}}`, "tools/call", "echo"},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":[1],"task":{}}}`, "tools/call", "echo"},
		{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"text":"fail"},"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`, "tools/call", "echo"},
		{`{"jsonrpc":"2.0","id":7,"method":"tasks/get","params":{"taskId":"` + done + `","_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`, "tasks/get", done},
		{`{"jsonrpc":"2.0","id":8,"method":"tasks/update","params":{"taskId":"` + done + `","inputResponses":{"k":{"action":"accept","content":{"a":1}}},"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`, "tasks/update", done},
		{`{"jsonrpc":"2.0","id":9,"method":"tasks/get","params":{"taskId":"nope"}}`, "tasks/get", "bm9wZQ=="},
		{`{"jsonrpc":"2.0","id":null,"method":"tasks/cancel"}`, "", ""},
	} {
		f.Add([]byte(s.body), s.method, s.name)
	}
	fx := newTaskFuzzServer(f)
	f.Fuzz(func(t *testing.T, body []byte, method, name string) {
		if len(body) > fuzzkit.MaxInput {
			return
		}
		input := string(body) + method + name
		if out, served := fx.within(t, func() ([]byte, bool) { return fx.stdio(body) }); served {
			checkTaskReply(t, "stdio", body, input, bytes.TrimSuffix(out, []byte("\n")))
		}
		out, served := fx.within(t, func() ([]byte, bool) { return fx.extension(body, method, name) })
		if served && peekMessage(body).Method != string(mcp.MethodServerDiscover) {
			checkTaskReply(t, "HTTP", body, input, out)
		}
	})
}

// taskFuzzServer is FuzzTaskRequest's server, built once.
type taskFuzzServer struct {
	srv *Server
	e   *Endpoint
}

func newTaskFuzzServer(tb testing.TB) *taskFuzzServer {
	tb.Helper()
	const src = "name: echo\ndescription: d\nparameters:\n  text: {type: string, required: true}\nsteps:\n  - {id: s, tool: b.echo, arguments: {text: \"{{.params.text}}\"}}\n"
	plan, diags := compiler.Compile([]compiler.Source{{Name: "echo.yaml", Src: []byte(src)}}, compiler.Options{})
	if diags.HasErrors() {
		tb.Fatalf("compile: %v", diags)
	}
	eng, err := runtime.New(plan, runtime.Options{Backend: echoBackend{}, Store: runtime.NewMemoryStore(100)})
	if err != nil {
		tb.Fatal(err)
	}
	runs := &fixedRuns{Engine: eng, fixed: map[string]*runtime.Run{}}
	for i, text := range []string{"hi", "fail"} {
		id := fuzzTaskID(byte(i + 1))
		if _, err := eng.Run(context.Background(), "echo", map[string]any{"text": text}, runtime.RunOptions{RunID: id}); err != nil {
			tb.Fatal(err)
		}
		if runs.fixed[id], err = eng.Status(context.Background(), id); err != nil {
			tb.Fatal(err)
		}
	}
	srv, err := New(Options{Runner: eng, Tasks: TaskOptions{Runs: runs}})
	if err != nil {
		tb.Fatal(err)
	}
	e := srv.MCPHandler()
	tb.Cleanup(func() { e.CloseSessions(context.Background()) })
	return &taskFuzzServer{srv: srv, e: e}
}

// fuzzTaskID is a fixed task id of the anonymous caller.
func fuzzTaskID(n byte) string {
	var u [16]byte
	u[0], u[6], u[8] = n, 0x40, 0x80
	copy(u[10:], ownerTag("", u[:10]))
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:])
}

// fixedRuns keeps the fixed tasks' runs out of the engine's store, which
// drops the oldest finished runs as the fuzzer makes more.
type fixedRuns struct {
	*runtime.Engine
	fixed map[string]*runtime.Run
}

func (r *fixedRuns) Status(ctx context.Context, id string) (*runtime.Run, error) {
	if run, ok := r.fixed[id]; ok {
		c := *run
		return &c, nil
	}
	return r.Engine.Status(ctx, id)
}

// echoBackend answers every call with its arguments, or fails when the
// text argument is "fail".
type echoBackend struct{}

func (echoBackend) CallTool(_ context.Context, call toolcall.Call) (*toolcall.Result, error) {
	if call.Arguments["text"] == "fail" {
		return nil, errors.New("the backend failed as asked")
	}
	return &toolcall.Result{Structured: call.Arguments}, nil
}

// stdio serves body as a line of the stdio filter and returns what it
// wrote once its handler is done.
func (fx *taskFuzzServer) stdio(body []byte) ([]byte, bool) {
	var out lockedBuffer
	g := &handlerGroup{}
	canElicit := false
	line := append(bytes.ReplaceAll(body, []byte("\n"), nil), '\n')
	served := fx.srv.tasks.serveStdioLine(context.Background(), g, line, &out, &canElicit)
	g.close()
	g.wg.Wait()
	return []byte(out.String()), served
}

// extension serves body as a 2026-07-28 POST with the given Mcp-Method
// and Mcp-Name (base64 when it is not plain ASCII) headers.
func (fx *taskFuzzServer) extension(body []byte, method, name string) ([]byte, bool) {
	r := httptest.NewRequest(http.MethodPost, MCPPath, bytes.NewReader(body))
	r.Header.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if method != "" {
		r.Header.Set(mcp.HeaderMethod, strings.Map(printable, method))
	}
	if name != "" {
		r.Header.Set(mcp.HeaderName, strings.Map(printable, name))
	}
	w := httptest.NewRecorder()
	served := fx.e.serveExtension(w, r, body)
	return w.Body.Bytes(), served
}

// printable drops the characters an HTTP header value cannot hold.
func printable(r rune) rune {
	if r < 0x20 || r == 0x7f {
		return -1
	}
	return r
}

// within runs serve and fails when it does not return within hangLimit
// (the stuck goroutine is abandoned; the fuzz worker exits after the
// failure).
func (fx *taskFuzzServer) within(t *testing.T, serve func() ([]byte, bool)) ([]byte, bool) {
	t.Helper()
	type result struct {
		out    []byte
		served bool
	}
	done := make(chan result, 1)
	go func() {
		out, served := serve()
		done <- result{out, served}
	}()
	timer := time.NewTimer(hangLimit)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.out, r.served
	case <-timer.C:
		t.Fatalf("the request did not get its answer within %v (a hang)", hangLimit)
		return nil, false
	}
}

// hangLimit is far above the milliseconds a request takes here.
const hangLimit = 10 * time.Second

// checkTaskReply holds the answer out to a request to FuzzTaskRequest's
// properties.
func checkTaskReply(t *testing.T, transport string, body []byte, input string, out []byte) {
	t.Helper()
	var reply struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *rpcErr         `json:"error"`
	}
	if bytes.Count(out, []byte("\n")) > 0 && transport == "stdio" {
		t.Fatalf("%s: the answer is more than one line: %s", transport, out)
	}
	if err := json.Unmarshal(out, &reply); err != nil {
		t.Fatalf("%s: the answer is not JSON (%v): %s", transport, err, out)
	}
	if reply.JSONRPC != "2.0" || (reply.Result == nil) == (reply.Error == nil) {
		t.Fatalf("%s: the answer is not a JSON-RPC response with a result or an error: %s", transport, out)
	}
	if want, got := compactID(peekID(body)), compactID(reply.ID); want != got {
		t.Errorf("%s: the answer's id is %s; want the request's %s", transport, got, want)
	}
	if reply.Error != nil {
		if g := fuzzkit.GoText(reply.Error.Message, input); g != "" {
			t.Errorf("%s: error %q renders Go's %q", transport, reply.Error.Message, g)
		}
	}
}

// peekID is the raw id of a JSON-RPC message.
func peekID(body []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(body, &m)
	return m.ID
}

// compactID is a raw id as it compares: compacted, and null when absent.
func compactID(id json.RawMessage) string {
	var b bytes.Buffer
	if len(id) == 0 || json.Compact(&b, id) != nil {
		return "null"
	}
	return b.String()
}
