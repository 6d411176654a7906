package e2e

// Value limits and forEach per-item conditions through a real vmcp
// process: `vmcp run` on stdio driven by an mcp-go client, and `vmcp call`
// from the shell, against the test backend process.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

const limitsConfig = `
backends:
  tb: {command: "${TB}"}
compositeTools:
  - name: pass_obj
    description: Pass an object parameter on to a backend
    parameters:
      obj: {type: object}
    steps:
      - id: count
        tool: tb.keys
        arguments: {obj: "{{.params.obj}}"}
  - name: double
    description: Pass a text on twice
    parameters:
      text: {type: string, required: true}
    steps:
      - id: twice
        tool: tb.keys
        arguments:
          first: "{{.params.text}}"
          second: "{{.params.text}}"
  - name: scan_some
    description: Echo the names of the enabled items only
    parameters:
      items: {type: array, required: true}
    steps:
      - id: each
        type: forEach
        collection: "{{.params.items}}"
        itemVar: pkg
        step:
          tool: tb.echo
          condition: "{{.forEach.pkg.enabled}}"
          defaultResults: {text: skipped}
          arguments: {text: "{{.forEach.pkg.name}}"}
`

// deepObject is {"k": {"k": ... "s3cret"}}, levels objects deep.
func deepObject(levels int) any {
	var v any = "s3cret"
	for i := 0; i < levels; i++ {
		v = map[string]any{"k": v}
	}
	return v
}

// configPos returns line:col of the first occurrence of text in the config
// (the file starts with the config's leading newline).
func configPos(t *testing.T, text string) string {
	t.Helper()
	for i, line := range strings.Split(limitsConfig, "\n") {
		if c := strings.Index(line, text); c >= 0 {
			return fmt.Sprintf("%d:%d", i+1, c+1)
		}
	}
	t.Fatalf("%q is not in the config", text)
	return ""
}

func TestLimitsOverStdio(t *testing.T) {
	c, stderr := stdioVMCP(t, writeConfig(t, limitsConfig, ""))
	// The template's value starts after the quote.
	firstPos := configPos(t, `{{.params.text}}"`)
	tests := []struct {
		name string
		tool string
		args map[string]any
		want *regexp.Regexp
	}{
		{"a 150-deep object parameter", "pass_obj", map[string]any{"obj": deepObject(150)},
			regexp.MustCompile(`^invalid arguments for pass_obj: parameter "obj" is nested deeper than 100 levels, the limit for argument values; pass a flatter value$`)},
		{"an 11 MB argument", "pass_obj", map[string]any{"obj": map[string]any{"blob": strings.Repeat("s3cret", 2<<20)}},
			regexp.MustCompile(`^invalid arguments for pass_obj: arguments are more than 10485760 bytes as JSON \(10 MB\), the limit for argument values; the largest is parameter "obj"$`)},
		{"backend arguments that add up to over 10 MB", "double", map[string]any{"text": strings.Repeat("s3cret", 1<<20)},
			regexp.MustCompile(`^workflow double failed: step "twice" \([^)]*vmcp\.yaml:` + firstPos + `\): arguments are more than 10485760 bytes as JSON \(10 MB\), the limit for argument values; the largest part is arguments\.first`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := callTool(t, c, tt.tool, tt.args, nil)
			if err != nil {
				t.Fatalf("call %s: protocol error %v; want an isError result", tt.tool, err)
			}
			text := testenv.ResultText(res)
			if !res.IsError || !tt.want.MatchString(text) {
				t.Errorf("call %s = (isError %v) %.300q; want isError matching %s", tt.tool, res.IsError, text, tt.want)
			}
			if strings.Contains(text, "s3cret") {
				t.Errorf("the error echoes the argument's value: %.300s", text)
			}
		})
	}
	// Within the limits, the same tools work: obj nested 99 levels inside
	// the arguments object is 100 in all, the most allowed.
	res := mustCall(t, c, "pass_obj", map[string]any{"obj": deepObject(99)})
	if res.IsError {
		t.Errorf("pass_obj with obj nested 99 levels = %s; want success", testenv.ResultText(res))
	}
	if strings.Contains(stderr.String(), "panic") {
		t.Errorf("vmcp logged a panic:\n%s", stderr.String())
	}
}

func TestForEachConditionOverStdio(t *testing.T) {
	c, _ := stdioVMCP(t, writeConfig(t, limitsConfig, ""))
	items := []any{
		map[string]any{"name": "api", "enabled": true},
		map[string]any{"name": "db", "enabled": false},
		map[string]any{"name": "web", "enabled": "true"},
	}
	res := mustCall(t, c, "scan_some", map[string]any{"items": items})
	if res.IsError {
		t.Fatalf("scan_some = %s", testenv.ResultText(res))
	}
	out, _ := res.StructuredContent.(map[string]any)
	want := map[string]any{
		"count": 3.0, "completed": 2.0, "failed": 0.0, "skipped": 1.0,
		"iterations": []any{
			map[string]any{"index": 0.0, "item": items[0], "status": "completed", "output": map[string]any{"text": "api"}, "error": ""},
			map[string]any{"index": 1.0, "item": items[1], "status": "skipped", "output": map[string]any{"text": "skipped"}, "error": ""},
			map[string]any{"index": 2.0, "item": items[2], "status": "completed", "output": map[string]any{"text": "web"}, "error": ""},
		},
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("scan_some structuredContent (-want +got):\n%s", diff)
	}
}

func TestCallLimitsAndConditions(t *testing.T) {
	cfg := writeConfig(t, limitsConfig, "")
	deep, _ := json.Marshal(map[string]any{"obj": deepObject(150)})
	out, errOut, code := run(t, 90*time.Second, filepath.Dir(cfg), bins.vmcp, "call", "--config", cfg, "pass_obj", "--args-json", string(deep))
	if code != 2 || out != "" || !strings.Contains(errOut, `parameter "obj" is nested deeper than 100 levels`) || strings.Contains(errOut, "s3cret") {
		t.Errorf("vmcp call pass_obj with a 150-deep obj: exit %d, stdout %q, stderr:\n%s\nwant exit 2 naming the parameter, not its value", code, out, errOut)
	}
	items := `{"items": [{"name": "a", "enabled": false}, {"name": "b", "enabled": true}]}`
	out, errOut, code = run(t, 90*time.Second, filepath.Dir(cfg), bins.vmcp, "call", "--config", cfg, "scan_some", "--args-json", items)
	if code != 0 {
		t.Fatalf("vmcp call scan_some exited %d\nstderr:\n%s", code, errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("vmcp call scan_some printed %q: %v", out, err)
	}
	iters, _ := got["iterations"].([]any)
	if got["skipped"] != 1.0 || got["completed"] != 1.0 || len(iters) != 2 {
		t.Fatalf("vmcp call scan_some = %s; want one skipped and one completed iteration", out)
	}
	first, _ := iters[0].(map[string]any)
	if first["status"] != "skipped" || !cmp.Equal(first["output"], map[string]any{"text": "skipped"}) {
		t.Errorf("iteration 0 = %v; want skipped with the inner step's defaultResults", first)
	}
}
