package temporalrun

import (
	"testing"

	"github.com/vmcp-dev/vmcp/runtime"
)

func TestWorkflowSettlesSkippedStepsAndShapesTheResult(t *testing.T) {
	plan := compile(t, `
compositeTools:
  - name: skipper
    description: every step is skipped
    parameters: {go: {type: boolean, default: false}}
    steps:
      - id: a
        tool: b.t
        condition: "{{.params.go}}"
        defaultResults: {n: 1}
      - id: c
        tool: b.t
        dependsOn: [a]
        condition: "{{.params.go}}"
        defaultResults: {n: 2}
`)
	run := runInTestEnv(t, plan, "skipper", nil, &fakeBackend{})
	if run.Status != runtime.RunCompleted {
		t.Fatalf("status = %s (error %v); want completed", run.Status, run.Error)
	}
	for _, st := range run.Steps {
		if st.Status != runtime.StepSkipped {
			t.Errorf("step %s status = %s; want skipped", st.ID, st.Status)
		}
	}
	out, _ := run.Output.(map[string]any)
	if out["n"] != float64(2) {
		t.Errorf("output = %v; want the sink's defaultResults {n: 2}", run.Output)
	}
}
