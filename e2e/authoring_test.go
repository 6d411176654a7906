package e2e

// The authoring loop end to end: a real mcp-go client acts as the agent
// against a real `vmcp run` process, over stdio and over streamable HTTP.
// It lists the backend tools, checks a draft with a racy read and a wrong
// argument name and gets both diagnostics with lines and fixes, saves the
// fixed draft and receives notifications/tools/list_changed, calls the new
// tool, restarts vmcp (the tool is still there), replaces it (version 2),
// calls it, and deletes it (list_changed again, the tool is gone). Over
// HTTP the store is SQLite and a token without the author scope gets 403
// when it saves; over stdio the store is authoring.dir.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// Ports of the authoring tests.
const authorPortLo, authorPortHi = 17500, 17599

const authoringConfigStdio = `
backends:
  tb: {command: "${TB}"}
authoring: {enabled: true, dir: "${DIR}/authored"}
`

const authoringConfigHTTP = `
backends:
  tb: {command: "${TB}"}
authoring: {enabled: true}
state: {store: sqlite, path: "${DIR}/state.db"}
server:
  auth:
    tokens:
      - {token: author-token, scopes: [run, author]}
      - {token: run-token, scopes: [run]}
`

// The draft: second reads first without depending on it (a racy read)
// and passes txt where tb.echo takes text.
const racyDraft = `name: greet
description: Greet someone, twice
parameters:
  who: {type: string, required: true}
steps:
  - id: first
    tool: tb.echo
    arguments: {text: "hello {{.params.who}}"}
  - id: second
    tool: tb.echo
    arguments:
      txt: "{{.steps.first.output.text}} again"
`

const fixedDraft = `name: greet
description: Greet someone, twice
parameters:
  who: {type: string, required: true}
steps:
  - id: first
    tool: tb.echo
    arguments: {text: "hello {{.params.who}}"}
  - id: second
    tool: tb.echo
    dependsOn: [first]
    arguments:
      text: "{{.steps.first.output.text}} again"
`

// agent is an MCP client with a counter of list_changed notifications.
type agent struct {
	*client.Client
	listChanged atomic.Int32
}

func newAgent(c *client.Client) *agent {
	a := &agent{Client: c}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			a.listChanged.Add(1)
		}
	})
	return a
}

