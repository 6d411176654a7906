package runtime

// Ready-queue priorities: the remaining work below each step.
//
// The ready queue (scheduler.go) starts the ready step with the highest
// priority first, ties broken by plan order. A step's priority is its
// remaining path: its own weight plus the heaviest remaining path among
// its dependents,
//
//	prio(s) = weight(s) + max(prio(d) for d in dependents(s)), 0 if none
//
// so it estimates how long, in backend round trips, the run needs after s
// starts if nothing else held it up. The weight is the number of round
// trips the step takes on the path:
//   - a tool, workflow or elicitation step weighs 1;
//   - a forEach weighs the number of waves its iterations take,
//     ceil(iterations / maxParallel) (the loop's own maxParallel, as
//     iterate applies it), at least 1: its iterations run in the loop's
//     own pool while the loop holds one of the workflow's slots, so a
//     243-item loop at maxParallel 10 occupies its slot for 25 round trips;
//     with a body (steps:), each wave runs the body's longest chain, so
//     the waves are multiplied by that chain's length in steps.
//
// A literal collection's length is known when the plan is prepared, so
// its weight is static. A template collection's is known once the steps
// it reads have finished (at the start of the run when it reads only
// .params, .vars or .workflow); until then the loop weighs 1. The steps
// a collection reads are the .steps.<id> chains of its template
// (templateStepReads); a template that reaches .steps any other way reads,
// for this purpose, every dependency of the loop.
//
// Cheap updates. Each run starts from the static priorities (prepared
// once per workflow). When the last step a loop's collection reads
// finishes, and the loop has not started, the scheduler evaluates the
// collection (the same evaluation the loop makes when it starts; an error
// leaves the weight at 1 and is reported then) and raises the loop's
// weight. Weights only grow, so a priority can only grow: the rise is
// pushed up the Deps edges from the loop, and it stops at a step whose
// priority does not change or that has already started (whose ancestors
// have started too). Only the loop's pending ancestors are visited, each
// at most once per rise; a launch stays O(log n). The heap is then
// rebuilt in place (O(ready)), once per loop per run. Workflows without a
// template-collection loop share the static priorities and pay nothing.
//
// One evaluation. A weighed collection that reads nothing but finished
// .steps entries, .params and .vars (every workflow function is pure) has
// the same value when the loop starts, so the run keeps the items it
// found and the loop starts from them instead of evaluating the template
// again (takeWeighed). A collection that may read .workflow, which
// changes as the run goes, or reaches .steps without naming the step, is
// evaluated again when the loop starts. Only the local driver's runs keep
// the items: a machine another driver feeds (NewMachine: Temporal, a
// replay) runs no loop itself and would only hold them.
//
// Everything is indexed by plan position and walked in slice order, so
// the order of starts is a function of the plan and the step results.

import (
	"fmt"
	"text/template/parse"

	"github.com/vmcp-dev/vmcp/ir"
)

// watchedLoop is a top-level forEach whose collection is a template: its
// weight becomes known during the run.
type watchedLoop struct {
	step  int   // the forEach's index
	reads []int // the steps its collection reads, sorted; empty: known at the start
	// reuse: the collection's value cannot change between its weighing
	// and the loop's start (see "One evaluation" above).
	reuse bool
}

// loopWeight is the weight of a forEach over n items: the number of waves
// of its iterations (at least 1), times the longest chain of its body's
// steps when it has a body (steps:), since each wave runs that chain.
func loopWeight(fe *ir.ForEach, n int) int32 {
	par := fe.MaxParallel
	return int32(max(1, (n+par-1)/par) * max(1, len(fe.CriticalPath)))
}

// preparePriorities sets the static weights and priorities of wp's steps
// and the loops whose weight the runs learn (see the file comment).
// Steps are in topological order within the top-level and the finally
// steps, and dependents always come later, so one backward pass suffices.
func (wp *workflowPlan) preparePriorities() {
	n := len(wp.steps)
	wp.weight = make([]int32, n)
	wp.prio = make([]int32, n)
	for i, sp := range wp.steps {
		wp.weight[i] = 1
		if sp.kind == ir.StepForEach && sp.items != nil {
			wp.weight[i] = loopWeight(sp.step.ForEach, len(sp.items.items))
		}
	}
	for i := n - 1; i >= 0; i-- {
		var tail int32
		for _, d := range wp.steps[i].dependents {
			tail = max(tail, wp.prio[d])
		}
		wp.prio[i] = wp.weight[i] + tail
	}
	for i, sp := range wp.steps[:wp.nmain] {
		if sp.kind != ir.StepForEach || sp.collection == nil {
			continue
		}
		reads, ok := wp.stepReads(sp.collection)
		if !ok {
			reads = sp.step.Deps
		}
		reuse := ok && !sp.collection.mayReadWorkflow()
		k := int32(len(wp.loops))
		wp.loops = append(wp.loops, watchedLoop{step: i, reads: reads, reuse: reuse})
		if wp.watchers == nil {
			wp.watchers = make([][]int32, wp.nmain)
		}
		for _, s := range reads {
			wp.watchers[s] = append(wp.watchers[s], k)
		}
	}
}

