package cmdb

import (
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

const ms = time.Millisecond

var lat = map[string]time.Duration{"k8s": 10 * ms, "graph": 4 * ms}

func calls(backend string, n int) []*Task {
	out := make([]*Task, n)
	for i := range out {
		out[i] = Call(backend)
	}
	return out
}

func TestSimulate(t *testing.T) {
	for _, tc := range []struct {
		name string
		task *Task
		lim  Limits
		want time.Duration
	}{
		{"a chain adds up", &Task{Parallel: 10, Nodes: calls("k8s", 3), Deps: [][]int{nil, {0}, {1}}}, Limits{}, 30 * ms},
		{"independent steps overlap", &Task{Parallel: 10, Nodes: calls("k8s", 3), Deps: [][]int{nil, nil, nil}}, Limits{}, 10 * ms},
		{"the workflow's maxParallel queues steps", &Task{Parallel: 2, Nodes: calls("k8s", 3), Deps: [][]int{nil, nil, nil}}, Limits{}, 20 * ms},
		{"a loop runs in waves of its maxParallel", &Task{Loop: true, Parallel: 3, Items: calls("k8s", 10)}, Limits{}, 40 * ms},
		{"skipped iterations cost nothing", &Task{Loop: true, Parallel: 1, Items: []*Task{Call("k8s"), Empty(), Call("graph")}}, Limits{}, 14 * ms},
		{"the server's total bounds two loops together", &Task{Parallel: 10,
			Nodes: []*Task{{Loop: true, Parallel: 10, Items: calls("k8s", 10)}, {Loop: true, Parallel: 10, Items: calls("k8s", 10)}},
			Deps:  [][]int{nil, nil}}, Limits{Total: 5}, 40 * ms},
		{"a backend's slots bound only its calls", &Task{Parallel: 10,
			Nodes: []*Task{{Loop: true, Parallel: 10, Items: calls("k8s", 4)}, {Loop: true, Parallel: 10, Items: calls("graph", 4)}},
			Deps:  [][]int{nil, nil}}, Limits{PerBackend: map[string]int{"k8s": 2}}, 20 * ms},
		// Two slots, three ready steps: c, which d waits for, goes first
		// with a (c and d end at 14ms); plan order (a and b first) would
		// start c at 4ms and end at 18ms.
		{"the longest remaining path goes first", &Task{Parallel: 2,
			Nodes: []*Task{Call("graph"), Call("graph"), Call("graph"), Call("k8s")},
			Deps:  [][]int{nil, nil, nil, {2}}}, Limits{}, 14 * ms},
	} {
		if got := Simulate(tc.task, lat, tc.lim); got != tc.want {
			t.Errorf("Simulate(%s) = %v; want %v", tc.name, got, tc.want)
		}
		if lb := LowerBound(tc.task, lat, tc.lim); lb > tc.want {
			t.Errorf("LowerBound(%s) = %v; more than the schedule's %v", tc.name, lb, tc.want)
		}
	}
}

func TestLowerBound(t *testing.T) {
	loops := &Task{Parallel: 10,
		Nodes: []*Task{{Loop: true, Parallel: 10, Items: calls("k8s", 10)}, {Loop: true, Parallel: 10, Items: calls("graph", 10)}},
		Deps:  [][]int{nil, nil}}
	// 100ms of k8s work on 2 slots: 50ms, more than the critical path
	// (10ms) or all work on 10 slots (14ms).
	if got := LowerBound(loops, lat, Limits{Total: 10, PerBackend: map[string]int{"k8s": 2}}); got != 50*ms {
		t.Errorf("LowerBound = %v; want 50ms", got)
	}
}

func TestFromRun(t *testing.T) {
	wf := &ir.Workflow{MaxParallel: 7, Steps: []*ir.Step{
		{ID: "list", Type: ir.StepTool, Tool: &ir.ToolRef{Backend: "k8s"}},
		{ID: "write", Type: ir.StepForEach, Deps: []int{0}, ForEach: &ir.ForEach{MaxParallel: 3,
			Step: &ir.Step{Type: ir.StepTool, Tool: &ir.ToolRef{Backend: "graph"}}}},
	}}
	run := &runtime.Run{Steps: []runtime.StepState{
		{ID: "list", Status: runtime.StepCompleted},
		{ID: "write", Status: runtime.StepCompleted, Output: map[string]any{"iterations": []any{
			map[string]any{"status": "completed"}, map[string]any{"status": "skipped"}, map[string]any{"status": "completed"},
		}}},
	}}
	task, err := FromRun(wf, run)
	if err != nil {
		t.Fatal(err)
	}
	if task.Parallel != 7 || task.Calls() != 3 || len(task.Nodes[1].Items) != 3 || task.Nodes[1].Parallel != 3 {
		t.Errorf("FromRun = parallel %d, %d calls, loop of %d at %d; want 7, 3, 3 at 3", task.Parallel, task.Calls(), len(task.Nodes[1].Items), task.Nodes[1].Parallel)
	}
	if got := Simulate(task, lat, Limits{}); got != 14*ms {
		t.Errorf("Simulate(FromRun) = %v; want 14ms", got)
	}
	wf.Steps[0].Type = ir.StepElicitation
	if _, err := FromRun(wf, run); err == nil {
		t.Errorf("FromRun with an elicitation step = nil error; want one")
	}
}

// TestFromRunBodies: a loop whose body lists then writes, with the write
// skipped by its condition in one iteration.
func TestFromRunBodies(t *testing.T) {
	body := []*ir.Step{
		{ID: "list", Type: ir.StepTool, Tool: &ir.ToolRef{Backend: "k8s"}},
		{ID: "write", Type: ir.StepTool, Deps: []int{0}, Tool: &ir.ToolRef{Backend: "graph"}},
	}
	wf := &ir.Workflow{MaxParallel: 10, Steps: []*ir.Step{
		{ID: "each", Type: ir.StepForEach, ForEach: &ir.ForEach{MaxParallel: 1, Steps: body}},
	}}
	iter := func(write string) any {
		return map[string]any{"status": "completed", "steps": map[string]any{
			"list":  map[string]any{"status": "completed"},
			"write": map[string]any{"status": write},
		}}
	}
	run := &runtime.Run{Steps: []runtime.StepState{{ID: "each", Status: runtime.StepCompleted,
		Output: map[string]any{"iterations": []any{iter("completed"), iter("skipped")}}}}}
	task, err := FromRun(wf, run)
	if err != nil {
		t.Fatal(err)
	}
	if task.Calls() != 3 {
		t.Errorf("FromRun: %d calls; want 3 (two lists, one write)", task.Calls())
	}
	// One iteration at a time: list+write, then list.
	if got := Simulate(task, lat, Limits{}); got != 24*ms {
		t.Errorf("Simulate(FromRun) = %v; want 24ms", got)
	}
}
