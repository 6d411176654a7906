package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/sqlite"
)

type nopBackend struct{}

func (nopBackend) CallTool(context.Context, runtime.ToolCall) (*runtime.ToolResult, error) {
	return &runtime.ToolResult{Structured: map[string]any{}}, nil
}

// BenchmarkDurableStart measures what waiting for the start record of a
// step that is not idempotent costs with the SQLite store: a chain of 10
// tool steps, all not idempotent (every start waits for its write) or all
// idempotent (starts are written in the background).
func BenchmarkDurableStart(b *testing.B) {
	for _, idem := range []bool{false, true} {
		b.Run(fmt.Sprintf("idempotent=%v", idem), func(b *testing.B) {
			wf := &ir.Workflow{Name: "chain", Pos: ir.Pos{File: "wf.yaml", Line: 1, Col: 1}, MaxParallel: 10, FailureMode: ir.FailureAbort, InputSchema: map[string]any{"type": "object"}}
			for i := range 10 {
				s := &ir.Step{Index: i, ID: fmt.Sprintf("s%d", i), Type: ir.StepTool, Tool: &ir.ToolRef{Backend: "svc", Name: "x"}, Idempotent: idem}
				if i > 0 {
					s.Deps = []int{i - 1}
				}
				wf.Steps = append(wf.Steps, s)
			}
			st, err := sqlite.Open(filepath.Join(b.TempDir(), "runs.db"), sqlite.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			e, err := runtime.New(&ir.Plan{Version: ir.Version, Workflows: []*ir.Workflow{wf}}, runtime.Options{Backend: nopBackend{}, Store: st})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				run, err := e.Run(context.Background(), "chain", nil, runtime.RunOptions{})
				if err != nil || run.Status != runtime.RunCompleted {
					b.Fatalf("run: %v %v", run, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10, "ns/step")
		})
	}
}