// waitListChanged waits until the agent has seen n list_changed
// notifications in all.
func (a *agent) waitListChanged(t *testing.T, n int32, after string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for a.listChanged.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("no notifications/tools/list_changed after %s (got %d, want %d)", after, a.listChanged.Load(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (a *agent) tools(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := a.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// structured decodes a result's structured content into v.
func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

type checkOut struct {
	OK          bool `json:"ok"`
	Diagnostics []struct {
		Severity, Code, Path, Message, Detail string
		Line, Col                             int
	} `json:"diagnostics"`
	Plan *struct {
		Levels       [][]string `json:"levels"`
		CriticalPath []string   `json:"critical_path"`
	} `json:"plan"`
}

// authoringLoop is the agent's session; restart starts vmcp again on the
// same store and returns a new agent.
func authoringLoop(t *testing.T, a *agent, restart func() *agent) {
	if !slices.Contains(a.tools(t), "vmcp_workflow_save") {
		t.Fatalf("tools/list = %v; want the authoring tools", a.tools(t))
	}
	// 1. The backend tools, with their schemas.
	res := mustCall(t, a.Client, "vmcp_backend_tools", map[string]any{"backend": "tb", "query": "echo"})
	var bt struct {
		Tools []struct {
			Ref         string         `json:"ref"`
			InputSchema map[string]any `json:"inputSchema"`
		} `json:"tools"`
	}
	structured(t, res, &bt)
	if len(bt.Tools) != 1 || bt.Tools[0].Ref != "tb.echo" || bt.Tools[0].InputSchema["properties"] == nil {
		t.Fatalf("vmcp_backend_tools {backend: tb, query: echo} = %s; want tb.echo with its input schema", testenv.ResultText(res))
	}

	// 2. The racy draft: both diagnostics, with lines and fixes.
	res = mustCall(t, a.Client, "vmcp_workflow_check", map[string]any{"source": racyDraft})
	var ch checkOut
	structured(t, res, &ch)
	if ch.OK {
		t.Fatalf("check(racy draft) ok; want errors: %s", testenv.ResultText(res))
	}
	found := map[string]bool{}
	for _, d := range ch.Diagnostics {
		text := d.Message + " " + d.Detail
		switch {
		case d.Code == "missing_dependency" && d.Line == 12 && strings.Contains(text, "dependsOn") && strings.Contains(text, "first"):
			found["racy"] = true
		case d.Code == "unknown_argument" && d.Line == 12 && strings.Contains(text, "text"):
			found["argument"] = true
		}
	}
	if !found["racy"] || !found["argument"] {
		t.Fatalf("check(racy draft) diagnostics = %s; want missing_dependency at line 12 naming dependsOn [first], and unknown_argument at line 12 suggesting text", testenv.ResultText(res))
	}
	// Saving it is refused with the same diagnostics, and stores nothing.
	res, err := callTool(t, a.Client, "vmcp_workflow_save", map[string]any{"source": racyDraft}, nil)
	if err != nil || !res.IsError || !strings.Contains(testenv.ResultText(res), "missing_dependency") {
		t.Fatalf("save(racy draft) = %v, %v; want an isError result with the diagnostics", testenv.ResultText(res), err)
	}

	// 3. The fixed draft checks clean, with its plan, and saves.
	res = mustCall(t, a.Client, "vmcp_workflow_check", map[string]any{"source": fixedDraft})
	structured(t, res, &ch)
	if !ch.OK || ch.Plan == nil || !slices.Equal(ch.Plan.CriticalPath, []string{"first", "second"}) {
		t.Fatalf("check(fixed draft) = %s; want ok with critical path [first second]", testenv.ResultText(res))
	}
	// Run once without saving: a draft run, not served afterwards.
	res = mustCall(t, a.Client, "vmcp_workflow_run", map[string]any{"source": fixedDraft, "arguments": map[string]any{"who": "bob"}})
	if draftRunOutput(t, res)["text"] != "hello bob again" || res.Meta == nil || res.Meta.AdditionalFields["vmcp/draft"] != true {
		t.Fatalf("run(fixed draft) = %s, meta %+v; want hello bob again, marked draft", testenv.ResultText(res), res.Meta)
	}
	if slices.Contains(a.tools(t), "greet") {
		t.Fatal("greet is served after running it as a draft; a draft run must not save it")
	}
	before := a.listChanged.Load()
	res = mustCall(t, a.Client, "vmcp_workflow_save", map[string]any{"source": fixedDraft})
	var saved struct {
		Name    string `json:"name"`
		Version int    `json:"version"`
	}
	structured(t, res, &saved)
	if saved.Name != "greet" || saved.Version != 1 {
		t.Fatalf("save(fixed draft) = %s; want {name: greet, version: 1}", testenv.ResultText(res))
	}
	a.waitListChanged(t, before+1, "saving greet")

	// 4. The new tool.
	callGreet := func(a *agent, who, want, version string) {
		t.Helper()
		res := mustCall(t, a.Client, "greet", map[string]any{"who": who})
		if !strings.Contains(testenv.ResultText(res), want) || res.Meta.AdditionalFields["vmcp/workflowVersion"] != version {
			t.Fatalf("greet {who: %s} = %s, meta %v; want %q from version %s", who, testenv.ResultText(res), res.Meta.AdditionalFields, want, version)
		}
	}
	callGreet(a, "ada", "hello ada again", "1")
	res = mustCall(t, a.Client, "vmcp_workflow_run", map[string]any{"name": "greet", "arguments": map[string]any{"who": "cy"}})
	if draftRunOutput(t, res)["text"] != "hello cy again" || res.Meta.AdditionalFields["vmcp/draft"] != nil {
		t.Fatalf("vmcp_workflow_run {name: greet} = %s; want the saved workflow's result, not a draft", testenv.ResultText(res))
	}

	// 5. After a restart the tool is still there.
	a = restart()
	if !slices.Contains(a.tools(t), "greet") {
		t.Fatalf("after a restart tools/list = %v; want greet", a.tools(t))
	}
	callGreet(a, "ada", "hello ada again", "1")

	// 6. Replace: refused without replace, version 2 with it.
	res, err = callTool(t, a.Client, "vmcp_workflow_save", map[string]any{"source": fixedDraft}, nil)
	if err != nil || !res.IsError || !strings.Contains(testenv.ResultText(res), "replace: true") {
		t.Fatalf("save over version 1 without replace = %v, %v; want an error saying replace: true", testenv.ResultText(res), err)
	}
	v2 := strings.Replace(fixedDraft, "again", "and again", 1)
	before = a.listChanged.Load()
	res = mustCall(t, a.Client, "vmcp_workflow_save", map[string]any{"source": v2, "replace": true})
	structured(t, res, &saved)
	if saved.Version != 2 {
		t.Fatalf("save with replace = %s; want version 2", testenv.ResultText(res))
	}
	a.waitListChanged(t, before+1, "replacing greet")
	callGreet(a, "ada", "hello ada and again", "2")
	res = mustCall(t, a.Client, "vmcp_workflow_get", map[string]any{"name": "greet", "version": 1})
	var got struct {
		Source string `json:"source"`
	}
	structured(t, res, &got)
	if !strings.Contains(got.Source, "} again") {
		t.Fatalf("get {greet, version 1} = %s; want version 1's source", testenv.ResultText(res))
	}

	// 7. Delete: list_changed, the tool is gone.
	before = a.listChanged.Load()
	mustCall(t, a.Client, "vmcp_workflow_delete", map[string]any{"name": "greet"})
	a.waitListChanged(t, before+1, "deleting greet")
	if slices.Contains(a.tools(t), "greet") {
		t.Fatalf("after delete tools/list = %v; want greet gone", a.tools(t))
	}
	res = mustCall(t, a.Client, "vmcp_workflow_list", nil)
	var listed struct {
		Workflows []struct {
			Name string `json:"name"`
		} `json:"workflows"`
	}
	structured(t, res, &listed)
	if len(listed.Workflows) != 0 || strings.Contains(testenv.ResultText(res), "greet") {
		t.Fatalf("vmcp_workflow_list after delete = %s; want greet gone", testenv.ResultText(res))
	}

	// The guide, the schema and the prompt are there to read.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, uri := range []string{"vmcp://docs/workflows", "vmcp://schema/workflow.json"} {
		rr, err := a.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
		if err != nil || len(rr.Contents) != 1 {
			t.Fatalf("resources/read %s = %v, %v; want one content", uri, rr, err)
		}
		if tc, ok := rr.Contents[0].(mcp.TextResourceContents); !ok || len(tc.Text) < 100 {
			t.Errorf("resources/read %s = %+v; want its text", uri, rr.Contents[0])
		}
	}
	pr, err := a.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "design_workflow", Arguments: map[string]string{"goal": "greet people"}}})
	if err != nil || len(pr.Messages) != 1 || !strings.Contains(fmt.Sprint(pr.Messages[0].Content), "greet people") {
		t.Fatalf("prompts/get design_workflow = %+v, %v; want one message with the goal", pr, err)
	}
}

