package mcpserver

import (
	"context"
	"testing"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/runtime"
)

// TestAdoptRun: with tasks, the adopted run is a live task while it goes
// (so its question can show as input_required) and gets the task's
// Elicitor; once it returns it is live no more. Without tasks the run gets
// no Elicitor.
func TestAdoptRun(t *testing.T) {
	plan, diags := compiler.Compile([]compiler.Source{{Name: "wf.yaml", Src: []byte(taskWorkflows)}}, compiler.Options{})
	if diags.HasErrors() {
		t.Fatalf("compile: %v", diags)
	}
	eng, err := runtime.New(plan, runtime.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	withTasks, err := New(Options{Runner: eng, Tasks: TaskOptions{Runs: eng}})
	if err != nil {
		t.Fatal(err)
	}
	want := &runtime.Run{ID: "r1", Status: runtime.RunCompleted}
	got, err := withTasks.AdoptRun(ctx, "r1", "ask", func(_ context.Context, el runtime.Elicitor) (*runtime.Run, error) {
		if _, ok := el.(*taskElicitor); !ok {
			t.Errorf("adopted run's Elicitor = %T; want the task's", el)
		}
		if withTasks.tasks.liveTaskOf("r1") == nil {
			t.Error("the adopted run is not a live task while it goes")
		}
		return want, nil
	})
	if err != nil || got != want {
		t.Errorf("AdoptRun = %v, %v; want the run's result", got, err)
	}
	if withTasks.tasks.liveTaskOf("r1") != nil {
		t.Error("the adopted run is still a live task after it returned")
	}

	plain, err := New(Options{Runner: eng})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.AdoptRun(ctx, "r2", "ask", func(_ context.Context, el runtime.Elicitor) (*runtime.Run, error) {
		if el != nil {
			t.Errorf("without tasks the Elicitor = %T; want nil", el)
		}
		return want, nil
	}); err != nil {
		t.Fatal(err)
	}
}
