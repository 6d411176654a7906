package planner

// The planner turns checked workflows (steps in source order, Deps as
// source indexes) into planned ones. Per workflow it does four passes over
// the dependency graph, each linear in steps plus edges:
//
//  1. Order. The graph is kept as adjacency lists of source indexes (an
//     edge from each dependency to its dependent, duplicates dropped); a
//     gonum simple.DirectedGraph of it is built only to name a cycle. The
//     order is Kahn's algorithm with a min-heap of ready steps keyed by
//     source index: repeatedly take the ready step that comes first in the
//     file, emit it, and release its dependents. This is the "stable"
//     topological order: a file whose steps are already in dependency order
//     keeps its order exactly, and a step moves only as far down as its
//     dependencies force it to. (gonum's topo.SortStabilized orders by a
//     depth-first search, which does not keep that property, so it is used
//     only to name the cycle when Kahn's algorithm stalls.)
//
//  2. Level = longest-path depth from a root: roots are level 0, any other
//     step is one more than its deepest dependency. One pass in the new
//     order suffices, since every dependency comes earlier. Levels[l] lists
//     the steps of level l in plan order.
//
//  3. Remaining = number of steps on the longest path from the step to a
//     sink, counting itself: sinks have 1, any other step one more than its
//     largest dependent. One pass in reverse plan order. The runtime starts
//     the ready step with the highest Remaining first.
//
//  4. Critical path: the longest chain has exactly TotalLevels steps, and
//     every root with Remaining == TotalLevels starts one. Start at the first
//     such root in source order, then repeatedly step to the dependent with
//     Remaining one less, again the first in source order. Ties are broken
//     by source order so the path does not depend on map iteration or on how
//     the topological sort interleaved independent branches.
//
// Loop bodies (ir.ForEach.Steps) are graphs of their own too and go
// through passes 1 to 4 the same way, nested bodies included; the loop
// counts as one step of the graph it sits in, so the statistics and the
// 100-step limit count a body with its loop as one.
//
// Finally steps (ir.Workflow.Finally) are a graph of their own and go
// through passes 1 to 3 the same way; FinallyBound is the largest sum of
// step timeouts along one of their chains, the longest they can run once
// the run has ended.
//
// Statistics (see ir.Stats): total_levels and total_steps are counts;
// max_parallelism and min_parallelism are the sizes of the largest and
// smallest level; sequential_steps is the number of levels holding exactly
// one step, i.e. the points where the workflow runs one step alone and
// cannot overlap anything else.
//
// A dependency cycle, a self-dependency or a dependency index out of range
// means the checker let a bad graph through; the planner reports it as an
// error diagnostic with code "internal_error" and leaves that workflow out
// of the plan, but never panics.

import (
	"container/heap"
	"fmt"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"

	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
)

// CodeInternal is the diagnostic code for a graph the checker should have
// rejected.
const CodeInternal = "internal_error"

// Plan reorders each workflow's steps topologically and fills in the graph
// facts the runtime and the CLI read: Deps (remapped), Dependents, Level,
// Remaining, Levels, Stats, CriticalPath and Sinks. The workflows are
// updated in place and returned in a Plan with the current ir.Version.
// A workflow whose graph is broken is left out of the plan and reported.
func Plan(wfs []*ir.Workflow) (*ir.Plan, diag.List) {
	var diags diag.List
	plan := &ir.Plan{Version: ir.Version, Workflows: make([]*ir.Workflow, 0, len(wfs))}
	for _, w := range wfs {
		if w == nil {
			continue
		}
		if err := planWorkflow(w); err != nil {
			diags.Errorf(w.Pos, "", CodeInternal, "internal error planning workflow %q: %v (please report this bug)", w.Name, err)
			continue
		}
		plan.Workflows = append(plan.Workflows, w)
	}
	return plan, diags
}

// planWorkflow plans one workflow in place: its steps, then its finally
// steps as a graph of their own. On error it leaves w unchanged.
func planWorkflow(w *ir.Workflow) error {
	steps, levels, srcOf, err := planGraph(w.Steps)
	if err != nil {
		return err
	}
	var finally []*ir.Step
	var finallyLevels [][]int
	if len(w.Finally) > 0 {
		if finally, finallyLevels, _, err = planGraph(w.Finally); err != nil {
			return fmt.Errorf("finally: %w", err)
		}
	}
	w.Steps = steps
	w.Levels = levels
	w.Stats = stats(levels, len(steps))
	w.Sinks = sinks(steps)
	w.CriticalPath = criticalPath(steps, srcOf)
	if len(finally) > 0 {
		w.Finally = finally
		w.FinallyLevels = finallyLevels
		w.Stats.FinallySteps = len(finally)
		w.Stats.FinallyLevels = len(finallyLevels)
		w.FinallyBound = ir.Duration(longestTimeoutChain(finally))
	}
	return nil
}

