// Package cmdbtest runs the CMDB example for tests and benchmarks: it
// builds the two fake servers (and vmcp) and writes a vmcp.yaml that
// starts them, with the artificial latencies and the kinds asked for.
//
// In: a directory and Options. Out: the binaries' paths (Build) and a
// config file (WriteConfig). The e2e test (examples/cmdb) and bench/cmdb
// use it, so both run the same setup.
package cmdbtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// Binaries are the built programs.
type Binaries struct {
	VMCP, K8s, Graph string
}

// Build builds vmcp and the two servers into dir (vmcp with the race
// detector when race is set), within five minutes.
func Build(dir string, race bool) (Binaries, error) {
	bins := Binaries{VMCP: filepath.Join(dir, "vmcp"), K8s: filepath.Join(dir, "cmdb-k8s"), Graph: filepath.Join(dir, "cmdb-graph")}
	vmcp := []string{"build", "-o", bins.VMCP, "./cmd/vmcp"}
	if race {
		vmcp = []string{"build", "-race", "-o", bins.VMCP, "./cmd/vmcp"}
	}
	for _, args := range [][]string{
		vmcp,
		{"build", "-o", bins.K8s, "./examples/cmdb/k8s"},
		{"build", "-o", bins.Graph, "./examples/cmdb/graph"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = testenv.RepoRoot()
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			return bins, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return bins, nil
}

// Options shape the config.
type Options struct {
	// Workflows are the workflow files to serve, absolute or relative to
	// the repository root.
	Workflows []string
	// Kinds is the fake API's -kinds (0: the paper's 22).
	Kinds int
	// K8sLatency and GraphLatency are the servers' per-call latencies.
	K8sLatency, GraphLatency time.Duration
	// MaxParallel is server.maxParallel and each backend's maxParallel
	// (0: 100 and 50).
	MaxParallel int
}

// WriteConfig writes dir/vmcp.yaml for bins and opts and returns its path.
func WriteConfig(dir string, bins Binaries, opts Options) (string, error) {
	total, each := 100, 50
	if opts.MaxParallel > 0 {
		total, each = opts.MaxParallel, opts.MaxParallel
	}
	k8sArgs := []string{"-latency", opts.K8sLatency.String()}
	if opts.Kinds > 0 {
		k8sArgs = append(k8sArgs, "-kinds", fmt.Sprint(opts.Kinds))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "backends:\n")
	fmt.Fprintf(&b, "  k8s: {command: %q, args: [%s], maxParallel: %d}\n", bins.K8s, quoteAll(k8sArgs), each)
	fmt.Fprintf(&b, "  graph: {command: %q, args: [\"-latency\", %q], maxParallel: %d}\n", bins.Graph, opts.GraphLatency.String(), each)
	fmt.Fprintf(&b, "workflows:\n")
	for _, w := range opts.Workflows {
		if !filepath.IsAbs(w) {
			w = filepath.Join(testenv.RepoRoot(), w)
		}
		fmt.Fprintf(&b, "  - %q\n", w)
	}
	fmt.Fprintf(&b, "server: {transport: stdio, maxParallel: %d}\n", total)
	path := filepath.Join(dir, "vmcp.yaml")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

func quoteAll(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = fmt.Sprintf("%q", a)
	}
	return strings.Join(q, ", ")
}
