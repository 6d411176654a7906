package e2e

// vmcp driven by the official MCP TypeScript SDK client
// (@modelcontextprotocol/sdk, pinned in package.json) over stdio and
// streamable HTTP. e2e/sdkclient/client.mjs makes the calls on one
// connection per transport and prints what it saw; the subtests here
// judge it.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// sdkWorkflows extends testConfig with a workflow whose result is its
// elicitation step's answer.
const sdkWorkflows = `
  - name: greet
    description: Ask for a name; the answer is the result
    steps:
      - id: ask
        type: elicitation
        message: What is your name?
        schema:
          type: object
          properties:
            name: {type: string, description: Your name}
          required: [name]
        onDecline: {action: continue}
        onCancel: {action: abort}
`

// sdkProgressCalls is how many calls of fan each transport makes with a
// progress callback. Over HTTP it is the 50: progress sent on the
// standalone GET stream once arrived out of order.
var sdkProgressCalls = map[string]int{"stdio": 10, "http": 50}

// sdkObservations is what client.mjs prints.
type sdkObservations struct {
	Initialize struct {
		Server struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"server"`
		Capabilities map[string]any `json:"capabilities"`
	} `json:"initialize"`
	Tools       json.RawMessage `json:"tools"`
	Call        json.RawMessage `json:"call"`
	Progress    json.RawMessage `json:"progress"`
	Abort       json.RawMessage `json:"abort"`
	Elicitation json.RawMessage `json:"elicitation"`
}

type sdkResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent any            `json:"structuredContent"`
	IsError           bool           `json:"isError"`
	Meta              map[string]any `json:"_meta"`
}

func (r sdkResult) text() string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

type sdkTool struct {
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	InputSchema  map[string]any `json:"inputSchema"`
	OutputSchema map[string]any `json:"outputSchema"`
	Annotations  map[string]any `json:"annotations"`
}

type sdkProgress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total"`
	Message  string  `json:"message"`
}

// sdkSection decodes one section, failing the test when the section threw
// in the script.
func sdkSection(t *testing.T, raw json.RawMessage, v any) {
	t.Helper()
	var failed struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &failed) == nil && failed.Error != "" {
		t.Fatalf("the SDK client threw: %s", failed.Error)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

func TestTypeScriptSDK(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "record.txt")
	cfg := writeConfig(t, testConfig+sdkWorkflows, rec)
	url, _ := httpVMCP(t, cfg)
	script := filepath.Join("e2e", "sdkclient", "client.mjs")
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) {
			args := []string{script, "--record", rec, "--progress-calls", fmt.Sprint(sdkProgressCalls[tr])}
			if tr == "http" {
				args = append(args, "--url", url)
			} else {
				args = append(args, "--", bins.vmcp, "run", "--config", cfg, "--log-level", "warn")
			}
			stdout, stderr, code := run(t, 4*time.Minute, testenv.RepoRoot(), repoNode(t), args...)
			if code != 0 {
				t.Fatalf("client.mjs exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			var obs sdkObservations
			if err := json.Unmarshal([]byte(stdout), &obs); err != nil {
				t.Fatalf("client.mjs printed no JSON (%v)\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
			}
			t.Run("initialize", func(t *testing.T) {
				handshake := obs.Initialize
				if handshake.Server.Name != "vmcp" || handshake.Server.Version == "" || handshake.Capabilities["tools"] == nil {
					t.Errorf("initialize: server %+v, capabilities %v; want vmcp with a version and the tools capability", handshake.Server, handshake.Capabilities)
				}
			})
			t.Run("list", func(t *testing.T) { checkSDKList(t, obs.Tools) })
			t.Run("schemas", func(t *testing.T) { checkSDKSchemas(t, obs.Tools) })
			t.Run("call", func(t *testing.T) { checkSDKCall(t, obs.Call) })
			t.Run("progress", func(t *testing.T) { checkSDKProgress(t, obs.Progress, sdkProgressCalls[tr]) })
			t.Run("abort", func(t *testing.T) { checkSDKAbort(t, obs.Abort, rec) })
			var elicit map[string]json.RawMessage
			sdkSection(t, obs.Elicitation, &elicit)
			for _, action := range []string{"accept", "decline", "cancel"} {
				t.Run("elicitation/"+action, func(t *testing.T) { checkSDKElicitation(t, action, elicit[action]) })
			}
		})
	}
}

func checkSDKList(t *testing.T, raw json.RawMessage) {
	var tools []sdkTool
	sdkSection(t, raw, &tools)
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name)
		if tool.Description == "" {
			t.Errorf("tool %s has no description", tool.Name)
		}
	}
	sort.Strings(names)
	want := withTestbackendTools(append(serverWorkflows, "greet")...)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools/list names (-want +got):\n%s", diff)
	}
}

