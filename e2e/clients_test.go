package e2e

// The server as real clients see it: where notifications travel when the
// client keeps the standalone GET stream open (as the TypeScript SDK
// does), the life of a session (delete, unknown ids, expiry, the cap),
// multi-select forms and answer checks, $defs in parameters, undeclared
// arguments, result text without HTML escaping, and backend progress.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// TestProgressOnCallStream opens the standalone GET stream first, as the
// TypeScript SDK does, then makes 50 calls with a progress token: each
// call's progress must arrive on that call's own response stream, 1 to 4
// in order, before its result, and none on the GET stream.
func TestProgressOnCallStream(t *testing.T) {
	cfg := writeConfig(t, testConfig, filepath.Join(t.TempDir(), "record.txt"))
	url, _ := httpVMCP(t, cfg)
	s := rawInitialize(t, url)
	l := s.listen()
	for i := range 50 {
		tok := fmt.Sprintf("p-%d", i)
		r := s.request(i+1, "tools/call", map[string]any{
			"name": "fan", "arguments": map[string]any{}, "_meta": map[string]any{"progressToken": tok},
		})
		if r.status != http.StatusOK || len(r.messages) == 0 {
			t.Fatalf("call %d: status %d, body %s", i, r.status, r.body)
		}
		if diff := cmp.Diff([]float64{1, 2, 3, 4}, progressOf(r.messages, tok)); diff != "" {
			t.Errorf("call %d: progress on its response stream (-want +got):\n%s", i, diff)
		}
		last := r.messages[len(r.messages)-1]
		if fmt.Sprint(last["id"]) != fmt.Sprint(i+1) || last["result"] == nil {
			t.Errorf("call %d: the last message of the response stream is %v; want the result of request %d", i, last, i+1)
		}
	}
	l.close()
	for _, m := range l.messages() {
		if m["method"] == "notifications/progress" {
			t.Errorf("the GET stream carried %v; a call's progress belongs on its response stream", m)
		}
	}
}

// TestSessionLifecycle: requests without a session id are 400; ids that
// were never issued and deleted sessions are 404, for POST, GET and
// DELETE; deleting a session ends its open GET stream.
func TestSessionLifecycle(t *testing.T) {
	cfg := writeConfig(t, testConfig, filepath.Join(t.TempDir(), "record.txt"))
	url, _ := httpVMCP(t, cfg)
	list := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}

	r := rawPost(t, url, "", list)
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, "missing Mcp-Session-Id header") {
		t.Errorf("tools/list without a session id: status %d, body %s; want 400 naming Mcp-Session-Id", r.status, r.body)
	}
	for _, id := range []string{"vmcp-00000000000000000000000000000000", "mcp-session-6a1d8f1e-2f4c-4c55-9a3e-4b1e1c1d1e1f"} {
		r := rawPost(t, url, id, list)
		if r.status != http.StatusNotFound || !strings.Contains(r.body, "session not found") {
			t.Errorf("tools/list with never-issued session %s: status %d, body %s; want 404 session not found", id, r.status, r.body)
		}
		for _, method := range []string{http.MethodGet, http.MethodDelete} {
			if status, body := rawDo(t, method, url, id); status != http.StatusNotFound {
				t.Errorf("%s with never-issued session %s: status %d, body %s; want 404", method, id, status, body)
			}
		}
	}

	s := rawInitialize(t, url)
	if r := s.post(list); r.status != http.StatusOK {
		t.Fatalf("tools/list in a new session: status %d, body %s", r.status, r.body)
	}
	l := s.listen()
	if status, body := rawDo(t, http.MethodDelete, url, s.id); status != http.StatusOK {
		t.Fatalf("DELETE: status %d, body %s; want 200", status, body)
	}
	select {
	case <-l.done:
	case <-time.After(10 * time.Second):
		t.Errorf("the GET stream of a deleted session is still open 10s after DELETE")
	}
	if r := s.post(list); r.status != http.StatusNotFound || !strings.Contains(r.body, "session not found") {
		t.Errorf("tools/list after DELETE: status %d, body %s; want 404 session not found", r.status, r.body)
	}
	if status, _ := rawDo(t, http.MethodGet, url, s.id); status != http.StatusNotFound {
		t.Errorf("GET after DELETE: status %d; want 404", status)
	}
}

const sessionLimitsConfig = `
backends:
  tb: {command: "${TB}", args: [-record, "${REC}"]}
server:
  sessions: {idleTimeout: 3s, max: 20}
compositeTools:
  - name: hello
    description: Echo hello
    steps:
      - {id: say, tool: tb.echo, arguments: {text: hello}}
`