// planGraph orders one list of steps (Deps as indexes into it) and
// assigns Index, Deps, Dependents, Level and Remaining. It returns the
// steps in plan order, the levels and the source index of each planned
// step. The steps are updated only when it succeeds.
func planGraph(list []*ir.Step) (steps []*ir.Step, levels [][]int, srcOf []int, err error) {
	n := len(list)
	for i, s := range list {
		if s == nil {
			return nil, nil, nil, fmt.Errorf("step %d is nil", i)
		}
	}
	to, from, err := adjacency(list)
	if err != nil {
		return nil, nil, nil, err
	}
	order, err := stableOrder(to, from)
	if err != nil {
		g, gerr := buildGraph(list)
		if gerr != nil {
			return nil, nil, nil, gerr
		}
		return nil, nil, nil, describeCycle(err, g, list)
	}

	// newIndex[src] is the plan index of the step at source index src.
	newIndex := make([]int, n)
	for pos, src := range order {
		newIndex[src] = pos
	}
	srcOf = order // srcOf[pos] is the source index of the step at pos

	steps = make([]*ir.Step, n)
	for pos, src := range order {
		s := list[src]
		s.Index = pos
		s.Deps = remap(to[src], newIndex)
		s.Dependents = remap(from[src], newIndex)
		steps[pos] = s
	}

	levels = assignLevels(steps)
	assignRemaining(steps)

	for _, s := range steps {
		if s.ForEach != nil && s.ForEach.Step != nil {
			// The inner step is not a node of the graph: it runs inside its
			// forEach, so it shares the forEach's place in the plan.
			inner := s.ForEach.Step
			inner.Index = s.Index
			inner.Level = s.Level
			inner.Remaining = s.Remaining
		}
		if s.ForEach != nil && len(s.ForEach.Steps) > 0 {
			if err := planBody(s.ForEach); err != nil {
				return nil, nil, nil, fmt.Errorf("body of forEach %q: %w", s.ID, err)
			}
		}
	}
	return steps, levels, srcOf, nil
}

// planBody plans a loop body as a graph of its own (passes 1 to 4, and
// the bodies nested in it), filling ForEach.Levels, Sinks and
// CriticalPath as a workflow's.
func planBody(fe *ir.ForEach) error {
	steps, levels, srcOf, err := planGraph(fe.Steps)
	if err != nil {
		return err
	}
	fe.Steps = steps
	fe.Levels = levels
	fe.Sinks = sinks(steps)
	fe.CriticalPath = criticalPath(steps, srcOf)
	return nil
}

// longestTimeoutChain is the largest sum of step timeouts along a
// dependency chain; steps are in topological order. For finally steps it
// bounds how long they can run once the run has ended.
func longestTimeoutChain(steps []*ir.Step) time.Duration {
	until := make([]time.Duration, len(steps)) // longest chain ending at i
	var longest time.Duration
	for i, s := range steps {
		var before time.Duration
		for _, d := range s.Deps {
			before = max(before, until[d])
		}
		until[i] = before + s.Timeout.D()
		longest = max(longest, until[i])
	}
	return longest
}

// adjacency checks the dependencies and returns the graph as lists of
// distinct source indexes: to[i] are the steps step i depends on, from[i]
// the steps that depend on it, each in first-mention order.
func adjacency(steps []*ir.Step) (to, from [][]int, err error) {
	n := len(steps)
	to = make([][]int, n)
	from = make([][]int, n)
	seen := make([]int, n) // seen[d] == i+1: d already listed for step i
	for i, s := range steps {
		for _, d := range s.Deps {
			switch {
			case d < 0 || d >= n:
				return nil, nil, fmt.Errorf("step %q depends on index %d, out of range", s.ID, d)
			case d == i:
				return nil, nil, fmt.Errorf("step %q depends on itself", s.ID)
			}
			if seen[d] == i+1 {
				continue
			}
			seen[d] = i + 1
			to[i] = append(to[i], d)
			from[d] = append(from[d], i)
		}
	}
	return to, from, nil
}

// buildGraph makes the dependency graph: an edge dep -> step for every
// dependency, node IDs being source indexes.
func buildGraph(steps []*ir.Step) (*simple.DirectedGraph, error) {
	g := simple.NewDirectedGraph()
	for i := range steps {
		g.AddNode(simple.Node(int64(i)))
	}
	for i, s := range steps {
		for _, d := range s.Deps {
			switch {
			case d < 0 || d >= len(steps):
				return nil, fmt.Errorf("step %q depends on index %d, out of range", s.ID, d)
			case d == i:
				return nil, fmt.Errorf("step %q depends on itself", s.ID)
			}
			g.SetEdge(g.NewEdge(simple.Node(int64(d)), simple.Node(int64(i))))
		}
	}
	return g, nil
}

