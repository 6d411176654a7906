package temporalbench

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/temporalrun"
)

// concurrent is how many runs start at once; steps how many each has.
const concurrent, steps = 100, 5

const chain = `
compositeTools:
  - name: chain
    description: five echo calls, each reading the one before
    steps:
      - {id: s1, tool: b.echo, arguments: {text: "a"}}
      - {id: s2, tool: b.echo, dependsOn: [s1], arguments: {text: "{{.steps.s1.output.text}}b"}}
      - {id: s3, tool: b.echo, dependsOn: [s2], arguments: {text: "{{.steps.s2.output.text}}c"}}
      - {id: s4, tool: b.echo, dependsOn: [s3], arguments: {text: "{{.steps.s3.output.text}}d"}}
      - {id: s5, tool: b.echo, dependsOn: [s4], arguments: {text: "{{.steps.s4.output.text}}e"}}
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

// burst runs concurrent runs at once and fails on any that does not
// complete with the chain's output.
func burst(b *testing.B, r runner) {
	var wg sync.WaitGroup
	errs := make(chan error, concurrent)
	for range concurrent {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			run, err := r.Run(ctx, "chain", nil, runtime.RunOptions{})
			switch {
			case err != nil:
				errs <- err
			case run.Status != runtime.RunCompleted:
				errs <- fmt.Errorf("run %s: %s %v", run.ID, run.Status, run.Error)
			case run.Output.(map[string]any)["text"] != "abcde":
				errs <- fmt.Errorf("run %s: output %v", run.ID, run.Output)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// report adds runs/s and µs/step.
func report(b *testing.B, elapsed time.Duration) {
	runs := float64(b.N * concurrent)
	b.ReportMetric(runs/elapsed.Seconds(), "runs/s")
	b.ReportMetric(float64(elapsed.Microseconds())/(runs*steps), "µs/step")
}

func BenchmarkBurst(b *testing.B) {
	p := plan(b)
	b.Run("local", func(b *testing.B) {
		eng, err := runtime.New(p, runtime.Options{Backend: echo{}})
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			burst(b, eng)
		}
		report(b, time.Since(start))
	})
	ts := testenv.StartTemporal(b, 17470, 17489)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("temporal_%dworker", workers), func(b *testing.B) {
			queue := fmt.Sprintf("bench-%d-%d", workers, time.Now().UnixNano())
			for range workers {
				wc := dial(b, ts)
				w := temporalrun.NewWorker(wc, queue, echo{}, temporalrun.WorkerOptions{})
				if err := w.Start(); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(w.Stop)
			}
			r, err := temporalrun.NewRunner(temporalrun.RunnerOptions{
				Client: dial(b, ts), TaskQueue: queue, Plan: p, Store: runtime.NewMemoryStore(0),
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				burst(b, r)
			}
			report(b, time.Since(start))
		})
	}
}

func dial(b *testing.B, ts *testenv.TemporalServer) client.Client {
	c, err := client.Dial(client.Options{HostPort: ts.Address, Namespace: ts.Namespace, Logger: quiet{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c
}

// quiet drops the SDK's logs.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}
