package planner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
)

// spec is a step written as "id" or "id<-dep1,dep2".
type spec string

// build makes a checked workflow (source order, source-index Deps) from
// step specs, the way checker.Check hands it to the planner.
func build(t testing.TB, specs ...spec) *ir.Workflow {
	t.Helper()
	index := map[string]int{}
	for i, s := range specs {
		id, _, _ := strings.Cut(string(s), "<-")
		index[id] = i
	}
	w := &ir.Workflow{Name: "wf", Pos: ir.Pos{File: "wf.yaml", Line: 1, Col: 1},
		Timeout: ir.Duration(ir.DefaultWorkflowTimeout), MaxParallel: ir.DefaultMaxParallel}
	for i, s := range specs {
		id, deps, _ := strings.Cut(string(s), "<-")
		st := &ir.Step{Index: i, ID: id, Type: ir.StepTool, Tool: &ir.ToolRef{Backend: "b", Name: id}, Timeout: ir.Duration(ir.DefaultStepTimeout)}
		if deps != "" {
			for _, d := range strings.Split(deps, ",") {
				j, ok := index[d]
				if !ok {
					t.Fatalf("spec %q names unknown step %q", s, d)
				}
				st.Deps = append(st.Deps, j)
			}
		}
		w.Steps = append(w.Steps, st)
	}
	return w
}

// shape is what the tests compare: everything the planner computes, with
// step indexes written as ids so a failure reads without decoding.
type shape struct {
	Order        []string
	Deps         map[string][]string
	Dependents   map[string][]string
	Level        map[string]int
	Remaining    map[string]int
	Levels       [][]string
	Stats        ir.Stats
	CriticalPath []string
	Sinks        []string
}

func shapeOf(w *ir.Workflow) shape {
	ids := func(idx []int) []string {
		out := make([]string, len(idx))
		for i, x := range idx {
			out[i] = w.Steps[x].ID
		}
		return out
	}
	sh := shape{
		Deps:         map[string][]string{},
		Dependents:   map[string][]string{},
		Level:        map[string]int{},
		Remaining:    map[string]int{},
		Stats:        w.Stats,
		CriticalPath: ids(w.CriticalPath),
		Sinks:        ids(w.Sinks),
	}
	for _, s := range w.Steps {
		sh.Order = append(sh.Order, s.ID)
		if len(s.Deps) > 0 {
			sh.Deps[s.ID] = ids(s.Deps)
		}
		if len(s.Dependents) > 0 {
			sh.Dependents[s.ID] = ids(s.Dependents)
		}
		sh.Level[s.ID] = s.Level
		sh.Remaining[s.ID] = s.Remaining
	}
	for _, l := range w.Levels {
		sh.Levels = append(sh.Levels, ids(l))
	}
	return sh
}

