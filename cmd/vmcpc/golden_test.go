package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// goldenExamples are the examples whose `vmcpc plan` output is pinned in
// testdata/golden/<name>.<format>, in every format.
var goldenExamples = []string{
	"incident_investigation.yaml",
	"diamond.yaml",
	"foreach_vulnerability_scan.yaml",
	"elicitation_deploy.yaml",
	"k8s_stream.yaml", // two workflows: output shows both
	"release_announcement.json",
	"finally_cleanup.yaml",
	"subworkflow_triage.yaml", // workflow steps, also inside a forEach
	"nested_loops.yaml",       // loop bodies, nested
}

var planFormats = []string{"text", "json", "dot", "mermaid"}

// repoRoot changes into the repository root so that paths in the output
// read examples/x.yaml, as a user running vmcpc there would see them.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(wd, "..", "..")
	t.Chdir(root)
	return root
}

func TestPlanGolden(t *testing.T) {
	repoRoot(t)
	for _, ex := range goldenExamples {
		for _, format := range planFormats {
			name := strings.TrimSuffix(ex, filepath.Ext(ex)) + "." + format
			t.Run(name, func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				code := run([]string{"plan", "--format", format, "examples/" + ex}, &stdout, &stderr)
				if code != exitOK || stderr.Len() != 0 {
					t.Fatalf("vmcpc plan --format %s examples/%s = exit %d, stderr:\n%s", format, ex, code, stderr.String())
				}
				golden := filepath.Join("testdata", "golden", name)
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, stdout.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test ./cmd/vmcpc -update to create it)", err)
				}
				if diff := cmp.Diff(string(want), stdout.String()); diff != "" {
					t.Errorf("vmcpc plan --format %s examples/%s differs from %s (-want +got):\n%s", format, ex, golden, diff)
				}
			})
		}
	}
}

// TestPlanIncidentShape pins the facts the team relies on, independently of
// the golden files: three levels with the three fetches in parallel.
func TestPlanIncidentShape(t *testing.T) {
	repoRoot(t)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"plan", "examples/incident_investigation.yaml"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("vmcpc plan = exit %d, stderr:\n%s", code, stderr.String())
	}
	for _, want := range []string{
		"level 0 | fetch_logs  fetch_metrics  fetch_traces\n",
		"level 1 | correlate\n",
		"level 2 | create_ticket\n",
		"  total_levels      3\n",
		"  max_parallelism   3\n",
		"  fetch_logs -> correlate -> create_ticket\n",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("vmcpc plan output lacks %q:\n%s", want, stdout.String())
		}
	}
}

func TestPlanToolSelection(t *testing.T) {
	repoRoot(t)
	tests := []struct {
		args       []string
		code       int
		stdoutHas  string
		stdoutLack string
		stderrHas  string
	}{
		{args: []string{"plan", "--tool", "close_stale_tickets", "examples/k8s_stream.yaml"}, code: exitOK,
			stdoutHas: "workflow close_stale_tickets", stdoutLack: "triage_ticket"},
		{args: []string{"plan", "examples/k8s_stream.yaml"}, code: exitOK,
			stdoutHas: "workflow triage_ticket", stdoutLack: "no such"},
		{args: []string{"plan", "--tool", "nope", "examples/k8s_stream.yaml"}, code: exitError,
			stderrHas: `examples/k8s_stream.yaml has no workflow named "nope" (it has: close_stale_tickets, triage_ticket)`},
		{args: []string{"plan", "--format", "png", "examples/diamond.yaml"}, code: exitUsage,
			stderrHas: `unknown --format "png" (want text, json, dot, mermaid or svg)`},
		{args: []string{"plan"}, code: exitUsage, stderrHas: "accepts 1 arg(s), received 0"},
		{args: []string{"plan", "a.yaml", "b.yaml"}, code: exitUsage, stderrHas: "accepts 1 arg(s), received 2"},
		{args: []string{"plan", "missing.yaml"}, code: exitError, stderrHas: "missing.yaml: no such file or directory"},
	}
	for _, tc := range tests {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.code {
			t.Errorf("vmcpc %q = exit %d; want %d (stderr: %s)", tc.args, code, tc.code, stderr.String())
		}
		if tc.stdoutHas != "" && !strings.Contains(stdout.String(), tc.stdoutHas) {
			t.Errorf("vmcpc %q stdout lacks %q:\n%s", tc.args, tc.stdoutHas, stdout.String())
		}
		if tc.stdoutLack != "" && strings.Contains(stdout.String(), tc.stdoutLack) {
			t.Errorf("vmcpc %q stdout has %q; want it left out:\n%s", tc.args, tc.stdoutLack, stdout.String())
		}
		if tc.stderrHas != "" && !strings.Contains(stderr.String(), tc.stderrHas) {
			t.Errorf("vmcpc %q stderr lacks %q:\n%s", tc.args, tc.stderrHas, stderr.String())
		}
	}
}
