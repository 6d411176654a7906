package e2e

// The Tasks scenarios of the MCP conformance suite's 0.2.0 alpha
// (package.json "conformance-next"; the pinned 0.1.16 suite of
// conformance_test.go has none) against `vmcp run --transport http`
// serving testdata/conformance/tasks.yaml, the workflows those scenarios
// call by name. The alpha runs one scenario per process, so each is its
// own subtest; checks that do not apply to vmcp are listed, each with its
// reason, in testdata/conformance/not-applicable-tasks.yaml and passed as
// the expected-failures baseline, so the suite fails on any other failing
// check and on a listed one that passes.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// conformanceTasksScenarios are the alpha's Tasks scenarios, as its
// `conformance list` names them.
var conformanceTasksScenarios = []string{
	"tasks-lifecycle",
	"tasks-capability-negotiation",
	"tasks-wire-fields",
	"tasks-request-state-removal",
	"tasks-mrtr-input",
	"tasks-request-headers",
	"tasks-dispatch-and-envelope",
	"tasks-status-notifications",
	"tasks-required-task-error",
	"tasks-mrtr-composition",
}

// conformanceTasksLo and conformanceTasksHi are this file's ports.
const conformanceTasksLo, conformanceTasksHi = 17350, 17399

func TestConformanceTasks(t *testing.T) {
	root := testenv.RepoRoot()
	suite := filepath.Join(root, "node_modules", "conformance-next", "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		t.Fatalf("the conformance suite's alpha is not installed (%v); run `cd %s && %s` (package.json pins it as conformance-next)", err, root, testenv.InstallCommand)
	}
	fixtures := filepath.Join(root, "testdata", "conformance")
	baseline := filepath.Join(fixtures, "not-applicable-tasks.yaml")
	notApplicable := readConformanceBaseline(t, baseline)
	for entry := range notApplicable {
		scenario, _, _ := strings.Cut(entry, ":")
		if !slices.Contains(conformanceTasksScenarios, scenario) {
			t.Errorf("%s lists %s, but %s is not a Tasks scenario the test runs; remove it", filepath.Base(baseline), entry, scenario)
		}
	}

	t.Setenv("VMCP_TESTBACKEND", bins.testbackend)
	url, vmcpStderr := httpVMCPOn(t, filepath.Join(fixtures, "tasks.yaml"), conformanceTasksLo, conformanceTasksHi)
	node := repoNode(t)
	for _, scenario := range conformanceTasksScenarios {
		t.Run(scenario, func(t *testing.T) {
			results := t.TempDir()
			stdout, stderr, code := run(t, 2*time.Minute, results, node, suite, "server",
				"--url", url, "--scenario", scenario, "--expected-failures", baseline,
				"--timeout", "30000", "--output-dir", results)
			out := ansiEscape.ReplaceAllString(stdout+stderr, "")
			checks := scenarioChecks(t, results, scenario)
			var unexpected, stale []string
			for _, c := range checks {
				listed := notApplicable[scenario] || notApplicable[scenario+":"+c.ID]
				switch {
				case c.Status == "FAILURE" && !listed:
					unexpected = append(unexpected, c.ID+": "+c.ErrorMessage)
				case c.Status == "SUCCESS" && notApplicable[scenario+":"+c.ID]:
					stale = append(stale, c.ID)
				}
			}
			for _, u := range unexpected {
				t.Errorf("check failed: %s", u)
			}
			for _, s := range stale {
				t.Errorf("check %s passes now: remove %s:%s from %s", s, scenario, s, filepath.Base(baseline))
			}
			if code != 0 && len(unexpected)+len(stale) == 0 {
				t.Errorf("the suite exited %d\n%s", code, out)
			}
			if t.Failed() {
				t.Logf("suite output:\n%s\nvmcp stderr:\n%s", out, vmcpStderr.String())
				return
			}
			if len(checks) == 0 {
				t.Logf("the suite had nothing to check (see docs/conformance.md)")
			}
		})
	}
}

// conformanceCheck is one check of a scenario's checks.json.
type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// scenarioChecks reads the checks the suite saved for a scenario (under
// dir/server-<scenario>-<timestamp>/checks.json), in id order.
func scenarioChecks(t *testing.T, dir, scenario string) []conformanceCheck {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "server-"+scenario+"-*", "checks.json"))
	if len(files) != 1 {
		t.Fatalf("want one checks.json of scenario %s under %s, found %d", scenario, dir, len(files))
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var checks []conformanceCheck
	if err := json.Unmarshal(b, &checks); err != nil {
		t.Fatalf("%s: %v", files[0], err)
	}
	sort.SliceStable(checks, func(i, j int) bool { return checks[i].ID < checks[j].ID })
	return checks
}
