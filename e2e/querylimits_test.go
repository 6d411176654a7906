package e2e

// A query that would build more than the run allows, through a real vmcp
// run process: pad_left('a', `1e12`) asks for a terabyte, and before the
// fix the Go runtime's "fatal error: runtime: out of memory" took the
// whole server down with the one query. Now the step fails with an error
// that names the function, the argument and the limit, and the server
// answers the next call. The same holds for the operators: a flatten of a
// list doubled forty times, and a value that holds its parts 2^40 times
// (small in memory, but written out in full when passed on).

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
  - name: grow
    description: Double a list forty times over, flattening it each time
    steps:
      - id: say
        tool: tb.echo
        arguments: {text: "{{query \"FLATTEN length(@)\" .params}}"}
  - name: shared
    description: A list that holds its parts forty times over, passed on as a value
    steps:
      - id: keys
        tool: tb.keys
        arguments: {obj: "{{query \"{v: SHARED @}\" .params}}"}
`

// padDraft is an authored draft whose one query asks for a terabyte.
const padDraft = "name: pad_huge\ndescription: Pad a letter to a terabyte\nsteps:\n" +
	"  - id: say\n    tool: tb.echo\n    arguments: {text: \"{{query \\\"pad_left('a', `1e12`)\\\" .}}\"}\n"

func TestQueryOverLimitFailsTheStep(t *testing.T) {
	cfg := strings.NewReplacer("FLATTEN", strings.Repeat("[@, @][] | ", 40), "SHARED", strings.Repeat("[@, @] | ", 40)).Replace(queryLimitsConfig)
	c, stderr := stdioVMCP(t, writeConfig(t, cfg, ""))
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
		// Operators: a flatten copies a list that doubles each time, and
		// a value that holds its parts 2^40 times is not written out.
		{"[@, @][] forty times over", "grow", map[string]any{},
			"with what the query built before it, the query would build more than its limit of 1048576 bytes (limits.maxResultBytes)"},
		{"a value of 2^40 shared parts", "shared", map[string]any{},
			"the query's result is more than 10485760 bytes as JSON, the most a value may hold"},
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
