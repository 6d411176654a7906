package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

func main() {
	if os.Getenv(RecordEnv) != "" {
		os.Exit(runProxy(os.Args[1:]))
	}
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench/tokens (from the repository; no arguments)")
		os.Exit(2)
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/tokens:", err)
		os.Exit(1)
	}
}

func run() error {
	dir, err := os.MkdirTemp("", "vmcp-tokens-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	results, err := MeasureAll(context.Background(), dir, self)
	if err != nil {
		return err
	}
	WriteTables(os.Stdout, results)
	return nil
}

// Bins are the programs a measurement runs.
type Bins struct {
	VMCP, Demo, K8s, Graph string
}

// Build builds vmcp and the example servers into dir.
func Build(dir string) (Bins, error) {
	b := Bins{VMCP: filepath.Join(dir, "vmcp"), Demo: filepath.Join(dir, "demo-backend"),
		K8s: filepath.Join(dir, "cmdb-k8s"), Graph: filepath.Join(dir, "cmdb-graph")}
	for _, t := range []struct{ out, pkg string }{
		{b.VMCP, "./cmd/vmcp"}, {b.Demo, "./examples/demo/backends"},
		{b.K8s, "./examples/cmdb/k8s"}, {b.Graph, "./examples/cmdb/graph"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, "go", "build", "-o", t.out, t.pkg)
		cmd.Dir = testenv.RepoRoot()
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			return b, fmt.Errorf("go build %s: %v\n%s", t.pkg, err, out)
		}
	}
	return b, nil
}

// Scenarios are the measured workflows: the README tour's incident workflow
// (examples/demo) and the paper's CMDB sync (examples/cmdb), with the
// example servers at no artificial latency.
func Scenarios(b Bins) []Scenario {
	root := testenv.RepoRoot()
	var demo []Backend
	for _, role := range []string{"logs", "metrics", "traces", "analysis", "jira"} {
		demo = append(demo, Backend{Name: role, Args: []string{b.Demo, "-role", role, "-latency", "0"}})
	}
	return []Scenario{
		{
			Label:     "incident (investigate_incident)",
			Workflow:  filepath.Join(root, "examples", "incident_investigation.yaml"),
			Tool:      "investigate_incident",
			Arguments: map[string]any{"incident_id": "INC-1234", "time_range": "2h"},
			Backends:  demo,
		},
		{
			Label:     "CMDB sync (cmdb_sync)",
			Workflow:  filepath.Join(root, "examples", "cmdb", "cmdb_sync.yaml"),
			Tool:      "cmdb_sync",
			Arguments: map[string]any{},
			Backends: []Backend{
				{Name: "k8s", Args: []string{b.K8s, "-latency", "0s"}},
				{Name: "graph", Args: []string{b.Graph, "-latency", "0s"}},
			},
		},
	}
}

// MeasureAll builds the programs into dir and measures every scenario;
// proxy is this program (or a test binary that acts as it).
func MeasureAll(ctx context.Context, dir, proxy string) ([]Result, error) {
	bins, err := Build(dir)
	if err != nil {
		return nil, err
	}
	var results []Result
	for i, sc := range Scenarios(bins) {
		sub := filepath.Join(dir, fmt.Sprintf("scenario-%d", i))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return nil, err
		}
		c, err := Measure(ctx, sc, bins.VMCP, proxy, sub)
		if err != nil {
			return nil, err
		}
		results = append(results, Result{Scenario: sc, Counts: c})
	}
	return results, nil
}