func TestPlanShapes(t *testing.T) {
	tests := []struct {
		name  string
		specs []spec
		want  shape
	}{
		{
			name:  "diamond",
			specs: []spec{"fetch", "left<-fetch", "right<-fetch", "merge<-left,right"},
			want: shape{
				Order:        []string{"fetch", "left", "right", "merge"},
				Deps:         map[string][]string{"left": {"fetch"}, "right": {"fetch"}, "merge": {"left", "right"}},
				Dependents:   map[string][]string{"fetch": {"left", "right"}, "left": {"merge"}, "right": {"merge"}},
				Level:        map[string]int{"fetch": 0, "left": 1, "right": 1, "merge": 2},
				Remaining:    map[string]int{"fetch": 3, "left": 2, "right": 2, "merge": 1},
				Levels:       [][]string{{"fetch"}, {"left", "right"}, {"merge"}},
				Stats:        ir.Stats{TotalLevels: 3, TotalSteps: 4, MaxParallelism: 2, MinParallelism: 1, SequentialSteps: 2},
				CriticalPath: []string{"fetch", "left", "merge"},
				Sinks:        []string{"merge"},
			},
		},
		{
			name: "incident fan-out fan-in",
			specs: []spec{"fetch_logs", "fetch_metrics", "fetch_traces",
				"correlate<-fetch_logs,fetch_metrics,fetch_traces", "create_ticket<-correlate"},
			want: shape{
				Order: []string{"fetch_logs", "fetch_metrics", "fetch_traces", "correlate", "create_ticket"},
				Deps: map[string][]string{
					"correlate":     {"fetch_logs", "fetch_metrics", "fetch_traces"},
					"create_ticket": {"correlate"},
				},
				Dependents: map[string][]string{
					"fetch_logs": {"correlate"}, "fetch_metrics": {"correlate"}, "fetch_traces": {"correlate"},
					"correlate": {"create_ticket"},
				},
				Level:        map[string]int{"fetch_logs": 0, "fetch_metrics": 0, "fetch_traces": 0, "correlate": 1, "create_ticket": 2},
				Remaining:    map[string]int{"fetch_logs": 3, "fetch_metrics": 3, "fetch_traces": 3, "correlate": 2, "create_ticket": 1},
				Levels:       [][]string{{"fetch_logs", "fetch_metrics", "fetch_traces"}, {"correlate"}, {"create_ticket"}},
				Stats:        ir.Stats{TotalLevels: 3, TotalSteps: 5, MaxParallelism: 3, MinParallelism: 1, SequentialSteps: 2},
				CriticalPath: []string{"fetch_logs", "correlate", "create_ticket"},
				Sinks:        []string{"create_ticket"},
			},
		},
		{
			name:  "wide",
			specs: []spec{"a", "b", "c", "d", "e"},
			want: shape{
				Order:        []string{"a", "b", "c", "d", "e"},
				Deps:         map[string][]string{},
				Dependents:   map[string][]string{},
				Level:        map[string]int{"a": 0, "b": 0, "c": 0, "d": 0, "e": 0},
				Remaining:    map[string]int{"a": 1, "b": 1, "c": 1, "d": 1, "e": 1},
				Levels:       [][]string{{"a", "b", "c", "d", "e"}},
				Stats:        ir.Stats{TotalLevels: 1, TotalSteps: 5, MaxParallelism: 5, MinParallelism: 5, SequentialSteps: 0},
				CriticalPath: []string{"a"},
				Sinks:        []string{"a", "b", "c", "d", "e"},
			},
		},
		{
			name:  "chain",
			specs: []spec{"a", "b<-a", "c<-b", "d<-c"},
			want: shape{
				Order:        []string{"a", "b", "c", "d"},
				Deps:         map[string][]string{"b": {"a"}, "c": {"b"}, "d": {"c"}},
				Dependents:   map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"d"}},
				Level:        map[string]int{"a": 0, "b": 1, "c": 2, "d": 3},
				Remaining:    map[string]int{"a": 4, "b": 3, "c": 2, "d": 1},
				Levels:       [][]string{{"a"}, {"b"}, {"c"}, {"d"}},
				Stats:        ir.Stats{TotalLevels: 4, TotalSteps: 4, MaxParallelism: 1, MinParallelism: 1, SequentialSteps: 4},
				CriticalPath: []string{"a", "b", "c", "d"},
				Sinks:        []string{"d"},
			},
		},
		{
			// Source lists the chain backwards: the plan must reverse it.
			name:  "reversed source",
			specs: []spec{"c<-b", "b<-a", "a"},
			want: shape{
				Order:        []string{"a", "b", "c"},
				Deps:         map[string][]string{"b": {"a"}, "c": {"b"}},
				Dependents:   map[string][]string{"a": {"b"}, "b": {"c"}},
				Level:        map[string]int{"a": 0, "b": 1, "c": 2},
				Remaining:    map[string]int{"a": 3, "b": 2, "c": 1},
				Levels:       [][]string{{"a"}, {"b"}, {"c"}},
				Stats:        ir.Stats{TotalLevels: 3, TotalSteps: 3, MaxParallelism: 1, MinParallelism: 1, SequentialSteps: 3},
				CriticalPath: []string{"a", "b", "c"},
				Sinks:        []string{"c"},
			},
		},
		{
			// b waits for d, which comes later in the file: b moves down
			// past c and d, and nothing else moves.
			name:  "stable among ready steps",
			specs: []spec{"a", "b<-d", "c", "d"},
			want: shape{
				Order:        []string{"a", "c", "d", "b"},
				Deps:         map[string][]string{"b": {"d"}},
				Dependents:   map[string][]string{"d": {"b"}},
				Level:        map[string]int{"a": 0, "b": 1, "c": 0, "d": 0},
				Remaining:    map[string]int{"a": 1, "b": 1, "c": 1, "d": 2},
				Levels:       [][]string{{"a", "c", "d"}, {"b"}},
				Stats:        ir.Stats{TotalLevels: 2, TotalSteps: 4, MaxParallelism: 3, MinParallelism: 1, SequentialSteps: 1},
				CriticalPath: []string{"d", "b"},
				Sinks:        []string{"a", "c", "b"},
			},
		},
		{
			// r's dependents b and c tie on Remaining; c comes first in the
			// plan but b first in the source, and source order wins.
			name:  "critical path ties by source order",
			specs: []spec{"r", "b<-r,y", "c<-r", "y"},
			want: shape{
				Order:        []string{"r", "c", "y", "b"},
				Deps:         map[string][]string{"b": {"r", "y"}, "c": {"r"}},
				Dependents:   map[string][]string{"r": {"c", "b"}, "y": {"b"}},
				Level:        map[string]int{"r": 0, "b": 1, "c": 1, "y": 0},
				Remaining:    map[string]int{"r": 2, "b": 1, "c": 1, "y": 2},
				Levels:       [][]string{{"r", "y"}, {"c", "b"}},
				Stats:        ir.Stats{TotalLevels: 2, TotalSteps: 4, MaxParallelism: 2, MinParallelism: 2, SequentialSteps: 0},
				CriticalPath: []string{"r", "b"},
				Sinks:        []string{"c", "b"},
			},
		},
		{
			// A long branch beside a short one: levels follow the longest
			// path, so join sits at level 3 although one of its deps is at 0.
			name:  "longest path levels",
			specs: []spec{"short", "l1", "l2<-l1", "l3<-l2", "join<-short,l3"},
			want: shape{
				Order:        []string{"short", "l1", "l2", "l3", "join"},
				Deps:         map[string][]string{"l2": {"l1"}, "l3": {"l2"}, "join": {"short", "l3"}},
				Dependents:   map[string][]string{"short": {"join"}, "l1": {"l2"}, "l2": {"l3"}, "l3": {"join"}},
				Level:        map[string]int{"short": 0, "l1": 0, "l2": 1, "l3": 2, "join": 3},
				Remaining:    map[string]int{"short": 2, "l1": 4, "l2": 3, "l3": 2, "join": 1},
				Levels:       [][]string{{"short", "l1"}, {"l2"}, {"l3"}, {"join"}},
				Stats:        ir.Stats{TotalLevels: 4, TotalSteps: 5, MaxParallelism: 2, MinParallelism: 1, SequentialSteps: 3},
				CriticalPath: []string{"l1", "l2", "l3", "join"},
				Sinks:        []string{"join"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := build(t, tc.specs...)
			p, diags := Plan([]*ir.Workflow{w})
			if len(diags) != 0 {
				t.Fatalf("Plan(%v) diagnostics = %v; want none", tc.specs, diags)
			}
			if p.Version != ir.Version || len(p.Workflows) != 1 {
				t.Fatalf("Plan(%v) = version %q with %d workflows; want %q with 1", tc.specs, p.Version, len(p.Workflows), ir.Version)
			}
			if diff := cmp.Diff(tc.want, shapeOf(p.Workflows[0])); diff != "" {
				t.Errorf("Plan(%v) shape mismatch (-want +got):\n%s", tc.specs, diff)
			}
			checkInvariants(t, p.Workflows[0])
		})
	}
}

