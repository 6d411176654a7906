package temporalbench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/temporalrun"
)

// concurrent is how many runs a burst starts at once; steps how many the
// chain has.
const concurrent, steps = 100, 5

// The chain's steps may run twice (idempotent: true), as a read-only
// tool's would (readOnlyHint): that is what lets a quick step run as a
// local activity. "one" is the chain's first step alone, for the run's
// fixed cost.
const chain = `
compositeTools:
  - name: chain
    description: five echo calls, each reading the one before
    steps:
      - {id: s1, tool: b.echo, idempotent: true, arguments: {text: "a"}}
      - {id: s2, tool: b.echo, idempotent: true, dependsOn: [s1], arguments: {text: "{{.steps.s1.output.text}}b"}}
      - {id: s3, tool: b.echo, idempotent: true, dependsOn: [s2], arguments: {text: "{{.steps.s2.output.text}}c"}}
      - {id: s4, tool: b.echo, idempotent: true, dependsOn: [s3], arguments: {text: "{{.steps.s3.output.text}}d"}}
      - {id: s5, tool: b.echo, idempotent: true, dependsOn: [s4], arguments: {text: "{{.steps.s4.output.text}}e"}}
  - name: one
    description: the chain's first step alone
    steps:
      - {id: s1, tool: b.echo, idempotent: true, arguments: {text: "abcde"}}
`

// echo is the backend: it answers {text} at once.
type echo struct{}

func (echo) CallTool(_ context.Context, call runtime.ToolCall) (*runtime.ToolResult, error) {
	return &runtime.ToolResult{Structured: map[string]any{"text": call.Arguments["text"]}}, nil
}

func plan(b *testing.B) *ir.Plan {
	p, diags := compiler.Compile([]compiler.Source{{Name: "chain.yaml", Src: []byte(chain)}}, compiler.Options{})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	return p
}

// runner is what the benchmark drives: the local engine or the Temporal
// runner.
type runner interface {
	Run(ctx context.Context, workflow string, params map[string]any, opts runtime.RunOptions) (*runtime.Run, error)
}

// runOne runs workflow once and checks that it completed with "abcde".
func runOne(r runner, workflow string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run, err := r.Run(ctx, workflow, nil, runtime.RunOptions{})
	switch {
	case err != nil:
		return err
	case run.Status != runtime.RunCompleted:
		return fmt.Errorf("run %s: %s %v", run.ID, run.Status, run.Error)
	case run.Output.(map[string]any)["text"] != "abcde":
		return fmt.Errorf("run %s: output %v", run.ID, run.Output)
	}
	return nil
}

