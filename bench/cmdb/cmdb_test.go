package cmdb

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/examples/cmdb/cluster"
	"github.com/vmcp-dev/vmcp/examples/cmdb/cmdbtest"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/mcpclient"
	"github.com/vmcp-dev/vmcp/runtime"
)

// The fake servers' latencies per call in the benchmark (a Kubernetes
// list, a graph write), unless CMDB_K8S_LATENCY and CMDB_GRAPH_LATENCY
// (the servers' own variables) say otherwise. They are long next to the
// cost of an MCP call on the shared 2-core machine (about 1 to 2ms of CPU
// across vmcp and the two servers), so that at parallelism 50 the machine
// is not the bottleneck.
var (
	k8sLatency   = envDuration("CMDB_K8S_LATENCY", 100*time.Millisecond)
	graphLatency = envDuration("CMDB_GRAPH_LATENCY", 50*time.Millisecond)
)

func envDuration(name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		panic(fmt.Sprintf("%s=%q: want a Go duration", name, v))
	}
	return d
}

var bins cmdbtest.Binaries

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "vmcp-bench-cmdb-")
	if err != nil {
		panic(err)
	}
	code := 1
	if bins, err = cmdbtest.Build(dir, false); err == nil {
		code = m.Run()
	} else {
		fmt.Fprintln(os.Stderr, err)
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// setParallel sets every parallelism limit of the plan to n: each
// workflow's maxParallel and each loop's at any depth (at most 50, the
// loop limit).
func setParallel(plan *ir.Plan, n int) {
	for _, wf := range plan.Workflows {
		wf.MaxParallel = n
		ir.EachStep(wf.Steps, func(st *ir.Step) {
			if st.ForEach != nil {
				st.ForEach.MaxParallel = min(n, 50)
			}
		})
	}
}

// engine connects to the two servers (real stdio processes) the way vmcp
// run does (config, backend manager, compile against the live catalog,
// call limits) and returns the engine and the limits it runs under.
func engine(b *testing.B, workflow string, parallel int) (*runtime.Engine, *ir.Plan, Limits) {
	eng, plan, lim, _ := engineWith(b, workflow, parallel, nil)
	return eng, plan, lim
}

// engineWith is engine with wrap (when not nil) around the backend
// manager, and the loaded config.
func engineWith(b *testing.B, workflow string, parallel int, wrap func(runtime.Backend) runtime.Backend) (*runtime.Engine, *ir.Plan, Limits, *config.Config) {
	b.Helper()
	cfgPath, err := cmdbtest.WriteConfig(b.TempDir(), bins, cmdbtest.Options{
		Workflows: []string{workflow}, K8sLatency: k8sLatency, GraphLatency: graphLatency, MaxParallel: parallel,
	})
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := config.Load(cfgPath, os.LookupEnv)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mgr, err := mcpclient.Connect(ctx, cfg.Backends, mcpclient.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { mgr.Close() })
	inputs, err := compiler.Load(cfg.Sources())
	if err != nil {
		b.Fatal(err)
	}
	plan, diags := compiler.Compile(inputs, compiler.Options{Tools: mgr.Catalog(), MaxIterations: cfg.Limits.MaxIterations})
	if diags.HasErrors() {
		b.Fatalf("compile %s: %v", workflow, diags)
	}
	setParallel(plan, parallel)
	lim := Limits{Total: cfg.Server.MaxParallel, PerBackend: map[string]int{}}
	for name, be := range cfg.Backends {
		lim.PerBackend[name] = be.MaxParallel
	}
	var inner runtime.Backend = mgr
	if wrap != nil {
		inner = wrap(inner)
	}
	backend := runtime.LimitCalls(inner, runtime.CallLimits{Total: lim.Total, PerBackend: lim.PerBackend})
	eng, err := runtime.New(plan, runtime.Options{Backend: backend, Schemas: mgr.Catalog(), MaxIterations: cfg.Limits.MaxIterations})
	if err != nil {
		b.Fatal(err)
	}
	return eng, plan, lim, cfg
}

// runSync runs tool once and checks that the graph is the cluster's.
func runSync(b *testing.B, eng *runtime.Engine, tool string, want cluster.Counts) (*runtime.Run, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	run, err := eng.Run(ctx, tool, nil, runtime.RunOptions{})
	wall := time.Since(start)
	if err != nil {
		b.Fatal(err)
	}
	if run.Status != runtime.RunCompleted {
		b.Fatalf("run %s: %s: %v", tool, run.Status, run.Error)
	}
	out, _ := run.Output.(map[string]any)
	if fmt.Sprint(out["nodes"], out["relationships"]) != fmt.Sprint(want.Nodes, want.Relationships) {
		b.Fatalf("graph has %v nodes, %v relationships; the cluster has %d, %d", out["nodes"], out["relationships"], want.Nodes, want.Relationships)
	}
	return run, wall
}

// benchSync measures the sync at each parallelism. The ideal is computed
// from the last timed run's iteration counts (every run has the same).
func benchSync(b *testing.B, workflow, tool string) {
	cl, err := cluster.Generate(cluster.Paper)
	if err != nil {
		b.Fatal(err)
	}
	want := cl.Expected()
	lat := map[string]time.Duration{"k8s": k8sLatency, "graph": graphLatency}
	for _, parallel := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("parallel-%d", parallel), func(b *testing.B) {
			eng, plan, lim := engine(b, workflow, parallel)
			wf := plan.Workflows[0]
			var total time.Duration
			var last *runtime.Run
			b.ResetTimer()
			for range b.N {
				run, wall := runSync(b, eng, tool, want)
				total += wall
				last = run
			}
			b.StopTimer()
			task, err := FromRun(wf, last)
			if err != nil {
				b.Fatal(err)
			}
			ideal := Simulate(task, lat, lim)
			mean := total / time.Duration(b.N)
			b.ReportMetric(float64(mean)/float64(time.Millisecond), "wall-ms")
			b.ReportMetric(float64(ideal)/float64(time.Millisecond), "ideal-ms")
			b.ReportMetric(float64(LowerBound(task, lat, lim))/float64(time.Millisecond), "bound-ms")
			b.ReportMetric(float64(mean)/float64(ideal), "x-ideal")
			b.ReportMetric(float64(task.Calls()), "calls")
			_, work := task.Work(lat)
			b.ReportMetric(float64(work)/float64(mean), "in-flight")
		})
	}
}

// BenchmarkCMDBSync is examples/cmdb/cmdb_sync.yaml (nested loops with
// bodies) against the paper's cluster.
func BenchmarkCMDBSync(b *testing.B) {
	benchSync(b, "examples/cmdb/cmdb_sync.yaml", "cmdb_sync")
}

// BenchmarkCMDBSyncFlat is examples/cmdb/cmdb_sync_flat.yaml, the same
// sync without loop bodies.
func BenchmarkCMDBSyncFlat(b *testing.B) {
	benchSync(b, "examples/cmdb/cmdb_sync_flat.yaml", "cmdb_sync_flat")
}

// BenchmarkCMDBSyncFirstWave is bench/cmdb/firstwave's sync, written as
// the first wave's dialect allows (a loop per kind, JSON written by
// templates).
func BenchmarkCMDBSyncFirstWave(b *testing.B) {
	benchSync(b, "bench/cmdb/firstwave/cmdb_sync_firstwave.yaml", "cmdb_sync_firstwave")
}
