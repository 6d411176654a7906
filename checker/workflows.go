package checker

// Workflow steps: `type: workflow` runs another composite tool of the same
// configuration (every workflow given to one Check, plus Options.Workflows
// from precompiled plans) as a child run. Most of a workflow step is
// checked with its own workflow (id, fields, onError, the templates of its
// arguments with the usual dependency and racy-read rules); what needs
// the callee waits until every workflow has been read, because a callee
// may be defined later or in another file. checkCalls then runs, once per
// Check:
//
//  1. Each call's callee must exist; an unknown name gets a did-you-mean.
//  2. The call's arguments are checked against the callee's parameters
//     (its InputSchema) by the same code that checks tool arguments:
//     unknown names, missing required ones and literal types.
//  3. A read of .steps.X.output.F, where X is a workflow step, must name
//     one of the callee's declared output properties when it declares an
//     output; without one the result's shape is not known and any field
//     is allowed.
//  4. Recursion. The call graph has one node per workflow and an edge per
//     call (the first call from a workflow to a given callee, in source
//     order). Its strongly connected components (gonum's Tarjan), and
//     every workflow that calls itself, are recursion: each is reported
//     once, as the shortest cycle through its member that comes first in
//     the input, every link with the position of its `workflow:` field.
//
// A workflow with any of these errors is dropped from Check's result, as
// for every other error.

import (
	"fmt"
	"slices"
	"sort"

	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"

	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/parser"
)

// workflowCall is one workflow step (or forEach inner workflow step),
// waiting for checkCalls.
type workflowCall struct {
	caller *ir.Workflow
	step   string // the calling step's id, for messages
	ref    *ir.WorkflowRef
	path   string       // YAML path of the workflow field
	src    *parser.Step // the step as written: its arguments and keys
}

// calleeRead is a template's read of a field of a workflow step's output.
type calleeRead struct {
	caller *ir.Workflow
	step   string
	callee string
	field  string
	pos    ir.Pos
	path   string
}

// checkWorkflowRef reads a workflow step's `workflow:` field.
func (w *wfCheck) checkWorkflowRef(si *stepInfo, s *parser.Step) {
	if s.Workflow == nil {
		w.add(errMissingStepField(s.Node.Pos, s.Node.Path, stepName(si), ir.StepWorkflow, "workflow"))
		return
	}
	name, ok := w.str(s.Workflow, "workflow")
	if !ok {
		return
	}
	if name == "" {
		w.add(errMissingStepField(s.Workflow.Pos, s.Workflow.Path, stepName(si), ir.StepWorkflow, "workflow"))
		return
	}
	si.ir.Workflow = &ir.WorkflowRef{Name: name, Pos: s.Workflow.Pos}
	si.callee = name
}

// noteCall records the workflow step st (written as s) of the reading
// step si for checkCalls.
func (w *wfCheck) noteCall(si *stepInfo, s *parser.Step, st *ir.Step) {
	if st.Workflow == nil {
		return
	}
	w.c.calls = append(w.c.calls, &workflowCall{caller: w.wf, step: stepName(si), ref: st.Workflow, path: s.Workflow.Path, src: s})
}

// noteCalleeRead records a read of field of target's output for
// checkCalls.
func (w *wfCheck) noteCalleeRead(target *stepInfo, pos ir.Pos, path, field string) {
	if target.callee == "" {
		return
	}
	w.c.reads = append(w.c.reads, &calleeRead{caller: w.wf, step: stepName(target), callee: target.callee, field: field, pos: pos, path: path})
}

// callee returns the workflow named name: one of this Check's, or one of
// Options.Workflows.
func (c *checker) callee(name string) (*ir.Workflow, bool) {
	if wf, ok := c.defs[name]; ok {
		return wf, true
	}
	for _, wf := range c.opts.Workflows {
		if wf != nil && wf.Name == name {
			return wf, true
		}
	}
	return nil, false
}

// workflowNames lists every known workflow name, sorted, for suggestions.
func (c *checker) workflowNames() []string {
	var names []string
	for n := range c.defs {
		names = append(names, n)
	}
	for _, wf := range c.opts.Workflows {
		if wf != nil && !slices.Contains(names, wf.Name) {
			names = append(names, wf.Name)
		}
	}
	sort.Strings(names)
	return names
}

// checkCalls checks every recorded call and read against its callee and
// the call graph for recursion. It returns the workflows that got an
// error.
func (c *checker) checkCalls() map[*ir.Workflow]bool {
	bad := map[*ir.Workflow]bool{}
	report := func(caller *ir.Workflow, d diag.Diagnostic) {
		c.diags.Add(d)
		if d.Severity == diag.Error {
			bad[caller] = true
		}
	}
	for _, call := range c.calls {
		callee, ok := c.callee(call.ref.Name)
		if !ok {
			report(call.caller, errUnknownWorkflow(call.ref.Pos, call.path, call.ref.Name, c.workflowNames()))
			continue
		}
		if callee.InputSchema == nil {
			continue // the callee has errors of its own
		}
		args := call.src.Arguments
		pos, path := call.ref.Pos, call.path
		if args != nil {
			pos, path = keyPos(call.src.Node, args, "arguments")
		}
		if args != nil && args.Kind != parser.Map {
			args = nil // reported as wrong_type with the step
		}
		var out diag.List
		checkObjectArgs(&out, fmt.Sprintf("workflow %q", callee.Name), "", callee.InputSchema, args, pos, path)
		for _, d := range out {
			report(call.caller, d)
		}
	}
	for _, r := range c.reads {
		callee, ok := c.callee(r.callee)
		if !ok || callee.Output == nil {
			continue
		}
		var names []string
		for _, p := range callee.Output.Properties {
			names = append(names, p.Name)
		}
		if !slices.Contains(names, r.field) {
			report(r.caller, errUnknownCalleeOutput(r.pos, r.path, r.step, callee.Name, r.field, names))
		}
	}
	for _, cyc := range c.recursion() {
		report(cyc.caller, cyc.diag)
		for _, wf := range cyc.members {
			bad[wf] = true
		}
	}
	return bad
}

