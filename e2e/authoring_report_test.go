package e2e

// vmcp_workflow_run's report against a real `vmcp run` (stdio) with a real
// MCP client (mcp-go) and real backends (the test backend, and
// server-everything, whose get-structured-content tool declares an output
// schema). A draft that explores data (a loop over 40 items with long
// texts) and has a loop whose iterations all fail: the report shows each
// step's status, the failed iterations' errors, the loop counts and the
// outputs' sizes, with the outputs sampled; full: true returns them
// whole; the result's text is a summary for a client on 2025-06-18 or
// later, and the JSON too for a 2025-03-26 client. The sizes of each
// result, as the client decoded it, are logged.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

const reportConfig = `
backends:
  tb: {command: "${TB}"}
  everything: {command: "${EVERYTHING}"}
authoring: {enabled: true}
`

// exploreDraft lists 40 items, each echoed with a 250-character text, and
// runs a loop whose two iterations fail.
func exploreDraft() string {
	items := make([]string, 40)
	for i := range items {
		items[i] = fmt.Sprintf("pod-%02d", i)
	}
	return fmt.Sprintf(`name: explore
description: List the items, then a loop that fails
steps:
  - id: list
    type: forEach
    collection: [%s]
    itemVar: name
    step: {tool: tb.echo, arguments: {text: "{{.forEach.name}} %s"}}
  - id: broken
    type: forEach
    collection: [a, b]
    onError: {action: continue}
    step: {tool: tb.fail, arguments: {message: "no {{.forEach.item}}"}}
`, strings.Join(items, ", "), strings.Repeat("x", 250))
}

// runReport is the part of the report the test reads.
type runReport struct {
	Status      string `json:"status"`
	OutputBytes int    `json:"outputBytes"`
	Sampled     bool   `json:"sampled"`
	Steps       []struct {
		ID               string `json:"id"`
		Status           string `json:"status"`
		OutputBytes      int    `json:"outputBytes"`
		Loop             *struct{ Count, Completed, Failed, Skipped int }
		FailedIterations []struct {
			Index int    `json:"index"`
			Error string `json:"error"`
		} `json:"failedIterations"`
		Output struct {
			Iterations []any `json:"iterations"`
		} `json:"output"`
	} `json:"steps"`
}

func resultBytes(t *testing.T, res *mcp.CallToolResult) int {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

func TestDraftRunReport(t *testing.T) {
	cfg := writeConfig(t, strings.ReplaceAll(reportConfig, "${EVERYTHING}", testenv.NodeBin(t, "mcp-server-everything")), "")
	c, stderr := stdioVMCP(t, cfg)
	args := map[string]any{"source": exploreDraft()}

	res := mustCall(t, c, "vmcp_workflow_run", args)
	var rep runReport
	structured(t, res, &rep)
	if len(rep.Steps) != 2 || !rep.Sampled {
		t.Fatalf("report = %s; want two steps, sampled\nstderr:\n%s", testenv.ResultText(res), stderr.String())
	}
	list, broken := rep.Steps[0], rep.Steps[1]
	if list.Status != "completed" || list.Loop == nil || list.Loop.Count != 40 || list.Loop.Completed != 40 {
		t.Errorf("list = %+v; want completed, a loop of 40 completed items", list)
	}
	if n := len(list.Output.Iterations); n != 4 {
		t.Errorf("list's sampled output has %d iterations; want the first 3 and a note of the rest", n)
	}
	if note, _ := list.Output.Iterations[len(list.Output.Iterations)-1].(string); note != "… 37 more items (40 in all)" {
		t.Errorf("list's sample ends with %q; want the count of what it left out", note)
	}
	if broken.Loop == nil || broken.Loop.Failed != 2 || len(broken.FailedIterations) != 2 ||
		!strings.Contains(broken.FailedIterations[1].Error, "no b") {
		t.Errorf("broken = %+v; want 2 failed iterations, the second saying \"no b\"", broken)
	}
	// The text is a summary, not the JSON again (mcp-go negotiates 2025-11-25).
	text := testenv.ResultText(res)
	if len(res.Content) != 1 || strings.Contains(text, `"steps"`) || !strings.Contains(text, "loop broken: 2 items, 2 failed") {
		t.Errorf("text content = %q; want a one-block summary naming the failed loop", text)
	}
	// The timeline counts the iterations too.
	tl, _ := res.Meta.AdditionalFields["vmcp/timeline"].([]any)
	if len(tl) != 2 || fmt.Sprint(tl[1].(map[string]any)["loop"]) != "map[completed:0 count:2 failed:2 skipped:0]" {
		t.Errorf("_meta timeline = %v; want broken's loop counts", tl)
	}

	args["full"] = true
	whole := mustCall(t, c, "vmcp_workflow_run", args)
	var full runReport
	structured(t, whole, &full)
	if full.Sampled || len(full.Steps[0].Output.Iterations) != 40 || full.Steps[0].OutputBytes != list.OutputBytes {
		t.Errorf("full: true: sampled %v, %d iterations, %d bytes; want 40 whole iterations of %d bytes", full.Sampled, len(full.Steps[0].Output.Iterations), full.Steps[0].OutputBytes, list.OutputBytes)
	}
	if resultBytes(t, res)*3 > resultBytes(t, whole) {
		t.Errorf("the sampled result is %d bytes, the whole one %d; want the sample under a third", resultBytes(t, res), resultBytes(t, whole))
	}

	// The output schema a backend declares.
	bt := mustCall(t, c, "vmcp_backend_tools", map[string]any{"backend": "everything", "query": "structured"})
	var tools struct {
		Tools []struct {
			Ref          string         `json:"ref"`
			OutputSchema map[string]any `json:"outputSchema"`
		} `json:"tools"`
	}
	structured(t, bt, &tools)
	if len(tools.Tools) != 1 || tools.Tools[0].OutputSchema["properties"] == nil {
		t.Errorf("vmcp_backend_tools {everything, structured} = %s; want get-structured-content with its output schema", testenv.ResultText(bt))
	}

	// A client of a revision before structuredContent gets the JSON as text.
	old, _ := stdioVMCP(t, cfg, client.WithProtocolVersion(mcp.ProtocolVersion20250326))
	delete(args, "full")
	oldRes := mustCall(t, old, "vmcp_workflow_run", args)
	var fromText runReport
	if len(oldRes.Content) != 2 || json.Unmarshal([]byte(oldRes.Content[1].(mcp.TextContent).Text), &fromText) != nil || len(fromText.Steps) != 2 {
		t.Errorf("2025-03-26 client: content = %v; want the summary and the report's JSON", oldRes.Content)
	}
	t.Logf("vmcp_workflow_run result sizes (JSON as decoded): sampled %d bytes, full %d bytes, sampled for a 2025-03-26 client %d bytes",
		resultBytes(t, res), resultBytes(t, whole), resultBytes(t, oldRes))
}