// TestSessionCapAndExpiry fills the session table (server.sessions.max:
// 20): the next initialize is refused with a message naming the setting.
// Then every session but one, whose GET stream stays open, is left idle
// past server.sessions.idleTimeout: those get 404, the busy one still
// works, and exactly 19 new sessions fit again, so the expired ones were
// removed from the table.
func TestSessionCapAndExpiry(t *testing.T) {
	cfg := writeConfig(t, sessionLimitsConfig, filepath.Join(t.TempDir(), "record.txt"))
	url, _ := httpVMCP(t, cfg)
	list := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}

	busy := rawInitialize(t, url)
	busy.listen()
	var idle []*rawSession
	for range 19 {
		idle = append(idle, rawInitialize(t, url))
	}
	r := rawPost(t, url, "", rawInitializeMsg())
	if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, "too many MCP sessions: 20 are open") || !strings.Contains(r.body, "server.sessions.max") {
		t.Fatalf("initialize over the cap: status %d, body %s; want 503 naming server.sessions.max", r.status, r.body)
	}

	// Polling an idle session would keep it alive: wait out the idle
	// timeout (3s) and one sweep interval (a quarter of it), with margin.
	time.Sleep(5 * time.Second)
	for i, s := range idle {
		if r := s.post(list); r.status != http.StatusNotFound {
			t.Errorf("idle session %d after the idle timeout: status %d; want 404", i, r.status)
		}
	}
	if r := busy.post(list); r.status != http.StatusOK {
		t.Errorf("the session with an open GET stream after the idle timeout: status %d, body %s; want 200", r.status, r.body)
	}
	for i := range 19 {
		if r := rawPost(t, url, "", rawInitializeMsg()); r.status != http.StatusOK {
			t.Fatalf("new session %d after the expiry: status %d, body %s; want 200", i, r.status, r.body)
		}
	}
	if r := rawPost(t, url, "", rawInitializeMsg()); r.status != http.StatusServiceUnavailable {
		t.Errorf("initialize over the cap again: status %d; want 503", r.status)
	}
}

const clientsConfig = `
backends:
  tb: {command: "${TB}", args: [-record, "${REC}"]}
server:
  exposeBackendTools: true
compositeTools:
  - name: pick
    description: Pick colours from a multi-select form, then echo
    steps:
      - id: ask
        type: elicitation
        message: Pick colours
        schema:
          type: object
          properties:
            colours: {type: array, minItems: 1, items: {type: string, enum: [red, green, blue]}}
            sizes:
              type: array
              items:
                anyOf:
                  - {const: s, title: Small}
                  - {const: l, title: Large}
            pin: {type: string, pattern: "^[0-9]{4}$"}
          required: [colours]
      - id: say
        tool: tb.echo
        dependsOn: [ask]
        arguments: {text: picked}
  - name: deploy
    description: Deploy to a primary target and others
    parameters:
      type: object
      $defs:
        target:
          type: object
          properties:
            host: {type: string, minLength: 1}
            port: {type: integer, minimum: 1}
          required: [host]
      properties:
        primary: {$ref: "#/$defs/target"}
        others: {type: array, items: {$ref: "#/$defs/target"}}
      required: [primary]
    steps:
      - id: say
        tool: tb.echo
        arguments: {text: "deploy to {{.params.primary.host}}"}
`

// plainConfig has nothing that needs the newer compiler, so the tests that
// use it show their own item failing on older builds.
const plainConfig = `
backends:
  tb: {command: "${TB}", args: [-record, "${REC}"]}
server:
  exposeBackendTools: true
compositeTools:
  - name: announce
    description: Announce a deployment
    parameters:
      host: {type: string, required: true}
      count: {type: integer, default: 0}
    steps:
      - id: say
        tool: tb.echo
        arguments: {text: "deploy to {{.params.host}} & {{.params.count}} others > 0"}
`

// clientsVMCP starts vmcp with config text on stdio and over HTTP and
// returns a client of each (the HTTP one speaks 2026-07-28).
func clientsVMCP(t *testing.T, text string, opts ...client.ClientOption) map[string]*client.Client {
	t.Helper()
	cfg := writeConfig(t, text, filepath.Join(t.TempDir(), "record.txt"))
	url, _ := httpVMCP(t, cfg)
	stdio, _ := stdioVMCP(t, cfg, opts...)
	return map[string]*client.Client{"stdio": stdio, "http": testenv.HTTPClient(t, url, opts...)}
}