// checkInvariants asserts what the runtime relies on, independently of the
// expected shape: indexes match positions, deps point backwards, dependents
// mirror deps, and the plan survives an Encode/Decode round trip.
func checkInvariants(t *testing.T, w *ir.Workflow) {
	t.Helper()
	for i, s := range w.Steps {
		if s.Index != i {
			t.Errorf("step %q has Index %d at position %d", s.ID, s.Index, i)
		}
		for _, d := range s.Deps {
			if d >= i {
				t.Errorf("step %q (at %d) depends on later index %d", s.ID, i, d)
			}
			found := false
			for _, x := range w.Steps[d].Dependents {
				found = found || x == i
			}
			if !found {
				t.Errorf("step %q depends on %q, which does not list it as a dependent", s.ID, w.Steps[d].ID)
			}
		}
	}
	if got, want := len(w.CriticalPath), w.Stats.TotalLevels; got != want {
		t.Errorf("critical path has %d steps; want total_levels = %d", got, want)
	}
	data, err := ir.Encode(&ir.Plan{Version: ir.Version, Workflows: []*ir.Workflow{w}})
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if _, err := ir.Decode(data); err != nil {
		t.Errorf("Decode(Encode(plan)) = %v; want a valid plan", err)
	}
}

func TestPlanKeepsSourceOrderWhenAlreadyTopological(t *testing.T) {
	// A larger mixed shape in dependency order: the plan order must equal
	// the source order exactly.
	var specs []spec
	for i := 0; i < 30; i++ {
		switch {
		case i%7 == 0:
			specs = append(specs, spec(fmt.Sprintf("s%d", i)))
		case i%3 == 0:
			specs = append(specs, spec(fmt.Sprintf("s%d<-s%d,s%d", i, i-1, i-3)))
		default:
			specs = append(specs, spec(fmt.Sprintf("s%d<-s%d", i, i-1)))
		}
	}
	w := build(t, specs...)
	p, diags := Plan([]*ir.Workflow{w})
	if len(diags) != 0 {
		t.Fatalf("Plan diagnostics = %v; want none", diags)
	}
	for i, s := range p.Workflows[0].Steps {
		if want := fmt.Sprintf("s%d", i); s.ID != want {
			t.Fatalf("plan step %d = %q; want %q (source order kept)", i, s.ID, want)
		}
	}
	checkInvariants(t, p.Workflows[0])
}

