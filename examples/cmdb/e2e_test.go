package cmdb

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/examples/cmdb/cluster"
	"github.com/vmcp-dev/vmcp/examples/cmdb/cmdbtest"
)

var bins cmdbtest.Binaries

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "vmcp-cmdb-")
	if err != nil {
		panic(err)
	}
	// vmcp without -race: the sync makes about 1,700 backend calls, which
	// take 6s under the race detector and 1.3s without it; e2e/ runs vmcp
	// with -race.
	bins, err = cmdbtest.Build(dir, false)
	code := 1
	if err == nil {
		code = m.Run()
	} else {
		os.Stderr.WriteString(err.Error() + "\n")
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// syncResult is the composite tool's output (the workflow's output:).
type syncResult struct {
	Nodes           int            `json:"nodes"`
	Relationships   int            `json:"relationships"`
	Unlabeled       int            `json:"unlabeled"`
	ByLabel         map[string]int `json:"byLabel"`
	ByType          map[string]int `json:"byType"`
	NamespacedLists int            `json:"namespacedLists"`
}

// callSync runs `vmcp call` of tool from workflow against a cluster with
// kinds kinds and returns its result.
func callSync(t *testing.T, workflow, tool string, kinds int) syncResult {
	t.Helper()
	dir := t.TempDir()
	cfg, err := cmdbtest.WriteConfig(dir, bins, cmdbtest.Options{Workflows: []string{workflow}, Kinds: kinds})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bins.VMCP, "call", "--config", cfg, tool)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("vmcp call %s: %v\nstderr:\n%s", tool, err, stderr.String())
	}
	t.Logf("vmcp call %s took %s", tool, time.Since(start).Round(time.Millisecond))
	var res syncResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("vmcp call %s printed %q: %v", tool, stdout.String(), err)
	}
	return res
}

// checkGraph compares the synced graph with the generator's counts.
func checkGraph(t *testing.T, got syncResult, cl *cluster.Cluster) {
	t.Helper()
	want := cl.Expected()
	if got.Nodes != want.Nodes || got.Relationships != want.Relationships {
		t.Errorf("graph has %d nodes, %d relationships; the cluster has %d, %d", got.Nodes, got.Relationships, want.Nodes, want.Relationships)
	}
	if got.Unlabeled != 0 {
		t.Errorf("graph has %d unlabeled nodes (relationship ends no synced object claimed); want 0", got.Unlabeled)
	}
	if d := cmp.Diff(want.ByLabel, got.ByLabel); d != "" {
		t.Errorf("nodes by label (-cluster +graph):\n%s", d)
	}
	if d := cmp.Diff(want.ByType, got.ByType); d != "" {
		t.Errorf("relationships by type (-cluster +graph):\n%s", d)
	}
}

// checkLists checks that the sync listed every namespaced kind in every
// namespace.
func checkLists(t *testing.T, got syncResult, cl *cluster.Cluster) {
	t.Helper()
	namespaced := 0
	for _, k := range cl.Kinds {
		if k.Namespaced {
			namespaced++
		}
	}
	if want := namespaced * cl.Config.Namespaces; got.NamespacedLists != want {
		t.Errorf("namespaced lists = %d; want %d kinds x %d namespaces = %d", got.NamespacedLists, namespaced, cl.Config.Namespaces, want)
	}
}

func TestSyncBuildsTheClusterGraph(t *testing.T) {
	cl, err := cluster.Generate(cluster.Paper)
	if err != nil {
		t.Fatal(err)
	}
	got := callSync(t, "examples/cmdb/cmdb_sync.yaml", "cmdb_sync", 0)
	checkGraph(t, got, cl)
	checkLists(t, got, cl)
}

// TestSyncFlat runs the same sync written without loop bodies.
func TestSyncFlat(t *testing.T) {
	cl, err := cluster.Generate(cluster.Paper)
	if err != nil {
		t.Fatal(err)
	}
	got := callSync(t, "examples/cmdb/cmdb_sync_flat.yaml", "cmdb_sync_flat", 0)
	checkGraph(t, got, cl)
	checkLists(t, got, cl)
}

func TestSyncFortyKinds(t *testing.T) {
	cl, err := cluster.Generate(cluster.Config{Kinds: 40})
	if err != nil {
		t.Fatal(err)
	}
	got := callSync(t, "examples/cmdb/cmdb_sync_40kinds.yaml", "cmdb_sync_40kinds", 40)
	checkGraph(t, got, cl)
	checkLists(t, got, cl)
}

// TestSyncFirstWave runs the sync as the first wave's dialect writes it
// (bench/cmdb/firstwave: a loop per kind, JSON written by templates), the
// text bench/cmdb/firstwave/compare.sh runs on both builds.
func TestSyncFirstWave(t *testing.T) {
	cl, err := cluster.Generate(cluster.Paper)
	if err != nil {
		t.Fatal(err)
	}
	checkGraph(t, callSync(t, "bench/cmdb/firstwave/cmdb_sync_firstwave.yaml", "cmdb_sync_firstwave", 0), cl)
}