// TestMultiSelectAnswers: a form with multi-select fields compiles and is
// sent as it is; a good answer completes the run; a bad one fails the
// elicitation step itself, naming the field and the rule, never the value,
// and the step after it never runs.
func TestMultiSelectAnswers(t *testing.T) {
	answer := &formAnswer{}
	clients := clientsVMCP(t, clientsConfig, client.WithElicitationHandler(answer))
	tests := []struct {
		name    string
		content map[string]any
		want    string // "" for success
	}{
		{"good", map[string]any{"colours": []any{"red", "blue"}, "sizes": []any{"l"}, "pin": "1234"}, ""},
		{"not a choice", map[string]any{"colours": []any{"red", "purple"}},
			`the answer does not match the elicitation schema: field "colours.1" must be one of the values its enum allows`},
		{"empty", map[string]any{"colours": []any{}}, `field "colours" must have at least 1 items`},
		{"not an anyOf const", map[string]any{"colours": []any{"red"}, "sizes": []any{"xl"}}, `field "sizes.0"`},
		{"missing", map[string]any{"sizes": []any{"s"}}, `field "colours" is required`},
		{"secret not echoed", map[string]any{"colours": []any{"red"}, "pin": "s3cret-pin"}, `field "pin" does not match the pattern ^[0-9]{4}$`},
	}
	for _, tr := range []string{"stdio", "http"} {
		for _, tt := range tests {
			t.Run(tr+"/"+tt.name, func(t *testing.T) {
				answer.set(tt.content)
				res := mustCall(t, clients[tr], "pick", nil)
				text := testenv.ResultText(res)
				if tt.want == "" {
					if res.IsError || !strings.Contains(text, `"text":"picked"`) {
						t.Errorf("pick = (isError %v) %s; want the echo of say", res.IsError, text)
					}
					return
				}
				want := tt.want
				if !res.IsError || !strings.Contains(text, want) || !strings.Contains(text, `step "ask"`) {
					t.Errorf("pick = (isError %v) %s; want a failure of step ask containing %s", res.IsError, text, want)
				}
				if strings.Contains(text, "s3cret-pin") || strings.Contains(text, "purple") {
					t.Errorf("pick error %q echoes an answer value", text)
				}
			})
		}
	}
}

// formAnswer accepts every elicitation with the content set last.
type formAnswer struct {
	mu      sync.Mutex
	content map[string]any
}

func (a *formAnswer) set(c map[string]any) {
	a.mu.Lock()
	a.content = c
	a.mu.Unlock()
}

func (a *formAnswer) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: a.content}}, nil
}

// TestDefsParameters: parameters with $defs and $ref compile, are
// advertised as a valid JSON Schema with the $defs, are validated through
// the $refs, and run.
func TestDefsParameters(t *testing.T) {
	cfg := writeConfig(t, clientsConfig, filepath.Join(t.TempDir(), "record.txt"))
	url, _ := httpVMCP(t, cfg)
	stdio, _ := stdioVMCP(t, cfg)

	// The schema as it is on the wire (SDK clients decode it into structs).
	r := rawInitialize(t, url).request(1, "tools/list", map[string]any{})
	var schema json.RawMessage
	if len(r.messages) == 1 {
		res, _ := r.messages[0]["result"].(map[string]any)
		tools, _ := res["tools"].([]any)
		for _, tool := range tools {
			if m, _ := tool.(map[string]any); m["name"] == "deploy" {
				schema, _ = json.Marshal(m["inputSchema"])
			}
		}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatalf("deploy inputSchema %s: %v (tools/list: %s)", schema, err, r.body)
	}
	comp := jsonschema.NewCompiler()
	if err := comp.AddResource("deploy.json", doc); err != nil {
		t.Fatal(err)
	}
	if _, err := comp.Compile("deploy.json"); err != nil {
		t.Errorf("the advertised deploy inputSchema does not compile: %v\n%s", err, schema)
	}
	if !strings.Contains(string(schema), `"$defs":{"target":`) || !strings.Contains(string(schema), `"primary":{"$ref":"#/$defs/target"}`) {
		t.Errorf("deploy inputSchema %s lacks its $defs or $ref", schema)
	}

	for tr, c := range map[string]*client.Client{"stdio": stdio, "http": testenv.HTTPClient(t, url)} {
		t.Run(tr, func(t *testing.T) {
			res := mustCall(t, c, "deploy", map[string]any{"primary": map[string]any{"host": "web1", "port": 443}, "others": []any{map[string]any{"host": "web2"}}})
			if res.IsError || !strings.Contains(testenv.ResultText(res), "deploy to web1") {
				t.Errorf("deploy = (isError %v) %s; want deploy to web1", res.IsError, testenv.ResultText(res))
			}
			res = mustCall(t, c, "deploy", map[string]any{"primary": map[string]any{"port": 0}, "others": []any{map[string]any{"host": ""}}})
			text := testenv.ResultText(res)
			for _, want := range []string{`parameter "primary.host" is required`, `parameter "primary.port" must be >= 1`, `parameter "others.0.host" must be at least 1 characters long`} {
				if !res.IsError || !strings.Contains(text, want) {
					t.Errorf("deploy with bad targets = (isError %v) %s; want it to contain %s", res.IsError, text, want)
				}
			}
		})
	}
}

