package temporalrun

import (
	"context"
	"errors"
	"testing"

	"go.temporal.io/sdk/client"

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