func TestAuthoringLoopStdio(t *testing.T) {
	cfg := writeConfig(t, authoringConfigStdio, "")
	start := func() *agent {
		c, _ := stdioVMCP(t, cfg)
		return newAgent(c)
	}
	first := start()
	authoringLoop(t, first, func() *agent {
		stdioShutdown[first.Client]()
		return start()
	})
}

func TestAuthoringLoopHTTP(t *testing.T) {
	cfg := writeConfig(t, authoringConfigHTTP, "")
	var stop func()
	var url string
	start := func() *agent {
		url, stop = authoringHTTP(t, cfg)
		return newAgent(authoringClient(t, url, "author-token"))
	}
	a := start()

	// Without the author scope, saving is an HTTP 403 naming the scope:
	// an MCP client gets the message, the raw answer has the status.
	runner := authoringClient(t, url, "run-token")
	_, err := callTool(t, runner, "vmcp_workflow_save", map[string]any{"source": fixedDraft}, nil)
	if err == nil || !strings.Contains(err.Error(), "needs the author scope") {
		t.Fatalf("save with a run-only token = %v; want an error naming the missing author scope", err)
	}
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"vmcp_workflow_save","arguments":{"source":"x"}}}`
	for token, want := range map[string]int{"run-token": http.StatusForbidden, "nope": http.StatusUnauthorized} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(call))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || (want == http.StatusForbidden && !strings.Contains(string(body), `"missingScope":"author"`)) {
			t.Fatalf("POST tools/call vmcp_workflow_save with %s = %d %s; want %d (403 naming the missing scope)", token, resp.StatusCode, body, want)
		}
	}
	authoringLoop(t, a, func() *agent {
		stop()
		return start()
	})
	// The run records the version it ran, in the API too (to the token
	// that ran it, its owner).
	req, _ := http.NewRequest("GET", strings.TrimSuffix(url, "/mcp")+"/api/v1/runs?workflow=greet", nil)
	req.Header.Set("Authorization", "Bearer author-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Runs []struct {
			WorkflowVersion string `json:"workflowVersion"`
			Draft           bool   `json:"draft"`
		} `json:"runs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range list.Runs {
		seen[r.WorkflowVersion] = true
		seen[fmt.Sprint("draft=", r.Draft)] = true
	}
	if !seen["1"] || !seen["2"] || !seen["draft=true"] {
		t.Errorf("GET /api/v1/runs?workflow=greet = %+v; want runs of versions 1 and 2 and a draft run", list.Runs)
	}
}