// TestUndeclaredArgumentsRejected: a misspelt argument is refused, naming
// the declared parameters, before anything runs.
func TestUndeclaredArgumentsRejected(t *testing.T) {
	for tr, c := range clientsVMCP(t, plainConfig) {
		t.Run(tr, func(t *testing.T) {
			res := mustCall(t, c, "announce", map[string]any{"host": "web1", "dryrun": true})
			want := `invalid arguments for announce: parameter "dryrun" is not declared (the declared parameters are count, host)`
			if !res.IsError || testenv.ResultText(res) != want {
				t.Errorf("announce with dryrun = (isError %v) %q; want %q", res.IsError, testenv.ResultText(res), want)
			}
		})
	}
}

// TestResultTextNotHTMLEscaped: "<", ">" and "&" in a result stay as they
// are in the result text (agents read it literally) and in vmcp call's
// output.
func TestResultTextNotHTMLEscaped(t *testing.T) {
	want := `deploy to web1 & 0 others > 0`
	for tr, c := range clientsVMCP(t, plainConfig) {
		res := mustCall(t, c, "announce", map[string]any{"host": "web1"})
		if text := testenv.ResultText(res); res.IsError || !strings.Contains(text, want) {
			t.Errorf("%s: announce result text = %s; want it to contain %q", tr, text, want)
		}
	}
	cfg := writeConfig(t, plainConfig, filepath.Join(t.TempDir(), "record.txt"))
	out, errOut, code := run(t, 90*time.Second, filepath.Dir(cfg), bins.vmcp, "call", "--config", cfg, "announce", "--arg", "host=web1")
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("vmcp call announce: exit %d, stdout %s, stderr %s; want stdout containing %q", code, out, errOut, want)
	}
}

// TestBackendProgressRelayed: a backend tool served as it is passes the
// backend's progress to the caller, in order: over stdio to an mcp-go
// client, and over HTTP on the call's own response stream.
func TestBackendProgressRelayed(t *testing.T) {
	cfg := writeConfig(t, plainConfig, filepath.Join(t.TempDir(), "record.txt"))
	url, _ := httpVMCP(t, cfg)
	stdio, _ := stdioVMCP(t, cfg)
	progress := testenv.RecordProgress(stdio)
	for i := range 5 {
		tok := fmt.Sprintf("count-%d", i)
		res, err := callTool(t, stdio, "tb_count", map[string]any{"n": 5}, &mcp.Meta{ProgressToken: tok})
		if err != nil || res.IsError {
			t.Fatalf("stdio tb_count: %v %v", err, res)
		}
		waitFor(t, "5 progress notifications", func() bool { return len(progress.Of(tok)) >= 5 })
		want := []string{"1/5 item 1", "2/5 item 2", "3/5 item 3", "4/5 item 4", "5/5 item 5"}
		if diff := cmp.Diff(want, progress.Of(tok)); diff != "" {
			t.Errorf("stdio call %d: progress (-want +got):\n%s", i, diff)
		}
	}
	s := rawInitialize(t, url)
	s.listen()
	for i := range 20 {
		tok := fmt.Sprintf("count-http-%d", i)
		r := s.request(i+1, "tools/call", map[string]any{
			"name": "tb_count", "arguments": map[string]any{"n": 5}, "_meta": map[string]any{"progressToken": tok},
		})
		if diff := cmp.Diff([]float64{1, 2, 3, 4, 5}, progressOf(r.messages, tok)); diff != "" {
			t.Errorf("http call %d: progress on its response stream (-want +got):\n%s\nbody: %s", i, diff, r.body)
		}
	}
}
