package e2e

// The MCP conformance suite (@modelcontextprotocol/conformance, pinned in
// package.json) against `vmcp run --transport http` serving the fixture
// workflows of testdata/conformance/vmcp.yaml, one workflow per tool name
// the suite's scenarios call. Scenarios that do not apply to a workflow
// server are listed, each with its reason, in
// testdata/conformance/not-applicable.yaml and passed to the suite as its
// expected-failures baseline: the suite then exits non-zero when any other
// scenario fails, and also when a listed one starts to pass.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// conformanceSummary matches the suite's per-scenario summary lines, such
// as "✓ tools-list: 1 passed, 0 failed".
var conformanceSummary = regexp.MustCompile(`(?m)^[✓✗] ([a-z0-9-]+): (\d+) passed, (\d+) failed$`)

// ansiEscape matches the colour codes the suite prints.
var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestConformance(t *testing.T) {
	root := testenv.RepoRoot()
	suite := filepath.Join(root, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		t.Fatalf("the conformance suite is not installed (%v); run `cd %s && %s` (package.json pins it)", err, root, testenv.InstallCommand)
	}
	fixtures := filepath.Join(root, "testdata", "conformance")
	baseline := filepath.Join(fixtures, "not-applicable.yaml")
	notApplicable := readConformanceBaseline(t, baseline)

	t.Setenv("VMCP_TESTBACKEND", bins.testbackend)
	url, vmcpStderr := httpVMCP(t, filepath.Join(fixtures, "vmcp.yaml"))

	results := t.TempDir()
	stdout, stderr, code := run(t, 5*time.Minute, results, repoNode(t), suite, "server",
		"--url", url, "--suite", "all", "--expected-failures", baseline, "--output-dir", results)
	out := ansiEscape.ReplaceAllString(stdout+stderr, "")
	if code != 0 {
		t.Errorf("the conformance suite exited %d\n%s\nvmcp stderr:\n%s", code, out, vmcpStderr.String())
	}

	ran := map[string]bool{}
	for _, m := range conformanceSummary.FindAllStringSubmatch(out, -1) {
		name := m[1]
		passed, _ := strconv.Atoi(m[2])
		failed, _ := strconv.Atoi(m[3])
		ran[name] = true
		t.Run(name, func(t *testing.T) {
			switch {
			case notApplicable[name]:
				t.Logf("not applicable to a workflow server (see %s)", filepath.Base(baseline))
			case failed > 0:
				t.Errorf("%d of %d checks failed:\n%s", failed, passed+failed, failedChecks(t, results, name))
			case passed == 0:
				t.Logf("the suite had nothing to check (see docs/conformance.md)")
			}
		})
	}
	if len(ran) == 0 {
		t.Fatalf("the conformance suite printed no scenario summary\n%s", out)
	}
	for name := range notApplicable {
		if !ran[name] {
			t.Errorf("%s lists scenario %s, which the suite did not run; remove it", filepath.Base(baseline), name)
		}
	}
}

// readConformanceBaseline returns the server scenarios listed in the
// expected-failures file.
func readConformanceBaseline(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Server []string `yaml:"server"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	set := map[string]bool{}
	for _, s := range doc.Server {
		set[s] = true
	}
	return set
}

// failedChecks returns the failed checks the suite saved for a scenario
// (under dir/server-<scenario>-<timestamp>/checks.json), one per line.
func failedChecks(t *testing.T, dir, scenario string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "server-"+scenario+"-*", "checks.json"))
	var lines []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var checks []conformanceCheck
		if json.Unmarshal(b, &checks) != nil {
			lines = append(lines, string(b))
			continue
		}
		for _, c := range checks {
			if c.Status == "FAILURE" {
				lines = append(lines, c.ID+": "+c.ErrorMessage)
			}
		}
	}
	if len(lines) == 0 {
		return "(no checks.json found under " + dir + ")"
	}
	return strings.Join(lines, "\n")
}