// burst runs concurrent chains at once and fails on any that does not
// complete with the chain's output.
func burst(b *testing.B, r runner) {
	var wg sync.WaitGroup
	errs := make(chan error, concurrent)
	for range concurrent {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := runOne(r, "chain"); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// cluster is a set of workers on their own task queue and a runner that
// starts runs on it.
type cluster struct {
	runner  *temporalrun.Runner
	workers []worker.Worker
	clients []client.Client
}

// startCluster starts n workers (local activities on or off) on a new
// queue and warms them up: one run, so that the workers have timed the
// tool and hold the workflow in their caches.
func startCluster(b *testing.B, ts *testenv.TemporalServer, p *ir.Plan, n int, local bool) *cluster {
	queue := fmt.Sprintf("bench-%d-%t-%d", n, local, time.Now().UnixNano())
	cl := &cluster{}
	for range n {
		c := dial(b, ts)
		cl.clients = append(cl.clients, c)
		w := temporalrun.NewWorker(c, queue, echo{}, temporalrun.WorkerOptions{Local: temporalrun.LocalOptions{Off: !local}})
		if err := w.Start(); err != nil {
			b.Fatal(err)
		}
		cl.workers = append(cl.workers, w)
	}
	c := dial(b, ts)
	cl.clients = append(cl.clients, c)
	r, err := temporalrun.NewRunner(temporalrun.RunnerOptions{
		Client: c, TaskQueue: queue, Plan: p, Store: runtime.NewMemoryStore(0),
	})
	if err != nil {
		b.Fatal(err)
	}
	cl.runner = r
	for range 2 {
		if err := runOne(r, "chain"); err != nil {
			b.Fatal(err)
		}
	}
	return cl
}

func (cl *cluster) stop() {
	for _, w := range cl.workers {
		w.Stop()
	}
	for _, c := range cl.clients {
		c.Close()
	}
}

// mode is one way of running: the executor, and for Temporal the
// workers and whether quick steps run as local activities.
type mode struct {
	name    string
	workers int // 0: the local engine
	local   bool
}

// start starts the mode: for Temporal, a dev server of its own and the
// workers. A fresh server per mode and round, because on the dev server a
// workflow task waited 3-5 ms for its worker with one task queue in use and
// 30-40 ms once the queues of a few earlier modes had been used, even with
// their workers stopped: each mode is measured on a server that knows only
// its own queue, as a deployment's would be. ts is nil for the local engine.
func (m mode) start(b *testing.B, p *ir.Plan) (r runner, ts *testenv.TemporalServer, stop func()) {
	if m.workers == 0 {
		eng, err := runtime.New(p, runtime.Options{Backend: echo{}})
		if err != nil {
			b.Fatal(err)
		}
		return eng, nil, func() {}
	}
	ts = testenv.StartTemporal(b, 17470, 17489)
	cl := startCluster(b, ts, p, m.workers, m.local)
	return cl.runner, ts, func() { cl.stop(); ts.Stop() }
}

// serverCPU is the CPU time ts's process has used (0 without a server).
func serverCPU(b *testing.B, ts *testenv.TemporalServer) time.Duration {
	if ts == nil {
		return 0
	}
	d, err := ts.CPUTime()
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// cpu is this process's CPU time (the workers, the runner, the engine).
func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBurst starts 100 chains at once, for each mode in interleaved
// rounds (each b.N iteration is one round over every mode, so the
// machine's drift hits them all alike), and reports per mode runs/s,
// µs/step (wall time over steps: the inverse of throughput), and the CPU
// the dev server and this process (workers and runner) spent per run,
// with the server's share of the wall time in cores: at about 1 on this
// 2-core machine, beside the workers' share, the server is the limit.
func BenchmarkBurst(b *testing.B) {
	p := plan(b)
	modes := []mode{{name: "local"}}
	for _, n := range []int{1, 2, 4} {
		modes = append(modes, mode{name: fmt.Sprintf("activities_%dw", n), workers: n})
		modes = append(modes, mode{name: fmt.Sprintf("local_activities_%dw", n), workers: n, local: true})
	}
	type total struct{ wall, server, self time.Duration }
	totals := make([]total, len(modes))
	b.ResetTimer()
	for range b.N {
		for i, m := range modes {
			b.StopTimer()
			r, ts, stop := m.start(b, p)
			s0 := serverCPU(b, ts)
			c0, t0 := cpu(), time.Now()
			b.StartTimer()
			burst(b, r)
			b.StopTimer()
			totals[i].wall += time.Since(t0)
			totals[i].self += cpu() - c0
			totals[i].server += serverCPU(b, ts) - s0
			stop()
			b.StartTimer()
		}
	}
	b.StopTimer()
	runs := float64(b.N * concurrent)
	for i, m := range modes {
		t := totals[i]
		b.ReportMetric(runs/t.wall.Seconds(), "runs/s_"+m.name)
		b.ReportMetric(float64(t.wall.Microseconds())/(runs*steps), "µs/step_"+m.name)
		if m.workers > 0 {
			b.ReportMetric(float64(t.server.Microseconds())/1000/runs, "server_ms/run_"+m.name)
			b.ReportMetric(t.server.Seconds()/t.wall.Seconds(), "server_cores_"+m.name)
		}
		b.ReportMetric(float64(t.self.Microseconds())/1000/runs, "self_ms/run_"+m.name)
	}
}

// BenchmarkStep runs one run at a time, the five-step chain and its first
// step alone, for each mode in interleaved rounds, and reports the
// latency Temporal adds per step, from the medians of the runs' times
// (the machine's other load makes a few runs ten times slower, which
// would make a mean say more about the load than about the executor):
// ms_added/step is the chain's median time minus the local engine's, over
// its five steps; ms/extra_step is the slope, the chain's median minus
// the one-step run's, over the four steps more, which leaves out the
// run's fixed cost (start, follow, result); ms/run_one is that fixed cost
// with one step.
func BenchmarkStep(b *testing.B) {
	p := plan(b)
	modes := []mode{{name: "local"}, {name: "activities", workers: 1}, {name: "local_activities", workers: 1, local: true}}
	const seq = 20 // runs of each workflow per round
	type times struct{ chain, one []time.Duration }
	all := make([]times, len(modes))
	b.ResetTimer()
	for range b.N {
		for i, m := range modes {
			b.StopTimer()
			r, _, stop := m.start(b, p)
			b.StartTimer()
			for range seq {
				for _, wf := range []string{"chain", "one"} {
					t0 := time.Now()
					if err := runOne(r, wf); err != nil {
						b.Fatal(err)
					}
					if d := time.Since(t0); wf == "chain" {
						all[i].chain = append(all[i].chain, d)
					} else {
						all[i].one = append(all[i].one, d)
					}
				}
			}
			b.StopTimer()
			stop()
			b.StartTimer()
		}
	}
	b.StopTimer()
	localChain := median(all[0].chain)
	for i, m := range modes {
		chain, one := median(all[i].chain), median(all[i].one)
		b.ReportMetric(chain, "ms/run_chain_"+m.name)
		b.ReportMetric(one, "ms/run_one_"+m.name)
		if m.workers > 0 {
			b.ReportMetric((chain-localChain)/steps, "ms_added/step_"+m.name)
			b.ReportMetric((chain-one)/(steps-1), "ms/extra_step_"+m.name)
		}
	}
}

// median is the median of ds in ms.
func median(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return float64(m.Microseconds()) / 1000
}

func dial(b *testing.B, ts *testenv.TemporalServer) client.Client {
	c, err := client.Dial(client.Options{HostPort: ts.Address, Namespace: ts.Namespace, Logger: quiet{}})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// quiet drops the SDK's logs.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