// callEdge is one link of the call graph.
type callEdge struct {
	to   string
	step string
	pos  ir.Pos
	path string
}

type recursionError struct {
	caller  *ir.Workflow
	members []*ir.Workflow
	diag    diag.Diagnostic
}

// recursion finds the cycles of the call graph (see the top of the file).
func (c *checker) recursion() []recursionError {
	// Nodes in input order: this Check's workflows, then the plans'.
	var order []*ir.Workflow
	index := map[string]int{}
	addNode := func(wf *ir.Workflow) {
		if _, dup := index[wf.Name]; !dup {
			index[wf.Name] = len(order)
			order = append(order, wf)
		}
	}
	for _, wf := range c.order {
		addNode(wf)
	}
	for _, wf := range c.opts.Workflows {
		if wf != nil {
			addNode(wf)
		}
	}
	edges := make([][]callEdge, len(order))
	addEdge := func(from string, e callEdge) {
		i, ok := index[from]
		if _, known := index[e.to]; !ok || !known {
			return
		}
		for _, x := range edges[i] {
			if x.to == e.to {
				return
			}
		}
		edges[i] = append(edges[i], e)
	}
	for _, call := range c.calls {
		addEdge(call.caller.Name, callEdge{to: call.ref.Name, step: call.step, pos: call.ref.Pos, path: call.path})
	}
	for _, wf := range c.opts.Workflows {
		if wf == nil {
			continue
		}
		ir.EachStep(wf.Steps, func(s *ir.Step) {
			if ref := s.Workflow; ref != nil {
				addEdge(wf.Name, callEdge{to: ref.Name, step: s.ID, pos: ref.Pos, path: "workflow"})
			}
		})
	}
	g := simple.NewDirectedGraph()
	for i := range order {
		g.AddNode(simple.Node(i))
	}
	var selfCalls []int
	for i, es := range edges {
		for _, e := range es {
			if j := index[e.to]; i == j {
				selfCalls = append(selfCalls, i)
			} else {
				g.SetEdge(g.NewEdge(simple.Node(i), simple.Node(j)))
			}
		}
	}
	var comps [][]int
	inCycle := map[int]bool{}
	for _, comp := range topo.TarjanSCC(g) {
		if len(comp) < 2 {
			continue
		}
		ids := make([]int, len(comp))
		for k, n := range comp {
			ids[k] = int(n.ID())
			inCycle[ids[k]] = true
		}
		sort.Ints(ids)
		comps = append(comps, ids)
	}
	for _, i := range selfCalls {
		if !inCycle[i] {
			comps = append(comps, []int{i})
		}
	}
	sort.Slice(comps, func(a, b int) bool { return comps[a][0] < comps[b][0] })
	var out []recursionError
	for _, comp := range comps {
		cycle := shortestCycle(comp, edges, index)
		names := []string{order[comp[0]].Name}
		var links []string
		members := make([]*ir.Workflow, 0, len(comp))
		for _, e := range cycle {
			names = append(names, e.to)
		}
		for k, e := range cycle {
			from := names[k]
			links = append(links, fmt.Sprintf("workflow %q calls %q in step %q (%s)", from, e.to, e.step, e.pos))
		}
		for _, i := range comp {
			members = append(members, order[i])
		}
		first := cycle[0]
		out = append(out, recursionError{
			caller:  order[comp[0]],
			members: members,
			diag:    errWorkflowCycle(first.pos, first.path, names, links),
		})
	}
	return out
}

// shortestCycle returns the links of the shortest cycle from the first
// workflow of comp back to it, by breadth-first search inside comp.
func shortestCycle(comp []int, edges [][]callEdge, index map[string]int) []callEdge {
	start := comp[0]
	in := map[int]bool{}
	for _, i := range comp {
		in[i] = true
	}
	type hop struct {
		from int
		e    callEdge
	}
	prev := map[int]hop{}
	queue := []int{start}
	var last *hop
	for len(queue) > 0 && last == nil {
		cur := queue[0]
		queue = queue[1:]
		for _, e := range edges[cur] {
			to := index[e.to]
			if !in[to] {
				continue
			}
			if to == start {
				last = &hop{from: cur, e: e}
				break
			}
			if _, seen := prev[to]; !seen {
				prev[to] = hop{from: cur, e: e}
				queue = append(queue, to)
			}
		}
	}
	if last == nil {
		return nil // cannot happen in a strongly connected component
	}
	cycle := []callEdge{last.e}
	for at := last.from; at != start; at = prev[at].from {
		cycle = append(cycle, prev[at].e)
	}
	slices.Reverse(cycle)
	return cycle
}

// applyDeferredFloors applies the annotation floor of the workflows with
// workflow steps, callees first, once every callee's annotations are
// final. A workflow that got an error is added to bad.
func (c *checker) applyDeferredFloors(bad map[*ir.Workflow]bool) {
	byWF := map[*ir.Workflow]*wfCheck{}
	var wfs []*ir.Workflow
	for _, w := range c.floors {
		byWF[w.wf] = w
		wfs = append(wfs, w.wf)
	}
	for _, wf := range floorOrder(wfs, c.callee) {
		w := byWF[wf]
		l := applyAnnotationFloor(wf, c.opts.Tools, c.callee, w.hintPos)
		c.diags = append(c.diags, l...)
		if l.HasErrors() {
			bad[wf] = true
		}
	}
}