// TestAuthoringOff: without authoring.enabled none of the tools,
// resources or prompts exist, and a workflow run records its files
// version.
func TestAuthoringOff(t *testing.T) {
	cfg := writeConfig(t, `
backends:
  tb: {command: "${TB}"}
compositeTools:
  - name: hello
    description: Say hello
    steps:
      - {id: say, tool: tb.echo, arguments: {text: hi}}
`, "")
	c, _ := stdioVMCP(t, cfg)
	a := &agent{Client: c}
	for _, name := range a.tools(t) {
		if strings.HasPrefix(name, "vmcp_workflow") || name == "vmcp_backend_tools" {
			t.Errorf("with authoring off, tools/list has %s", name)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if rr, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "vmcp://docs/workflows"}}); err == nil {
		t.Errorf("with authoring off, resources/read vmcp://docs/workflows = %+v; want an error", rr)
	}
	res := mustCall(t, c, "hello", nil)
	if v, _ := res.Meta.AdditionalFields["vmcp/workflowVersion"].(string); !strings.HasPrefix(v, "sha256:") {
		t.Errorf("hello's _meta version = %v; want the content hash of a workflow from files", res.Meta.AdditionalFields)
	}
}

// authoringClient connects an agent with a bearer token, listening for
// server notifications (list_changed) on the GET stream.
func authoringClient(t *testing.T, url, token string) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}),
		transport.WithContinuousListening())
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// authoringHTTP starts `vmcp run --transport http` on a port of the
// authoring range and returns the MCP URL and a function that stops it
// (SIGTERM, a clean exit within 10s).
func authoringHTTP(t *testing.T, cfg string) (string, func()) {
	t.Helper()
	url, _, stop := startHTTPVMCP(t, cfg, authorPortLo, authorPortHi)
	return url, stop
}

// TestWorkflowsCLIRemote: `vmcp workflows` against a running server goes
// through its authoring tools, with the same outputs and errors, and a
// token without the author scope is refused.
func TestWorkflowsCLIRemote(t *testing.T) {
	cfg := writeConfig(t, authoringConfigHTTP, "")
	url, _ := authoringHTTP(t, cfg)
	base := strings.TrimSuffix(url, "/mcp")
	dir := t.TempDir()
	for name, src := range map[string]string{"racy.yaml": racyDraft, "greet.yaml": fixedDraft} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cli := func(token string, args ...string) (string, string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bins.vmcp, append([]string{"workflows", "--url", base}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "VMCP_TOKEN="+token)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return stdout.String(), stderr.String(), code
	}
	_, stderr, code := cli("author-token", "save", "racy.yaml")
	if code != 1 || !strings.Contains(stderr, "racy.yaml:12:") || !strings.Contains(stderr, "(missing_dependency)") || !strings.Contains(stderr, "(unknown_argument)") {
		t.Fatalf("workflows save racy.yaml = exit %d, stderr:\n%s\nwant exit 1 with both diagnostics at line 12", code, stderr)
	}
	if out, stderr, code := cli("author-token", "save", "greet.yaml"); code != 0 || out != "saved greet version 1\n" {
		t.Fatalf("workflows save greet.yaml = exit %d %q %s; want saved greet version 1", code, out, stderr)
	}
	if out, _, code := cli("author-token", "list"); code != 0 || !regexp.MustCompile(`(?m)^greet +1 +authored `).MatchString(out) {
		t.Fatalf("workflows list = exit %d:\n%s\nwant greet version 1, authored", code, out)
	}
	if out, _, code := cli("author-token", "get", "greet"); code != 0 || out != fixedDraft {
		t.Fatalf("workflows get greet = exit %d:\n%s\nwant the saved source", code, out)
	}
	if _, stderr, code := cli("run-token", "save", "greet.yaml"); code != 1 || !strings.Contains(stderr, "needs the author scope") {
		t.Fatalf("workflows save with a run-only token = exit %d, %s; want exit 1 naming the author scope", code, stderr)
	}
	if out, stderr, code := cli("author-token", "delete", "greet"); code != 0 || !strings.HasPrefix(out, "deleted greet (version 1") {
		t.Fatalf("workflows delete greet = exit %d %q %s", code, out, stderr)
	}
}
