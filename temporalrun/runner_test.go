package temporalrun

import (
	"context"
	"errors"
	"slices"
	"testing"

	"go.temporal.io/sdk/client"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/runtime"
)

// noClient is a Temporal client whose every method panics: the runner
// must not reach Temporal.
type noClient struct{ client.Client }

func TestRunnerRefusesBadArgumentsBeforeRecordingOrStarting(t *testing.T) {
	plan := compile(t, `
compositeTools:
  - name: needs
    description: needs n
    parameters: {n: {type: integer, required: true}}
    steps:
      - {id: a, tool: b.t, arguments: {n: "{{.params.n}}"}}
`)
	store := runtime.NewMemoryStore(0)
	// A nil Temporal client would panic if the runner tried to start a
	// workflow; it must not get that far.
	r, err := NewRunner(RunnerOptions{Client: noClient{}, TaskQueue: "q", Plan: plan, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Run(context.Background(), "needs", map[string]any{"n": "many"}, runtime.RunOptions{})
	var ie *runtime.InputError
	if !errors.As(err, &ie) {
		t.Fatalf("Run with n: \"many\" = %v; want an *runtime.InputError", err)
	}
	if runs, _ := store.ListRuns(context.Background(), runtime.RunFilter{}); len(runs) != 0 {
		t.Errorf("the store holds %d runs after a refused call; want none", len(runs))
	}
}

// startRecorder is a Temporal client that records the input of each
// workflow it is asked to start, and refuses to start it.
type startRecorder struct {
	client.Client
	inputs []Input
}

func (c *startRecorder) ExecuteWorkflow(_ context.Context, _ client.StartWorkflowOptions, _ any, args ...any) (client.WorkflowRun, error) {
	c.inputs = append(c.inputs, args[0].(Input))
	return nil, errors.New("not started: recorded only")
}

// TestRunnerServesWhatIsPublishedAndDrafts: a workflow published after
// the start (an authored one, SetWorkflows) runs with the new plan and the
// tools it calls in its input; a draft travels in its run's plan in place
// of the served workflow of its name, beside the others, and its record
// says it is a draft, with its version.
func TestRunnerServesWhatIsPublishedAndDrafts(t *testing.T) {
	first := compile(t, `
compositeTools:
  - {name: one, description: d, steps: [{id: a, tool: b.t}]}
`)
	both := compile(t, `
compositeTools:
  - {name: one, description: d, steps: [{id: a, tool: b.t}]}
  - {name: two, description: d, steps: [{id: a, tool: b.u}]}
`)
	draft := compile(t, `
compositeTools:
  - {name: two, description: the draft, steps: [{id: a, tool: b.t}, {id: c, tool: b.u, dependsOn: [a]}]}
`).Workflows[0]
	draft.Version = "draft-1"
	live := catalog.New()
	live.Backends["b"] = &catalog.Backend{Tools: []*catalog.Tool{{Name: "t", InputSchema: map[string]any{"type": "object"}}, {Name: "u", InputSchema: map[string]any{"type": "object"}}, {Name: "unused", InputSchema: map[string]any{"type": "object"}}}}
	rec := &startRecorder{}
	store := runtime.NewMemoryStore(0)
	r, err := NewRunner(RunnerOptions{Client: rec, TaskQueue: "q", Plan: first, Tools: live, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := r.Run(ctx, "two", nil, runtime.RunOptions{}); !errors.Is(err, runtime.ErrUnknownWorkflow) {
		t.Fatalf("Run(two) before it is published = %v; want ErrUnknownWorkflow", err)
	}
	if err := r.SetWorkflows(both); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Workflow("two"); !ok {
		t.Fatal("Workflow(two) after SetWorkflows: not found")
	}
	r.Run(ctx, "two", nil, runtime.RunOptions{RunID: "saved"})
	r.Run(ctx, "two", nil, runtime.RunOptions{RunID: "draft", Draft: draft})
	if len(rec.inputs) != 2 {
		t.Fatalf("%d workflows started; want 2", len(rec.inputs))
	}
	names := func(in Input) (out []string) {
		for _, wf := range in.Plan.Workflows {
			out = append(out, wf.Name+":"+wf.Description)
		}
		for _, tl := range in.Tools.Backends["b"].Tools {
			out = append(out, "tool "+tl.Name)
		}
		return out
	}
	saved, dr := rec.inputs[0], rec.inputs[1]
	if got, want := names(saved), []string{"one:d", "two:d", "tool t", "tool u"}; !slices.Equal(got, want) || saved.Draft {
		t.Errorf("the saved run's input: %v, draft %v; want %v, not a draft", got, saved.Draft, want)
	}
	if got, want := names(dr), []string{"two:the draft", "one:d", "tool t", "tool u"}; !slices.Equal(got, want) || !dr.Draft || dr.Workflow != "two" {
		t.Errorf("the draft run's input: %v, draft %v, workflow %q; want %v, a draft of two", got, dr.Draft, dr.Workflow, want)
	}
	run, err := store.GetRun(ctx, "draft")
	if err != nil || !run.Draft || run.WorkflowVersion != "draft-1" {
		t.Errorf("the draft run's record = %+v, %v; want draft, version draft-1", run, err)
	}
}
