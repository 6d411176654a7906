package e2e

// vmcp run as a real process, driven by an mcp-go client, against the test
// backend process: results, progress, cancellation, elicitation and bad
// input.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/vmcp-dev/vmcp/internal/testenv"
)

const testConfig = `
backends:
  tb: {command: "${TB}", args: [-record, "${REC}"]}
server:
  exposeBackendTools: true
compositeTools:
  - name: add_then_echo
    description: Add two numbers and echo the sum
    parameters:
      a: {type: number, required: true}
      b: {type: number, required: true}
    annotations: {title: Adder, readOnlyHint: true}
    steps:
      - id: add
        tool: tb.add
        arguments: {a: "{{.params.a}}", b: "{{.params.b}}"}
      - id: say
        tool: tb.echo
        dependsOn: [add]
        arguments: {text: "sum is {{.steps.add.output.sum}}"}
    output:
      properties:
        sum: {type: number, value: "{{.steps.add.output.sum}}"}
        text: {type: string, value: "{{.steps.say.output.text}}"}
      required: [sum, text]
  - name: fan
    description: Three naps in parallel, then a fourth
    steps:
      - {id: n1, tool: tb.sleep, arguments: {ms: 50, label: n1}}
      - {id: n2, tool: tb.sleep, arguments: {ms: 80, label: n2}}
      - {id: n3, tool: tb.sleep, arguments: {ms: 20, label: n3}}
      - {id: n4, tool: tb.sleep, dependsOn: [n1, n2, n3], arguments: {ms: 10, label: n4}}
  - name: slow
    description: Nap for a long time so the client can cancel
    parameters:
      label: {type: string, required: true}
    steps:
      - id: nap
        tool: tb.sleep
        arguments: {ms: 30000, label: "{{.params.label}}"}
  - name: failing
    description: One step that fails
    steps:
      - id: prepare
        tool: tb.echo
        arguments: {text: ready}
      - id: boom
        tool: tb.fail
        dependsOn: [prepare]
        arguments: {message: disk full}
  - name: crashing
    description: The backend dies in the middle of the call
    steps:
      - id: die
        tool: tb.crash
        arguments: {after_ms: 100}
  - name: hanging
    description: The backend never answers
    steps:
      - id: stuck
        tool: tb.hang
        timeout: 1s
  - name: whoami
    description: The backend's process id
    steps:
      - id: pid
        tool: tb.pid
  - name: confirm
    description: Ask before echoing
    parameters:
      text: {type: string, required: true}
    steps:
      - id: ask
        type: elicitation
        message: "Echo {{.params.text}}?"
        schema:
          type: object
          properties:
            note: {type: string}
          required: [note]
        onDecline: {action: skip_remaining}
        onCancel: {action: abort}
      - id: say
        tool: tb.echo
        dependsOn: [ask]
        arguments: {text: "{{.params.text}} ({{.steps.ask.output.content.note}})"}
`

func newTestVMCP(t *testing.T, opts ...client.ClientOption) (*client.Client, string) {
	t.Helper()
	rec := filepath.Join(t.TempDir(), "record.txt")
	c, _ := stdioVMCP(t, writeConfig(t, testConfig, rec), opts...)
	return c, rec
}

// serverWorkflows are the workflows of the shared server config.
var serverWorkflows = []string{"add_then_echo", "confirm", "crashing", "failing", "fan", "hanging", "slow", "whoami"}

func TestToolsListed(t *testing.T) {
	c, _ := newTestVMCP(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	var adder mcp.Tool
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Name == "add_then_echo" {
			adder = tool
		}
	}
	want := withTestbackendTools(serverWorkflows...)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools/list names mismatch (-want +got):\n%s", diff)
	}
	if adder.Annotations.Title != "Adder" || adder.Annotations.ReadOnlyHint == nil || !*adder.Annotations.ReadOnlyHint {
		t.Errorf("add_then_echo annotations = %+v; want title Adder, readOnlyHint true", adder.Annotations)
	}
	if adder.OutputSchema.Type != "object" || len(adder.OutputSchema.Properties) != 2 {
		t.Errorf("add_then_echo outputSchema = %+v; want an object with sum and text", adder.OutputSchema)
	}
}

func TestCompositeResult(t *testing.T) {
	c, _ := newTestVMCP(t)
	res := mustCall(t, c, "add_then_echo", map[string]any{"a": 2, "b": 3.5})
	if res.IsError {
		t.Fatalf("add_then_echo failed: %s", testenv.ResultText(res))
	}
	want := map[string]any{"sum": 5.5, "text": "sum is 5.5"}
	if diff := cmp.Diff(want, res.StructuredContent); diff != "" {
		t.Errorf("structuredContent mismatch (-want +got):\n%s", diff)
	}
	if got := testenv.ResultText(res); got != `{"sum":5.5,"text":"sum is 5.5"}` {
		t.Errorf("text = %q; want the structuredContent as JSON", got)
	}
	if res.Meta == nil || len(fmt.Sprint(res.Meta.AdditionalFields["vmcp/runId"])) != 36 {
		t.Errorf("_meta = %+v; want vmcp/runId", res.Meta)
	}
	// A backend tool served as it is.
	res = mustCall(t, c, "tb_echo", map[string]any{"text": "direct"})
	if diff := cmp.Diff(map[string]any{"text": "direct"}, res.StructuredContent); diff != "" || res.IsError {
		t.Errorf("tb_echo structuredContent mismatch (-want +got):\n%s", diff)
	}
}

