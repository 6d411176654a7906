package planner

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
)

// TestPlanFinally plans the finally steps as a graph of their own: they are
// ordered topologically (a step written before its dependency moves after
// it), get levels and stats of their own, and FinallyBound is the longest
// chain of their timeouts.
func TestPlanFinally(t *testing.T) {
	w := build(t, "a", "b<-a")
	fin := build(t, "notify<-release", "release", "audit")
	timeouts := map[string]time.Duration{"notify": time.Minute, "release": 2 * time.Minute, "audit": 5 * time.Minute}
	for _, s := range fin.Steps {
		s.Timeout = ir.Duration(timeouts[s.ID])
	}
	w.Finally = fin.Steps
	plan, diags := Plan([]*ir.Workflow{w})
	if len(diags) > 0 {
		t.Fatalf("Plan: %v", diags)
	}
	got := plan.Workflows[0]
	var order []string
	for i, s := range got.Finally {
		if s.Index != i {
			t.Errorf("finally step %q has Index %d at position %d", s.ID, s.Index, i)
		}
		order = append(order, s.ID)
	}
	if diff := cmp.Diff([]string{"release", "notify", "audit"}, order); diff != "" {
		t.Errorf("finally order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0}, got.Finally[1].Deps); diff != "" {
		t.Errorf("notify's Deps (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]int{{0, 2}, {1}}, got.FinallyLevels); diff != "" {
		t.Errorf("FinallyLevels (-want +got):\n%s", diff)
	}
	if got.Stats.FinallySteps != 3 || got.Stats.FinallyLevels != 2 || got.Stats.TotalSteps != 2 {
		t.Errorf("Stats = %+v; want 2 steps, 3 finally steps in 2 levels", got.Stats)
	}
	if want := ir.Duration(5 * time.Minute); got.FinallyBound != want {
		t.Errorf("FinallyBound = %s; want %s (audit alone beats release then notify)", got.FinallyBound.D(), want.D())
	}
}

// TestPlanFinallyCycle reports a cycle among finally steps and leaves the
// workflow out of the plan.
func TestPlanFinallyCycle(t *testing.T) {
	w := build(t, "a")
	w.Finally = build(t, "x<-y", "y<-x").Steps
	plan, diags := Plan([]*ir.Workflow{w})
	if len(plan.Workflows) != 0 || len(diags) != 1 || diags[0].Code != CodeInternal {
		t.Fatalf("Plan = %d workflows, %v; want none and one %s", len(plan.Workflows), diags, CodeInternal)
	}
}