// stepReads returns the indexes of the top-level steps t reads, sorted
// and without repeats; ok is false when t reaches .steps in a way that
// does not name the step (or names one that is not top-level).
func (wp *workflowPlan) stepReads(t *tmpl) (reads []int, ok bool) {
	ids, ok := templateStepReads(t)
	if !ok {
		return nil, false
	}
	seen := make([]bool, wp.nmain)
	for _, id := range ids {
		sp := wp.byID[id]
		if sp == nil || sp.finally || sp.index >= wp.nmain {
			return nil, false
		}
		seen[sp.index] = true
	}
	for i, s := range seen {
		if s {
			reads = append(reads, i)
		}
	}
	return reads, true
}

// templateStepReads returns the step ids t names as .steps.<id> (or
// $.steps.<id>), in the order they appear; ok is false when t uses .steps
// without naming a step after it, as in {{index .steps "a"}}.
func templateStepReads(t *tmpl) (ids []string, ok bool) {
	if t.chain != nil {
		return chainStepRead(t.chain, nil)
	}
	if t.text == nil || t.text.Tree == nil {
		return nil, true
	}
	ok = true
	var walk func(parse.Node)
	walk = func(n parse.Node) {
		switch n := n.(type) {
		case *parse.ListNode:
			if n == nil {
				return
			}
			for _, c := range n.Nodes {
				walk(c)
			}
		case *parse.ActionNode:
			walk(n.Pipe)
		case *parse.IfNode:
			walk(&n.BranchNode)
		case *parse.RangeNode:
			walk(&n.BranchNode)
		case *parse.WithNode:
			walk(&n.BranchNode)
		case *parse.BranchNode:
			walk(n.Pipe)
			walk(n.List)
			walk(n.ElseList)
		case *parse.TemplateNode:
			walk(n.Pipe)
		case *parse.PipeNode:
			if n == nil {
				return
			}
			for _, c := range n.Cmds {
				walk(c)
			}
		case *parse.CommandNode:
			for _, a := range n.Args {
				walk(a)
			}
		case *parse.ChainNode:
			walk(n.Node)
		case *parse.FieldNode:
			var good bool
			if ids, good = chainStepRead(n.Ident, ids); !good {
				ok = false
			}
		case *parse.VariableNode:
			if len(n.Ident) > 1 && n.Ident[0] == "$" {
				var good bool
				if ids, good = chainStepRead(n.Ident[1:], ids); !good {
					ok = false
				}
			}
		}
	}
	walk(t.text.Tree.Root)
	return ids, ok
}

// chainStepRead appends the step a field chain reads to ids: chain is
// steps.<id>... or starts elsewhere; ok is false for .steps alone.
func chainStepRead(chain, ids []string) ([]string, bool) {
	if len(chain) == 0 || chain[0] != "steps" {
		return ids, true
	}
	if len(chain) < 2 {
		return ids, false
	}
	return append(ids, chain[1]), true
}

// loopState is a run's view of the priorities, when its workflow has
// watched loops: its own copies of the weights and priorities, and for
// each watched loop the number of the steps its collection reads that
// have not finished (-1 once it was weighed), and the items a weighing
// found for the loop's start (nil when none are kept, or once taken),
// when keep says the run's loops take them.
type loopState struct {
	weight  []int32
	prio    []int32
	unread  []int32
	weighed [][]any
	keep    bool
}

// startPriorities gives the run its priorities: the workflow's static
// ones, or copies the run can raise when the workflow has watched loops.
// ls is the local driver's memory for them (scheduler.go), or nil for a
// machine another driver feeds.
func (r *Machine) startPriorities(ls *loopState) {
	wp := r.wp
	r.ready.prio = wp.prio
	if len(wp.loops) == 0 {
		return
	}
	keep := ls != nil
	if ls == nil {
		ls = &loopState{}
	}
	ls.keep = keep
	ls.weight = append(ls.weight[:0], wp.weight...)
	ls.prio = append(ls.prio[:0], wp.prio...)
	ls.unread = ls.unread[:0]
	for _, l := range wp.loops {
		ls.unread = append(ls.unread, int32(len(l.reads)))
	}
	if cap(ls.weighed) < len(wp.loops) {
		ls.weighed = make([][]any, len(wp.loops))
	}
	ls.weighed = ls.weighed[:len(wp.loops)]
	clear(ls.weighed)
	r.loops = ls
	r.ready.prio = ls.prio
}

// weighKnownLoops weighs the watched loops whose collections read no
// step, once .params and .vars are set. Called before any step starts.
func (r *Machine) weighKnownLoops() {
	if r.loops == nil {
		return
	}
	for k, n := range r.loops.unread {
		if n == 0 {
			r.weighLoop(k)
		}
	}
}