// readyHeap is a min-heap of source indexes.
type readyHeap []int

func (h readyHeap) Len() int           { return len(h) }
func (h readyHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h readyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *readyHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *readyHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// errCycle reports that Kahn's algorithm stalled.
type errCycle struct{}

func (e errCycle) Error() string { return "dependency cycle" }

// stableOrder returns source indexes in Kahn order, taking the ready step
// that comes first in the source each time.
func stableOrder(to, from [][]int) ([]int, error) {
	n := len(to)
	indeg := make([]int, n)
	ready := make(readyHeap, 0, n)
	for i := 0; i < n; i++ {
		indeg[i] = len(to[i])
		if indeg[i] == 0 {
			ready = append(ready, i)
		}
	}
	heap.Init(&ready)
	order := make([]int, 0, n)
	for ready.Len() > 0 {
		i := heap.Pop(&ready).(int)
		order = append(order, i)
		for _, j := range from[i] {
			indeg[j]--
			if indeg[j] == 0 {
				heap.Push(&ready, j)
			}
		}
	}
	if len(order) != n {
		return nil, errCycle{}
	}
	return order, nil
}

// describeCycle names the steps of each cycle, using gonum's strongly
// connected components, ordered by source index.
func describeCycle(err error, g *simple.DirectedGraph, steps []*ir.Step) error {
	_, terr := topo.SortStabilized(g, bySourceIndex)
	cycles, ok := terr.(topo.Unorderable)
	if !ok || len(cycles) == 0 {
		return err
	}
	var parts []string
	for _, c := range cycles {
		ids := make([]string, len(c))
		for i, nd := range c {
			ids[i] = steps[nd.ID()].ID
		}
		parts = append(parts, strings.Join(ids, ", "))
	}
	return fmt.Errorf("dependency cycle among steps [%s]", strings.Join(parts, "], ["))
}

func bySourceIndex(nodes []graph.Node) {
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].ID() < nodes[j].ID() })
}

// remap converts source indexes to sorted plan indexes.
func remap(src []int, newIndex []int) []int {
	if len(src) == 0 {
		return nil
	}
	out := make([]int, len(src))
	for i, x := range src {
		out[i] = newIndex[x]
	}
	sort.Ints(out)
	return out
}

// assignLevels sets each step's Level and returns the levels; steps must be
// in topological order with Deps remapped.
func assignLevels(steps []*ir.Step) [][]int {
	var levels [][]int
	for i, s := range steps {
		lvl := 0
		for _, d := range s.Deps {
			if l := steps[d].Level + 1; l > lvl {
				lvl = l
			}
		}
		s.Level = lvl
		for len(levels) <= lvl {
			levels = append(levels, nil)
		}
		levels[lvl] = append(levels[lvl], i)
	}
	if levels == nil {
		levels = [][]int{}
	}
	return levels
}

// assignRemaining sets each step's Remaining in reverse topological order.
func assignRemaining(steps []*ir.Step) {
	for i := len(steps) - 1; i >= 0; i-- {
		s := steps[i]
		r := 1
		for _, d := range s.Dependents {
			if x := steps[d].Remaining + 1; x > r {
				r = x
			}
		}
		s.Remaining = r
	}
}

func stats(levels [][]int, n int) ir.Stats {
	st := ir.Stats{TotalLevels: len(levels), TotalSteps: n}
	for i, l := range levels {
		size := len(l)
		if size > st.MaxParallelism {
			st.MaxParallelism = size
		}
		if i == 0 || size < st.MinParallelism {
			st.MinParallelism = size
		}
		if size == 1 {
			st.SequentialSteps++
		}
	}
	return st
}

func sinks(steps []*ir.Step) []int {
	out := []int{}
	for i, s := range steps {
		if len(s.Dependents) == 0 {
			out = append(out, i)
		}
	}
	return out
}

// criticalPath follows the longest chain from the first root (in source
// order) with the most Remaining, each time to the first dependent (in
// source order) whose Remaining is one less.
func criticalPath(steps []*ir.Step, srcOf []int) []int {
	path := []int{}
	cur := -1
	for i, s := range steps {
		if len(s.Deps) != 0 {
			continue
		}
		if cur < 0 || s.Remaining > steps[cur].Remaining ||
			(s.Remaining == steps[cur].Remaining && srcOf[i] < srcOf[cur]) {
			cur = i
		}
	}
	for cur >= 0 {
		path = append(path, cur)
		next := -1
		want := steps[cur].Remaining - 1
		for _, d := range steps[cur].Dependents {
			if steps[d].Remaining != want {
				continue
			}
			if next < 0 || srcOf[d] < srcOf[next] {
				next = d
			}
		}
		cur = next
	}
	return path
}