func checkSDKSchemas(t *testing.T, raw json.RawMessage) {
	var tools []sdkTool
	sdkSection(t, raw, &tools)
	byName := map[string]sdkTool{}
	for _, tool := range tools {
		byName[tool.Name] = tool
	}
	adder := byName["add_then_echo"]
	wantInput := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"a": map[string]any{"type": "number"},
			"b": map[string]any{"type": "number"},
		},
		"required": []any{"a", "b"},
	}
	if diff := cmp.Diff(wantInput, adder.InputSchema); diff != "" {
		t.Errorf("add_then_echo inputSchema (-want +got):\n%s", diff)
	}
	wantOutput := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"sum":  map[string]any{"type": "number"},
			"text": map[string]any{"type": "string"},
		},
		"required": []any{"sum", "text"},
	}
	if diff := cmp.Diff(wantOutput, adder.OutputSchema); diff != "" {
		t.Errorf("add_then_echo outputSchema (-want +got):\n%s", diff)
	}
	if adder.Annotations["title"] != "Adder" || adder.Annotations["readOnlyHint"] != true {
		t.Errorf("add_then_echo annotations = %v; want title Adder, readOnlyHint true", adder.Annotations)
	}
	slow := byName["slow"]
	if diff := cmp.Diff([]any{"label"}, slow.InputSchema["required"]); diff != "" {
		t.Errorf("slow inputSchema.required (-want +got):\n%s", diff)
	}
}

func checkSDKCall(t *testing.T, raw json.RawMessage) {
	var call struct {
		Add     sdkResult `json:"add"`
		Failing sdkResult `json:"failing"`
	}
	sdkSection(t, raw, &call)
	want := map[string]any{"sum": 42.0, "text": "sum is 42"}
	if diff := cmp.Diff(want, call.Add.StructuredContent); diff != "" || call.Add.IsError {
		t.Errorf("add_then_echo {a: 2, b: 40}: isError %v, structuredContent (-want +got):\n%s", call.Add.IsError, diff)
	}
	if got := call.Add.text(); got != `{"sum":42,"text":"sum is 42"}` {
		t.Errorf("add_then_echo text = %q; want the structuredContent as JSON", got)
	}
	if runID, _ := call.Add.Meta["vmcp/runId"].(string); len(runID) != 36 {
		t.Errorf("add_then_echo _meta = %v; want a vmcp/runId UUID", call.Add.Meta)
	}
	if !call.Failing.IsError || !strings.Contains(call.Failing.text(), `step "boom"`) {
		t.Errorf("failing = (isError %v) %q; want an isError result naming step \"boom\"", call.Failing.IsError, call.Failing.text())
	}
}

