package ir

import (
	"strings"
	"testing"
	"time"
)

// withFinally is samplePlan with two finally steps, the second after the
// first.
func withFinally() *Plan {
	p := samplePlan()
	w := p.Workflows[0]
	w.Finally = []*Step{
		{Index: 0, ID: "release", Type: StepTool, Tool: &ToolRef{Backend: "b", Name: "r"}, Dependents: []int{1}, Remaining: 2,
			Timeout: Duration(time.Minute), DefaultResults: map[string]any{"n": int64(1)}},
		{Index: 1, ID: "report", Type: StepTool, Tool: &ToolRef{Backend: "b", Name: "p"}, Deps: []int{0}, Level: 1, Remaining: 1,
			Timeout: Duration(time.Minute)},
	}
	w.FinallyLevels = [][]int{{0}, {1}}
	w.FinallyBound = Duration(2 * time.Minute)
	w.Stats.FinallySteps, w.Stats.FinallyLevels = 2, 2
	return p
}

func TestRoundTripFinally(t *testing.T) {
	p := withFinally()
	roundTrip(t, p)
}

// TestDecodeRejectsBadFinally: finally indexes are checked like step
// indexes, within the finally list.
func TestDecodeRejectsBadFinally(t *testing.T) {
	for name, edit := range map[string]func(w *Workflow){
		"dep on a later finally step": func(w *Workflow) { w.Finally[0].Deps = []int{1} },
		"level out of range":          func(w *Workflow) { w.FinallyLevels = [][]int{{0}, {2}} },
		"index out of order":          func(w *Workflow) { w.Finally[1].Index = 0 },
	} {
		p := withFinally()
		edit(p.Workflows[0])
		data, err := Encode(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(data); err == nil || !strings.Contains(err.Error(), "finally: ") {
			t.Errorf("Decode(%s) error = %v; want a finally error", name, err)
		}
	}
}
