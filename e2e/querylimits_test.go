package e2e

// A query that would build more than the run allows, through a real vmcp
// run process: pad_left('a', `1e12`) asks for a terabyte, and before the
// fix the Go runtime's "fatal error: runtime: out of memory" took the
// whole server down with the one query. Now the step fails with an error
// that names the function, the argument and the limit, and the server
// answers the next call.

import (
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

const queryLimitsConfig = `
backends:
  tb: {command: "${TB}"}
authoring: {enabled: true, dir: "${DIR}/authored"}
limits: {maxResultBytes: 1048576}
compositeTools:
  - name: pad
    description: Pad a text to a width
    parameters:
      text: {type: string, required: true}
      width: {type: number, required: true}
    steps:
      - id: say
        tool: tb.echo
        arguments: {text: "{{query \"pad_left(text, width, '.')\" .params}}"}
`

// padDraft is an authored draft whose one query asks for a terabyte.
const padDraft = "name: pad_huge\ndescription: Pad a letter to a terabyte\nsteps:\n" +
	"  - id: say\n    tool: tb.echo\n    arguments: {text: \"{{query \\\"pad_left('a', `1e12`)\\\" .}}\"}\n"

func TestQueryOverLimitFailsTheStep(t *testing.T) {
	c, stderr := stdioVMCP(t, writeConfig(t, queryLimitsConfig, ""))
	const padOver = "pad_left(): the padded string would be over the query limit of 1048576 bytes (limits.maxResultBytes): its width (argument 2) asks for that many bytes; pad to a smaller width, or raise limits.maxResultBytes in vmcp.yaml"
	calls := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"an authored draft with pad_left('a', `1e12`)", "vmcp_workflow_run", map[string]any{"source": padDraft, "arguments": map[string]any{}}, padOver},
		{"a width of 1e12 from a parameter", "pad", map[string]any{"text": "s3cret", "width": 1e12}, padOver},
		{"a width just over the run's limit", "pad", map[string]any{"text": "s3cret", "width": 1048577}, padOver},
		{"a width that is not whole", "pad", map[string]any{"text": "s3cret", "width": 2.5},
			"pad_left(): its width (argument 2) must be a whole number from 0 up, but it is not a whole number; round it with floor() or ceil()"},
	}
	for _, tt := range calls {
		res, err := callTool(t, c, tt.tool, tt.args, nil)
		if err != nil {
			t.Fatalf("%s: call %s: %v (vmcp died?)\nstderr:\n%.3000s", tt.name, tt.tool, err, stderr.String())
		}
		text := testenv.ResultText(res)
		t.Logf("%s: %s", tt.name, text)
		if !res.IsError || !strings.Contains(text, tt.want) {
			t.Errorf("%s: call %s = (isError %v) %.500q; want an error with %q", tt.name, tt.tool, res.IsError, text, tt.want)
		}
		if strings.Contains(text, "s3cret") {
			t.Errorf("%s: the error echoes the text: %.300s", tt.name, text)
		}
	}
	// The server is still up, and a query within the limit runs.
	res := mustCall(t, c, "pad", map[string]any{"text": "ab", "width": 5})
	if res.IsError || !strings.Contains(testenv.ResultText(res), "...ab") {
		t.Errorf("pad(ab, 5) = (isError %v) %.300s; want ...ab", res.IsError, testenv.ResultText(res))
	}
	if s := stderr.String(); strings.Contains(s, "fatal error") || strings.Contains(s, "panic") {
		t.Errorf("vmcp logged a crash:\n%.3000s", s)
	}
}
