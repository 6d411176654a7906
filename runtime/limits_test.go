package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// New refuses a plan whose forEach allows more iterations than the
// server-wide limit (limits.maxIterations), naming the step.
func TestIterationLimitAtStartup(t *testing.T) {
	loop := forEach("loop", "{{.params.items}}", "item", tool("", "svc.x", nil))
	loop.ForEach.MaxIterations = 100
	p := plan(build("big", loop))
	_, err := New(p, Options{Backend: newFake(nil), MaxIterations: 50})
	if err == nil || !strings.Contains(err.Error(), `workflow "big" step "loop" (wf.yaml:20:5): maxIterations 100 is over the server-wide limit of 50 iterations`) ||
		!strings.Contains(err.Error(), "limits.maxIterations") {
		t.Errorf("New with limit 50 = %v; want an error naming the step and limits.maxIterations", err)
	}
	if _, err := New(p, Options{Backend: newFake(nil)}); err != nil {
		t.Errorf("New with the default limit = %v; want no error", err)
	}
}

// A configured limit above the default lets a loop run more than 1000
// iterations.
func TestIterationLimitAboveDefault(t *testing.T) {
	loop := forEach("loop", "{{.params.items}}", "item", tool("", "svc.x", nil))
	loop.ForEach.MaxIterations = 1200
	loop.ForEach.MaxParallel = 50
	items := make([]any, 1100)
	for i := range items {
		items[i] = i
	}
	e := mustEngine(t, plan(build("big", loop)), Options{Backend: newFake(nil), MaxIterations: 1500})
	run, err := e.Run(context.Background(), "big", M{"items": items}, RunOptions{})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v; want completed", run.Status, err)
	}
	if out := run.Output.(map[string]any); fmt.Sprint(out["count"]) != "1100" {
		t.Errorf("count = %v; want 1100", out["count"])
	}
}