// TestProgress checks one notifications/progress per finished step, in
// order, over stdio and over streamable HTTP (20 runs, none lost).
func TestProgress(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "record.txt")
	cfg := writeConfig(t, testConfig, rec)
	url, _ := httpVMCP(t, cfg)
	stdio, _ := stdioVMCP(t, cfg)
	clients := map[string]*client.Client{"stdio": stdio, "http": testenv.HTTPClient(t, url)}
	for _, name := range []string{"stdio", "http"} {
		c := clients[name]
		progress := testenv.RecordProgress(c)
		runs := 20
		if name == "stdio" {
			runs = 3
		}
		for i := range runs {
			tok := fmt.Sprintf("%s-%d", name, i)
			res, err := callTool(t, c, "fan", nil, &mcp.Meta{ProgressToken: tok})
			if err != nil || res.IsError {
				t.Fatalf("%s run %d: %v %v", name, i, err, res)
			}
			if name == "stdio" {
				// stdio notifications share the pipe with the response but
				// are written by another goroutine: allow them a moment.
				waitFor(t, "4 progress notifications", func() bool {
					return len(progress.Of(tok)) >= 4
				})
			}
			n := progress.Of(tok)
			// n1, n2 and n3 finish in any order (a loaded machine may
			// reorder 50ms and 80ms naps), then n4; progress counts 1 to 4.
			var steps []string
			for k, line := range n {
				var p, total int
				var step string
				fmt.Sscanf(line, "%d/%d step %s completed", &p, &total, &step)
				if p != k+1 || total != 4 || !strings.HasSuffix(line, fmt.Sprintf(" completed (%d/4)", k+1)) {
					t.Errorf("%s run %d: notification %d = %q; want progress %d of 4", name, i, k, line, k+1)
				}
				steps = append(steps, step)
			}
			if len(steps) != 4 || steps[3] != "n4" {
				t.Errorf("%s run %d: steps reported %v; want n1, n2, n3 in any order, then n4", name, i, steps)
				continue
			}
			first := append([]string(nil), steps[:3]...)
			sort.Strings(first)
			if diff := cmp.Diff([]string{"n1", "n2", "n3"}, first); diff != "" {
				t.Errorf("%s run %d: first three steps (-want +got):\n%s", name, i, diff)
			}
		}
	}
}

// TestCancel cancels a call mid-run: the backend must see the cancel and
// vmcp must keep serving.
func TestCancel(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "record.txt")
	cfg := writeConfig(t, testConfig, rec)
	url, _ := httpVMCP(t, cfg)
	stdio, _ := stdioVMCP(t, cfg)
	for name, c := range map[string]*client.Client{"stdio": stdio, "http": testenv.HTTPClient(t, url)} {
		t.Run(name, func(t *testing.T) {
			label := "cancel-" + name
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				req := mcp.CallToolRequest{}
				req.Params.Name = "slow"
				req.Params.Arguments = map[string]any{"label": label}
				_, err := c.CallTool(ctx, req)
				errc <- err
			}()
			recorded := func(line string) bool {
				b, _ := os.ReadFile(rec)
				return strings.Contains(string(b), line+"\n")
			}
			waitFor(t, "the backend to start the nap", func() bool { return recorded("start " + label) })
			cancel()
			if err := <-errc; err == nil {
				t.Errorf("CallTool returned no error after its context was cancelled")
			}
			waitFor(t, "the backend to see the cancel", func() bool { return recorded("cancelled " + label) })
			if recorded("done " + label) {
				t.Errorf("the nap ran to the end although the call was cancelled")
			}
			res := mustCall(t, c, "add_then_echo", map[string]any{"a": 1, "b": 1})
			if res.IsError {
				t.Errorf("vmcp stopped serving after a cancel: %s", testenv.ResultText(res))
			}
		})
	}
}

type elicitAnswer struct {
	action  mcp.ElicitationResponseAction
	content map[string]any
	message chan string
}

func (a *elicitAnswer) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.message <- req.Params.Message
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: a.action, Content: a.content}}, nil
}

