package cmdb

// The floor of the sync's calls: what the same backend calls cost when a
// plain mcp-go client makes them, with no engine around it.
//
// BenchmarkCMDBFloor runs, in each round, the sync through vmcp (the
// engine built as `vmcp run` builds it, with a recorder around the
// backend manager) and then a replay of exactly the calls that run made
// (tool, arguments) by plain mcp-go stdio clients against fresh copies
// of the same two servers, under the same limits: server.maxParallel
// calls in flight in all, each backend's maxParallel per backend, each
// backend's calls in the order vmcp started them. The replay knows no
// dependencies, so it is a floor no engine reaches: vmcp cannot start a
// call before the call it depends on has answered, the replay can.
// What the ratio shows is vmcp's cost per call on top of mcp-go's own
// (its client, the stdio pipes, JSON), and the dependencies' price.
//
// Metrics, per round: wall-ms and floor-ms (means), x-floor (the median
// of the rounds' wall/floor), x-ideal (wall against the zero-cost list
// schedule of ideal.go), and cpu-us/call and floor-cpu-us/call (this
// process's CPU, user and system, per call: vmcp's engine and MCP client
// against the plain client; the servers' CPU is theirs in both).
//
//	CMDB_K8S_LATENCY=15ms CMDB_GRAPH_LATENCY=3ms go test -run '^$' -bench CMDBFloor -benchtime 6x ./bench/cmdb/

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/examples/cmdb/cluster"
	"github.com/vmcp-dev/vmcp/runtime"
)

// recorder keeps the calls that pass through it, in start order.
type recorder struct {
	inner runtime.Backend
	mu    sync.Mutex
	on    bool
	calls []runtime.ToolCall
}

func (r *recorder) CallTool(ctx context.Context, call runtime.ToolCall) (*runtime.ToolResult, error) {
	r.mu.Lock()
	if r.on {
		r.calls = append(r.calls, call)
	}
	r.mu.Unlock()
	return r.inner.CallTool(ctx, call)
}

// floorClients are plain mcp-go clients, one per backend, to fresh
// copies of the config's stdio servers.
type floorClients map[string]*mcpclient.Client

func startFloor(b *testing.B, cfg *config.Config) floorClients {
	b.Helper()
	fc := floorClients{}
	for name, be := range cfg.Backends {
		var env []string
		for k, v := range be.Env {
			env = append(env, k+"="+v)
		}
		c, err := mcpclient.NewStdioMCPClient(be.Command, append(os.Environ(), env...), be.Args...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err = c.Initialize(ctx, mcp.InitializeRequest{})
		cancel()
		if err != nil {
			b.Fatalf("floor client %s: %v", name, err)
		}
		fc[name] = c
	}
	return fc
}

// replay makes calls under lim: each backend's calls in their order, at
// most lim.PerBackend of them and lim.Total in all at once.
func (fc floorClients) replay(b *testing.B, calls []runtime.ToolCall, lim Limits) {
	total := make(chan struct{}, max(lim.Total, 1))
	byBackend := map[string][]runtime.ToolCall{}
	for _, c := range calls {
		byBackend[c.Backend] = append(byBackend[c.Backend], c)
	}
	var wg sync.WaitGroup
	var fail sync.Once
	var failed error
	for name, list := range byBackend {
		cl := fc[name]
		slots := make(chan struct{}, max(lim.PerBackend[name], 1))
		for _, call := range list {
			slots <- struct{}{}
			total <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-total; <-slots; wg.Done() }()
				res, err := cl.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: call.Tool, Arguments: call.Arguments}})
				if err == nil && res.IsError {
					err = fmt.Errorf("%s.%s answered isError", name, call.Tool)
				}
				if err != nil {
					fail.Do(func() { failed = err })
				}
			}()
		}
	}
	wg.Wait()
	if failed != nil {
		b.Fatalf("floor replay: %v", failed)
	}
}

// cpuTime is this process's user and system CPU so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkCMDBFloor(b *testing.B) {
	cl, err := cluster.Generate(cluster.Paper)
	if err != nil {
		b.Fatal(err)
	}
	want := cl.Expected()
	lat := map[string]time.Duration{"k8s": k8sLatency, "graph": graphLatency}
	for _, parallel := range []int{10, 50} {
		b.Run(fmt.Sprintf("parallel-%d", parallel), func(b *testing.B) {
			rec := &recorder{}
			eng, plan, lim, cfg := engineWith(b, "examples/cmdb/cmdb_sync.yaml", parallel, func(be runtime.Backend) runtime.Backend {
				rec.inner = be
				return rec
			})
			// One run to record the calls (and warm both sides up).
			rec.on = true
			last, _ := runSync(b, eng, "cmdb_sync", want)
			rec.on = false
			calls := rec.calls
			fc := startFloor(b, cfg)
			fc.replay(b, calls, lim)
			var wall, floor, cpu, floorCPU time.Duration
			var ratios []float64
			b.ResetTimer()
			for range b.N {
				c0 := cpuTime()
				_, w := runSync(b, eng, "cmdb_sync", want)
				c1 := cpuTime()
				start := time.Now()
				fc.replay(b, calls, lim)
				f := time.Since(start)
				c2 := cpuTime()
				wall, floor, cpu, floorCPU = wall+w, floor+f, cpu+c1-c0, floorCPU+c2-c1
				ratios = append(ratios, float64(w)/float64(f))
			}
			b.StopTimer()
			task, err := FromRun(plan.Workflows[0], last)
			if err != nil {
				b.Fatal(err)
			}
			ideal := Simulate(task, lat, lim)
			n := time.Duration(b.N)
			perCall := func(d time.Duration) float64 {
				return float64(d/n) / float64(time.Microsecond) / float64(len(calls))
			}
			slices.Sort(ratios)
			b.ReportMetric(float64(wall/n)/float64(time.Millisecond), "wall-ms")
			b.ReportMetric(float64(floor/n)/float64(time.Millisecond), "floor-ms")
			b.ReportMetric(ratios[len(ratios)/2], "x-floor")
			b.ReportMetric(float64(wall/n)/float64(ideal), "x-ideal")
			b.ReportMetric(perCall(cpu), "cpu-us/call")
			b.ReportMetric(perCall(floorCPU), "floor-cpu-us/call")
			b.ReportMetric(float64(len(calls)), "calls")
		})
	}
}
