package runtime

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

func versioned(wf *ir.Workflow, v string) *ir.Workflow { wf.Version = v; return wf }

// TestSetWorkflowsServesTheNewSet: after SetWorkflows the engine runs the
// new workflows and records their versions, while a run that started
// before keeps the workflow (and version) it started with.
func TestSetWorkflowsServesTheNewSet(t *testing.T) {
	fake := newFake(map[string]*fakeTool{"svc.slow": {Latency: 100 * time.Millisecond}})
	fake.Started = make(chan string, 4)
	e := mustEngine(t, plan(versioned(build("a", tool("s", "svc.slow", nil)), "1")), Options{Backend: fake})
	ctx := context.Background()

	var wg sync.WaitGroup
	var before *Run
	wg.Add(1)
	go func() {
		defer wg.Done()
		before, _ = e.Run(ctx, "a", nil, RunOptions{})
	}()
	<-fake.Started
	next := plan(versioned(build("a", tool("s", "svc.fast", nil)), "2"), versioned(build("b", tool("t", "svc.fast", nil)), "7"))
	if err := e.SetWorkflows(next); err != nil {
		t.Fatalf("SetWorkflows = %v", err)
	}
	wg.Wait()
	if before == nil || before.WorkflowVersion != "1" || before.Status != RunCompleted {
		t.Fatalf("the run started before SetWorkflows = %+v; want completed with version 1", before)
	}
	for name, want := range map[string]string{"a": "2", "b": "7"} {
		run, err := e.Run(ctx, name, nil, RunOptions{})
		if err != nil || run.WorkflowVersion != want {
			t.Fatalf("Run(%s) after SetWorkflows = %+v, %v; want version %s", name, run, err, want)
		}
		stored, err := e.Store().GetRun(ctx, run.ID)
		if err != nil || stored.WorkflowVersion != want {
			t.Errorf("stored run of %s = %+v, %v; want version %s", name, stored, err, want)
		}
	}
	if got := len(e.Workflows()); got != 2 {
		t.Errorf("Workflows() has %d workflows; want 2", got)
	}
}

// TestSetWorkflowsRefusesABadSet: a set that does not prepare (two
// workflows of one name) is refused and the engine keeps its workflows.
func TestSetWorkflowsRefusesABadSet(t *testing.T) {
	e := mustEngine(t, plan(build("a", tool("s", "svc.x", nil))), Options{Backend: newFake(nil)})
	err := e.SetWorkflows(plan(build("b", tool("s", "svc.x", nil)), build("b", tool("s", "svc.x", nil))))
	if err == nil {
		t.Fatal("SetWorkflows(two workflows named b) = nil; want an error")
	}
	if _, ok := e.Workflow("a"); !ok {
		t.Error("after a refused SetWorkflows, workflow a is gone; want the old set kept")
	}
	if _, ok := e.Workflow("b"); ok {
		t.Error("after a refused SetWorkflows, workflow b is served")
	}
}

// TestRunDraft: a draft runs once, marked as a draft in its record, and
// is not served afterwards; its workflow steps call served workflows.
func TestRunDraft(t *testing.T) {
	e := mustEngine(t, plan(build("child", tool("c", "svc.x", nil))), Options{Backend: newFake(nil)})
	draft := build("draft", step{Step: &ir.Step{ID: "w", Type: ir.StepWorkflow, Pos: at(5, 5),
		Workflow: &ir.WorkflowRef{Name: "child", Pos: at(6, 15)}}})
	ctx := context.Background()
	run, err := e.Run(ctx, "draft", nil, RunOptions{Draft: draft})
	if err != nil || run.Status != RunCompleted || !run.Draft {
		t.Fatalf("Run(draft) = %+v, %v; want a completed run marked draft", run, err)
	}
	stored, err := e.Store().GetRun(ctx, run.ID)
	if err != nil || !stored.Draft {
		t.Errorf("stored draft run = %+v, %v; want Draft set", stored, err)
	}
	kids, err := e.Store().ListRuns(ctx, RunFilter{Parent: run.ID})
	if err != nil || len(kids) != 1 || kids[0].Draft || kids[0].Workflow != "child" {
		t.Errorf("child runs of the draft = %+v, %v; want one run of child, not a draft", kids, err)
	}
	if _, err := e.Run(ctx, "draft", nil, RunOptions{}); !errors.Is(err, ErrUnknownWorkflow) {
		t.Errorf("Run(draft) after Run(draft) = %v; want ErrUnknownWorkflow (drafts are not served)", err)
	}
	bad := build("bad", step{Step: &ir.Step{ID: "w", Type: ir.StepWorkflow, Pos: at(5, 5),
		Workflow: &ir.WorkflowRef{Name: "nope", Pos: at(6, 15)}}})
	if _, err := e.Run(ctx, "bad", nil, RunOptions{Draft: bad}); err == nil {
		t.Error("Run(a draft calling an unknown workflow) = nil; want an error")
	}
}

// TestSetWorkflowsWhileRunning swaps the set while runs go (for -race).
func TestSetWorkflowsWhileRunning(t *testing.T) {
	e := mustEngine(t, plan(build("a", tool("s", "svc.x", nil))), Options{Backend: newFake(nil)})
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if i%2 == 0 {
					_ = e.SetWorkflows(plan(build("a", tool("s", "svc.x", nil))))
				} else if _, err := e.Run(ctx, "a", nil, RunOptions{}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
}