func TestPlanForEachInnerStep(t *testing.T) {
	w := build(t, "scan<-list", "list")
	inner := &ir.Step{ID: "scan", Type: ir.StepTool, Tool: &ir.ToolRef{Backend: "osv", Name: "query"}}
	w.Steps[0].Type = ir.StepForEach
	w.Steps[0].Tool = nil
	w.Steps[0].ForEach = &ir.ForEach{ItemVar: "item", Step: inner}
	p, diags := Plan([]*ir.Workflow{w})
	if len(diags) != 0 {
		t.Fatalf("Plan diagnostics = %v; want none", diags)
	}
	scan := p.Workflows[0].Steps[1]
	if scan.ID != "scan" {
		t.Fatalf("plan step 1 = %q; want scan", scan.ID)
	}
	got := [3]int{inner.Index, inner.Level, inner.Remaining}
	want := [3]int{scan.Index, scan.Level, scan.Remaining}
	if got != want {
		t.Errorf("inner step (Index, Level, Remaining) = %v; want the forEach's %v", got, want)
	}
	if inner.Deps != nil || inner.Dependents != nil {
		t.Errorf("inner step has Deps %v Dependents %v; want none", inner.Deps, inner.Dependents)
	}
}

func TestPlanBrokenGraphs(t *testing.T) {
	tests := []struct {
		name    string
		specs   []spec
		mutate  func(w *ir.Workflow)
		message string
	}{
		{name: "two-step cycle", specs: []spec{"a<-b", "b<-a", "c"}, message: "dependency cycle among steps [a, b]"},
		{name: "cycle behind a root", specs: []spec{"root", "x<-root,z", "y<-x", "z<-y"}, message: "dependency cycle among steps [x, y, z]"},
		{name: "self dependency", specs: []spec{"a<-a"}, message: `step "a" depends on itself`},
		{name: "index out of range", specs: []spec{"a", "b"},
			mutate: func(w *ir.Workflow) { w.Steps[1].Deps = []int{7} }, message: `step "b" depends on index 7, out of range`},
		{name: "nil step", specs: []spec{"a", "b"},
			mutate: func(w *ir.Workflow) { w.Steps[1] = nil }, message: "step 1 is nil"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := build(t, tc.specs...)
			bad.Name = "bad"
			if tc.mutate != nil {
				tc.mutate(bad)
			}
			good := build(t, "a", "b<-a")
			p, diags := Plan([]*ir.Workflow{bad, good})
			if len(diags) != 1 {
				t.Fatalf("Plan(%v) diagnostics = %v; want exactly one", tc.specs, diags)
			}
			d := diags[0]
			if d.Code != CodeInternal || d.Pos != bad.Pos || !strings.Contains(d.Message, tc.message) {
				t.Errorf("Plan(%v) diagnostic = %s [%s]; want code %s at %s containing %q", tc.specs, d, d.Code, CodeInternal, bad.Pos, tc.message)
			}
			if len(p.Workflows) != 1 || p.Workflows[0] != good {
				t.Errorf("Plan(%v) kept %d workflows; want only the good one", tc.specs, len(p.Workflows))
			}
		})
	}
}

func TestPlanEmpty(t *testing.T) {
	p, diags := Plan(nil)
	if len(diags) != 0 || p.Version != ir.Version || p.Workflows == nil || len(p.Workflows) != 0 {
		t.Fatalf("Plan(nil) = %+v, %v; want an empty versioned plan", p, diags)
	}
	w := &ir.Workflow{Name: "none"}
	p, diags = Plan([]*ir.Workflow{w})
	if len(diags) != 0 {
		t.Fatalf("Plan(no steps) diagnostics = %v; want none", diags)
	}
	want := shape{Deps: map[string][]string{}, Dependents: map[string][]string{}, Level: map[string]int{},
		Remaining: map[string]int{}, CriticalPath: []string{}, Sinks: []string{}}
	if diff := cmp.Diff(want, shapeOf(p.Workflows[0])); diff != "" {
		t.Errorf("Plan(no steps) mismatch (-want +got):\n%s", diff)
	}
	if p.Workflows[0].Levels == nil || p.Workflows[0].CriticalPath == nil || p.Workflows[0].Sinks == nil {
		t.Errorf("Plan(no steps) left nil slices, which encode as null: %+v", p.Workflows[0])
	}
}
