package e2e

// vmcp call: the incident investigation demo end to end, exit codes,
// argument typing and the progress display.

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

func demoConfig(t *testing.T) string {
	t.Helper()
	wf := filepath.Join(testenv.RepoRoot(), "examples", "incident_investigation.yaml")
	return writeConfig(t, `
backends:
  logs:     {command: "${DEMO}", args: [-role, logs, -latency, "0.2"]}
  metrics:  {command: "${DEMO}", args: [-role, metrics, -latency, "0.2"]}
  traces:   {command: "${DEMO}", args: [-role, traces, -latency, "0.2"]}
  analysis: {command: "${DEMO}", args: [-role, analysis, -latency, "0.2"]}
  jira:     {command: "${DEMO}", args: [-role, jira, -latency, "0.2"]}
workflows: [`+wf+`]
`, "")
}

func TestCallIncidentDemo(t *testing.T) {
	cfg := demoConfig(t)
	out, errOut, code := run(t, 90*time.Second, filepath.Dir(cfg), bins.vmcp,
		"call", "--config", cfg, "investigate_incident", "--arg", "incident_id=INC-1234", "--timeline")
	if code != 0 {
		t.Fatalf("vmcp call exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, out)
	}
	want := map[string]any{
		"ticket":   got["ticket"],
		"summary":  "payments connection pool exhaustion slows checkout",
		"severity": got["severity"],
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result mismatch (-want +got):\n%s", diff)
	}
	if ok, _ := regexp.MatchString(`^OPS-\d{4}$`, got["ticket"].(string)); !ok {
		t.Errorf("ticket = %q; want OPS-NNNN", got["ticket"])
	}
	// stderr is not a terminal: one progress line per event, then the
	// timeline.
	for _, line := range []string{
		"[0/5] +0.000s run ", "step fetch_logs started", "step fetch_traces completed",
		"[5/5] ", "step create_ticket completed", "run completed", "timeline (total ",
	} {
		if !strings.Contains(errOut, line) {
			t.Errorf("stderr lacks %q:\n%s", line, errOut)
		}
	}
	// The three fetches overlap: each starts before any of them ends.
	starts, ends := map[string]float64{}, map[string]float64{}
	re := regexp.MustCompile(`(?m)^\s+(fetch_\w+)\s+\|[# ]+\|\s+(\d+)ms → \s*(\d+)ms`)
	for _, m := range re.FindAllStringSubmatch(errOut, -1) {
		var s, e float64
		json.Unmarshal([]byte(m[2]), &s)
		json.Unmarshal([]byte(m[3]), &e)
		starts[m[1]], ends[m[1]] = s, e
	}
	if len(starts) != 3 {
		t.Fatalf("timeline shows %d fetch steps; want 3:\n%s", len(starts), errOut)
	}
	for a, s := range starts {
		for b, e := range ends {
			if s >= e {
				t.Errorf("%s started at %vms, after %s ended at %vms: the fetches did not run in parallel", a, s, b, e)
			}
		}
	}
}

func TestCallExitCodes(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "record.txt")
	cfg := writeConfig(t, testConfig, rec)
	broken := writeConfig(t, `
backends:
  tb: {command: "${TB}"}
compositeTools:
  - name: typo
    description: Calls a tool the backend does not have
    steps:
      - id: one
        tool: tb.ech
        arguments: {text: hi}
`, "")
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   string
		inStderr string
	}{
		{"completed", []string{"--config", cfg, "add_then_echo", "--arg", "a=1", "--arg", "b=2"}, 0, "{\n  \"sum\": 3,\n  \"text\": \"sum is 3\"\n}\n", ""},
		{"args-json then --arg", []string{"--config", cfg, "add_then_echo", "--args-json", `{"a": 1, "b": 2}`, "--arg", "b=10"}, 0, "{\n  \"sum\": 11,\n  \"text\": \"sum is 11\"\n}\n", ""},
		{"workflow fails", []string{"--config", cfg, "failing"}, 1, "", `workflow failing failed: step "boom" (`},
		{"unknown tool", []string{"--config", cfg, "nope"}, 2, "", `unknown tool "nope"`},
		{"missing required argument", []string{"--config", cfg, "add_then_echo", "--arg", "a=1"}, 2, "", "invalid arguments for add_then_echo"},
		{"bad --arg", []string{"--config", cfg, "add_then_echo", "--arg", "a"}, 2, "", `--arg "a": want name=value`},
		{"bad --args-json", []string{"--config", cfg, "add_then_echo", "--args-json", "[1]"}, 2, "", "--args-json must be a JSON object"},
		{"no tool", []string{"--config", cfg}, 2, "", "accepts 1 arg(s)"},
		{"unknown backend tool", []string{"--config", broken, "typo"}, 1, "", "vmcp.yaml:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, 90*time.Second, filepath.Dir(cfg), bins.vmcp, append([]string{"call"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("vmcp call %v exited %d; want %d\nstderr:\n%s", tt.args, code, tt.code, errOut)
			}
			if out != tt.stdout {
				t.Errorf("stdout = %q; want %q", out, tt.stdout)
			}
			if !strings.Contains(errOut, tt.inStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.inStderr, errOut)
			}
		})
	}
	// Without --config, vmcp call reads ./vmcp.yaml (the loop above ran next
	// to one); in a directory without one it says what to pass.
	_, errOut, code := run(t, 90*time.Second, t.TempDir(), bins.vmcp, "call", "add_then_echo")
	if want := "no --config given and there is no ./vmcp.yaml: pass --config FILE"; code != 2 || !strings.Contains(errOut, want) {
		t.Errorf("vmcp call without --config or ./vmcp.yaml exited %d; want 2 and %q\nstderr:\n%s", code, want, errOut)
	}
}