// noteRead counts step i's end for the loops whose collection reads it
// and weighs those that have nothing left to wait for. Called with sched
// held, after i's entry is published, when the run has watched loops.
func (r *Machine) noteRead(i int) {
	if i >= r.wp.nmain {
		return
	}
	for _, k := range r.wp.watchers[i] {
		r.loops.unread[k]--
		if r.loops.unread[k] == 0 {
			r.weighLoop(int(k))
		}
	}
}

// weighLoop evaluates watched loop k's collection and raises the loop's
// weight, and its pending ancestors' priorities, to the waves its items
// take. A loop that has started, or whose collection cannot be evaluated
// or is not an array, keeps its weight.
func (r *Machine) weighLoop(k int) {
	ls := r.loops
	ls.unread[k] = -1
	f := r.wp.loops[k].step
	if r.run.Steps[f].Status != StepPending {
		return
	}
	sp := r.wp.steps[f]
	cv, err := sp.collection.collectionValue(r.data)
	if err != nil {
		return
	}
	items, ok := collectionItems(cv)
	if !ok {
		return
	}
	if ls.keep && r.wp.loops[k].reuse && items != nil {
		ls.weighed[k] = items
	}
	w := loopWeight(sp.step.ForEach, len(items))
	if w <= ls.weight[f] {
		return
	}
	ls.prio[f] += w - ls.weight[f]
	ls.weight[f] = w
	r.raiseAncestors(f)
	r.ready.fix()
}

// raiseAncestors pushes a rise of step f's priority up to its pending
// ancestors: each dependency p gets weight(p) + prio(f) when that is
// more, and passes its own rise on. Started steps are not visited.
func (r *Machine) raiseAncestors(f int) {
	ls := r.loops
	stack := []int{f}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, p := range r.wp.steps[c].step.Deps {
			if r.run.Steps[p].Status != StepPending {
				continue
			}
			if v := ls.weight[p] + ls.prio[c]; v > ls.prio[p] {
				ls.prio[p] = v
				stack = append(stack, p)
			}
		}
	}
}

// collectionItems is a collection's value as iterate reads it: an array,
// or a string holding a JSON array; nil for nil. ok is false for anything
// else, which iterate reports when the loop starts.
func collectionItems(cv any) (items []any, ok bool) {
	switch x := cv.(type) {
	case nil:
		return nil, true
	case []any:
		return x, true
	case string:
		parsed, err := decodeTyped(x)
		if err != nil {
			return nil, false
		}
		arr, ok := parsed.([]any)
		return arr, ok
	}
	return nil, false
}

// notACollection says why cv, which collectionItems refused, is not a
// collection.
func notACollection(cv any) string {
	s, ok := cv.(string)
	if !ok {
		return fmt.Sprintf("collection must be an array; it is %s", typeName(cv))
	}
	parsed, err := decodeTyped(s)
	if err != nil {
		return "collection must be an array; it is a string that is not valid JSON"
	}
	return fmt.Sprintf("collection must be an array; it is a string holding %s", typeName(parsed))
}

// takeWeighed returns the items the run's weighing of top-level loop sp
// kept (see "One evaluation" above), at most once. Called by the loop's
// goroutine: weighLoop wrote the entry before the loop was launched, and
// no one else touches it after.
func (r *Machine) takeWeighed(sp *stepPlan) ([]any, bool) {
	if r.loops == nil || sp.index >= r.wp.nmain || r.wp.steps[sp.index] != sp {
		return nil, false
	}
	for k, l := range r.wp.loops {
		if l.step == sp.index {
			items := r.loops.weighed[k]
			r.loops.weighed[k] = nil
			return items, items != nil
		}
	}
	return nil, false
}

// readyQueue is a binary max-heap of step indexes by (priority desc,
// index asc); prio holds the run's priorities (see priority.go).
type readyQueue struct {
	prio  []int32
	items []int
}

func (q *readyQueue) less(a, b int) bool {
	pa, pb := q.prio[a], q.prio[b]
	if pa != pb {
		return pa > pb
	}
	return a < b
}

func (q *readyQueue) push(i int) {
	q.items = append(q.items, i)
	c := len(q.items) - 1
	for c > 0 {
		p := (c - 1) / 2
		if !q.less(q.items[c], q.items[p]) {
			break
		}
		q.items[c], q.items[p] = q.items[p], q.items[c]
		c = p
	}
}

func (q *readyQueue) pop() int {
	top := q.items[0]
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	q.items = q.items[:last]
	q.down(0)
	return top
}

// down moves the item at p down to its place below.
func (q *readyQueue) down(p int) {
	for {
		l := 2*p + 1
		if l >= len(q.items) {
			break
		}
		m := l
		if rr := l + 1; rr < len(q.items) && q.less(q.items[rr], q.items[l]) {
			m = rr
		}
		if !q.less(q.items[m], q.items[p]) {
			break
		}
		q.items[m], q.items[p] = q.items[p], q.items[m]
		p = m
	}
}

// fix restores the heap order after priorities changed.
func (q *readyQueue) fix() {
	for p := len(q.items)/2 - 1; p >= 0; p-- {
		q.down(p)
	}
}