// checkSDKProgress wants, for every call of fan, the four steps' progress
// notifications 1/4 to 4/4 in order: n1, n2 and n3 in any order, then n4.
func checkSDKProgress(t *testing.T, raw json.RawMessage, calls int) {
	var got []struct {
		IsError  bool          `json:"isError"`
		Progress []sdkProgress `json:"progress"`
	}
	sdkSection(t, raw, &got)
	if len(got) != calls {
		t.Fatalf("%d calls of fan reported; want %d", len(got), calls)
	}
	bad := 0
	for i, call := range got {
		var problems []string
		if call.IsError {
			problems = append(problems, "isError result")
		}
		var steps []string
		for k, p := range call.Progress {
			if p.Progress != float64(k+1) || p.Total != 4 {
				problems = append(problems, fmt.Sprintf("notification %d is %v/%v, want %d/4", k, p.Progress, p.Total, k+1))
			}
			var step string
			fmt.Sscanf(p.Message, "step %s completed", &step)
			if want := fmt.Sprintf("step %s completed (%d/4)", step, k+1); p.Message != want {
				problems = append(problems, fmt.Sprintf("notification %d says %q, want %q", k, p.Message, want))
			}
			steps = append(steps, step)
		}
		if len(steps) != 4 {
			problems = append(problems, fmt.Sprintf("%d notifications, want 4", len(steps)))
		} else {
			first := append([]string(nil), steps[:3]...)
			sort.Strings(first)
			if steps[3] != "n4" || !cmp.Equal(first, []string{"n1", "n2", "n3"}) {
				problems = append(problems, fmt.Sprintf("steps in order %v, want n1, n2, n3 in any order, then n4", steps))
			}
		}
		if len(problems) > 0 {
			bad++
			t.Errorf("call %d of fan: %s; notifications %+v", i, strings.Join(problems, "; "), call.Progress)
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d calls had missing or out-of-order progress", bad, calls)
	}
}

// checkSDKAbort wants the aborted call to reject in the client, the backend
// to see its call cancelled (not finished), and the next call to work.
func checkSDKAbort(t *testing.T, raw json.RawMessage, rec string) {
	var abort struct {
		Label   string `json:"label"`
		Aborted struct {
			Error  string     `json:"error"`
			Result *sdkResult `json:"result"`
		} `json:"aborted"`
		After sdkResult `json:"after"`
	}
	sdkSection(t, raw, &abort)
	if abort.Aborted.Result != nil || !strings.Contains(abort.Aborted.Error, "abort") {
		t.Errorf("the aborted call ended with error %q, result %+v; want an abort error", abort.Aborted.Error, abort.Aborted.Result)
	}
	recorded := func(line string) bool {
		b, _ := os.ReadFile(rec)
		return strings.Contains(string(b), line+"\n")
	}
	waitFor(t, "the backend to see the cancel", func() bool { return recorded("cancelled " + abort.Label) })
	if recorded("done " + abort.Label) {
		t.Errorf("the nap ran to the end although the call was aborted")
	}
	if diff := cmp.Diff(map[string]any{"sum": 2.0, "text": "sum is 2"}, abort.After.StructuredContent); diff != "" || abort.After.IsError {
		t.Errorf("the call after the abort: isError %v, structuredContent (-want +got):\n%s", abort.After.IsError, diff)
	}
}

// checkSDKElicitation wants greet's one question asked as elicitation/create
// with the step's message and schema, and the answer back as ToolHive's
// {action, content}: accept gives the content, decline (onDecline
// continue) completes without it, cancel (onCancel abort) fails the run
// naming the step.
func checkSDKElicitation(t *testing.T, action string, raw json.RawMessage) {
	var got struct {
		Result sdkResult `json:"result"`
		Asked  []struct {
			Message         string         `json:"message"`
			RequestedSchema map[string]any `json:"requestedSchema"`
		} `json:"asked"`
	}
	sdkSection(t, raw, &got)
	wantSchema := map[string]any{
		"type":       "object",
		"properties": map[string]any{"name": map[string]any{"type": "string", "description": "Your name"}},
		"required":   []any{"name"},
	}
	if len(got.Asked) != 1 {
		t.Fatalf("the client was asked %d questions; want 1", len(got.Asked))
	}
	if got.Asked[0].Message != "What is your name?" {
		t.Errorf("the client was asked %q; want %q", got.Asked[0].Message, "What is your name?")
	}
	if diff := cmp.Diff(wantSchema, got.Asked[0].RequestedSchema); diff != "" {
		t.Errorf("requestedSchema (-want +got):\n%s", diff)
	}
	res := got.Result
	switch action {
	case "accept":
		want := map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}
		if diff := cmp.Diff(want, res.StructuredContent); diff != "" || res.IsError {
			t.Errorf("greet answered accept: isError %v %q, structuredContent (-want +got):\n%s", res.IsError, res.text(), diff)
		}
	case "decline":
		want := map[string]any{"action": "decline"}
		if diff := cmp.Diff(want, res.StructuredContent); diff != "" || res.IsError {
			t.Errorf("greet answered decline: isError %v %q, structuredContent (-want +got):\n%s", res.IsError, res.text(), diff)
		}
	case "cancel":
		if !res.IsError || !strings.Contains(res.text(), `workflow greet failed: step "ask"`) {
			t.Errorf("greet answered cancel = (isError %v) %q; want an isError result naming step \"ask\"", res.IsError, res.text())
		}
	}
}
