package temporalrun

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// compile compiles one YAML source into a plan, failing the test on
// diagnostics.
func compile(t testing.TB, src string) *ir.Plan {
	t.Helper()
	plan, diags := compiler.Compile([]compiler.Source{{Name: "wf.yaml", Src: []byte(src)}}, compiler.Options{})
	if diags.HasErrors() {
		t.Fatalf("compiling:\n%s\n%v", src, diags)
	}
	return plan
}

// fakeBackend answers tool calls from a table of functions and records
// the calls.
type fakeBackend struct {
	mu    sync.Mutex
	tools map[string]func(ctx context.Context, args map[string]any) (*runtime.ToolResult, error)
	calls []runtime.ToolCall
}

func (f *fakeBackend) CallTool(ctx context.Context, call runtime.ToolCall) (*runtime.ToolResult, error) {
	f.mu.Lock()
	f.calls = append(f.calls, call)
	fn := f.tools[call.Backend+"."+call.Tool]
	f.mu.Unlock()
	if fn == nil {
		return nil, fmt.Errorf("no tool %s.%s", call.Backend, call.Tool)
	}
	return fn(ctx, call.Arguments)
}

// text is a tool result with one text item.
func text(s string) *runtime.ToolResult {
	return &runtime.ToolResult{Content: []runtime.Content{{Type: "text", Text: s}}}
}

// structured is a tool result with structuredContent.
func structured(v map[string]any) *runtime.ToolResult { return &runtime.ToolResult{Structured: v} }

// callsTo lists the calls made for a step.
func (f *fakeBackend) callsTo(step string) []runtime.ToolCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []runtime.ToolCall
	for _, c := range f.calls {
		if c.StepID == step {
			out = append(out, c)
		}
	}
	return out
}

// runInTestEnv runs workflow of plan in the SDK's test environment with
// backend behind the activities and returns the final run.
func runInTestEnv(t *testing.T, plan *ir.Plan, workflow string, params map[string]any, backend runtime.Backend, setup ...func(*testsuite.TestWorkflowEnvironment, *Input)) *runtime.Run {
	t.Helper()
	return runInTestEnvWith(t, plan, workflow, params, backend, LocalOptions{}, setup...)
}

// runInTestEnvWith is runInTestEnv on a worker with local options lo.
func runInTestEnvWith(t *testing.T, plan *ir.Plan, workflow string, params map[string]any, backend runtime.Backend, lo LocalOptions, setup ...func(*testsuite.TestWorkflowEnvironment, *Input)) *runtime.Run {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	Register(env, backend, lo)
	in := Input{Plan: plan, Workflow: workflow, Params: params, RunID: "run-1"}
	for _, f := range setup {
		f(env, &in)
	}
	env.ExecuteWorkflow(WorkflowName, in)
	if !env.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow error: %v", err)
	}
	var run runtime.Run
	if err := env.GetWorkflowResult(&run); err != nil {
		t.Fatalf("workflow result: %v", err)
	}
	return &run
}