func TestElicitation(t *testing.T) {
	tests := []struct {
		name      string
		answer    *elicitAnswer
		wantError bool
		wantText  string
	}{
		{"accept", &elicitAnswer{action: mcp.ElicitationResponseActionAccept, content: map[string]any{"note": "yes please"}},
			false, `{"text":"hello (yes please)"}`},
		{"decline skips the rest", &elicitAnswer{action: mcp.ElicitationResponseActionDecline}, false, `{"result":null}`},
		{"cancel aborts", &elicitAnswer{action: mcp.ElicitationResponseActionCancel}, true,
			`workflow confirm failed: step "ask" (`},
		{"client without the capability", nil, true, "the calling MCP client did not declare the elicitation capability"},
	}
	// Over HTTP the mcp-go client speaks MCP 2026-07-28, so vmcp asks with
	// input_required results; over stdio it sends elicitation/create.
	url, _ := httpVMCP(t, writeConfig(t, testConfig, filepath.Join(t.TempDir(), "record.txt")))
	for _, tr := range []string{"stdio", "http"} {
		for _, tt := range tests {
			t.Run(tr+"/"+tt.name, func(t *testing.T) {
				var opts []client.ClientOption
				if tt.answer != nil {
					tt.answer.message = make(chan string, 1)
					opts = append(opts, client.WithElicitationHandler(tt.answer))
				}
				var c *client.Client
				if tr == "http" {
					c = testenv.HTTPClient(t, url, opts...)
				} else {
					c, _ = newTestVMCP(t, opts...)
				}
				elicitOnce(t, c, tt.answer, tt.wantError, tt.wantText)
			})
		}
	}
}

// elicitOnce calls confirm and checks the result and the question the
// client was asked.
func elicitOnce(t *testing.T, c *client.Client, answer *elicitAnswer, wantError bool, wantText string) {
	t.Helper()
	res := mustCall(t, c, "confirm", map[string]any{"text": "hello"})
	if res.IsError != wantError || !strings.Contains(testenv.ResultText(res), wantText) {
		t.Errorf("confirm = (isError %v) %q; want (isError %v) containing %q", res.IsError, testenv.ResultText(res), wantError, wantText)
	}
	if answer != nil {
		if msg := <-answer.message; msg != "Echo hello?" {
			t.Errorf("the client was asked %q; want %q", msg, "Echo hello?")
		}
	}
}

// TestBadInput sends one bad thing after another to one vmcp process: each
// gets a clear error and the next call still works. At the end no backend
// process survives vmcp.
func TestBadInput(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "record.txt")
	cfg := writeConfig(t, testConfig, rec)
	c, stderr := stdioVMCP(t, cfg)
	pidOf := func() int {
		res := mustCall(t, c, "whoami", nil)
		m, _ := res.StructuredContent.(map[string]any)
		pid, ok := m["pid"].(float64)
		if res.IsError || !ok {
			t.Fatalf("whoami = %s", testenv.ResultText(res))
		}
		return int(pid)
	}
	firstPID := pidOf()

	tests := []struct {
		name      string
		tool      string
		args      map[string]any
		wantProto string // a JSON-RPC error containing this
		wantText  string // or an isError result containing this
	}{
		{"unknown tool", "no_such_tool", nil, "no_such_tool", ""},
		{"missing argument", "add_then_echo", map[string]any{"a": 1}, "", `invalid arguments for add_then_echo`},
		{"wrong argument type", "add_then_echo", map[string]any{"a": "one", "b": 2}, "", `invalid arguments for add_then_echo`},
		{"failing workflow", "failing", nil, "", `workflow failing failed: step "boom" (`},
		{"backend crashes mid-run", "crashing", nil, "", `workflow crashing failed: step "die" (`},
		{"backend hangs past the step timeout", "hanging", nil, "", `workflow hanging failed: step "stuck" (`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			res, err := callTool(t, c, tt.tool, tt.args, nil)
			switch {
			case tt.wantProto != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantProto) {
					t.Errorf("call %s: error %v, result %v; want a protocol error mentioning %q", tt.tool, err, res, tt.wantProto)
				}
			case err != nil:
				t.Errorf("call %s: protocol error %v; want an isError result", tt.tool, err)
			case !res.IsError || !strings.Contains(testenv.ResultText(res), tt.wantText):
				t.Errorf("call %s = (isError %v) %q; want isError containing %q", tt.tool, res.IsError, testenv.ResultText(res), tt.wantText)
			default:
				t.Logf("%s: %s (%s)", tt.name, testenv.ResultText(res), time.Since(start).Round(time.Millisecond))
			}
			// The server keeps serving.
			res = mustCall(t, c, "add_then_echo", map[string]any{"a": 1, "b": 2})
			if res.IsError {
				t.Errorf("after %s, add_then_echo failed: %s", tt.name, testenv.ResultText(res))
			}
		})
	}
	if strings.Contains(stderr.String(), "panic") {
		t.Errorf("vmcp logged a panic:\n%s", stderr.String())
	}
	// The crash replaced the first backend process; the hang left the
	// second one busy. Closing vmcp must end whichever is running.
	lastPID := pidOf()
	if lastPID == firstPID {
		t.Errorf("the backend pid did not change after the crash (pid %d)", firstPID)
	}
	stdioShutdown[c]()
	waitGone(t, firstPID, "the crashed backend")
	waitGone(t, lastPID, "the restarted backend")
}
