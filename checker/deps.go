package checker

// The dependency graph and the rules built on it.
//
// Edges run from a step to each step it names in dependsOn. Unknown names
// and self-dependencies are reported where they are written and left out
// of the graph. Cycles are found with gonum's Tarjan strongly connected
// components: every component of two or more steps contains a cycle. When
// a component is sparse (its cyclomatic number, edges - steps + 1, is at
// most maxCycleRank, so it has at most 2^maxCycleRank - 1 elementary
// cycles), each elementary cycle is enumerated with gonum's
// DirectedCyclesIn (Johnson's algorithm) and reported once, rotated to
// start at its member that comes first in the file. A denser component
// could have exponentially many cycles, so it is reported once: the
// shortest cycle through its first step (breadth-first search, following
// dependsOn entries in the order they are written), naming every member of
// the component so nothing is hidden. Every link is listed with the
// position of its dependsOn entry.
//
// Transitive dependencies (the closure) are computed by a depth-first
// search from each step and kept as a bitset over step indexes (one block
// of words shared by all steps, so a workflow costs two allocations); a
// template may read .steps.X only when X is in
// the reading step's closure, because only then is X finished when the
// reader starts.
//
// defaultResults rule: a step "may skip" (ir.Step.MaySkip) when readers can
// see its defaultResults instead of an output of its own: it has a
// condition; its onError action is continue; it has no onError (or retries
// and then gives up) while the workflow's failureMode is continue. A read of
// .steps.X.output.F where X may skip needs F among the top-level keys of
// X's defaultResults, and a read of the whole .steps.X.output needs
// non-empty defaultResults. An elicitation's output is {action, content}:
// when its decline or cancel continues, it completes with {action} plus
// the content of its defaultResults, so a read of .output.content.F needs
// F in defaultResults.content (refs.go). Reads through index are exempt:
// index is how a template reads a field that may be absent. .status and
// .error are always defined.

import (
	"fmt"
	"sort"
	"strings"

	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"

	"github.com/vmcp-dev/vmcp/parser"
)

// checkDuplicateIDs indexes the steps by id and reports each id that more
// than one step has, at every occurrence after the first in the file (body
// steps come after the top-level ones in w.steps, not in the file). Such
// an id is in doubt: dependsOn entries and templates that name it are not
// checked further (w.dupIDs), since any error there would guess which step
// was meant.
func (w *wfCheck) checkDuplicateIDs() {
	var dups []*stepInfo
	for _, si := range w.steps {
		if si.id == "" {
			continue
		}
		if _, dup := w.byID[si.id]; dup {
			dups = append(dups, si)
			continue
		}
		w.byID[si.id] = si.index
		w.ids = append(w.ids, si.id)
	}
	if len(dups) == 0 {
		return
	}
	w.dupIDs = map[string]bool{}
	for _, si := range dups {
		w.dupIDs[si.id] = true
	}
	for _, id := range w.ids {
		if w.dupIDs[id] {
			w.reportDuplicate(id)
		}
	}
}

// reportDuplicate reports every step with id but the first in the file.
func (w *wfCheck) reportDuplicate(id string) {
	var same []*stepInfo
	for _, si := range w.steps {
		if si.id == id {
			same = append(same, si)
		}
	}
	sort.SliceStable(same, func(i, j int) bool { return before(same[i].src.ID.Pos, same[j].src.ID.Pos) })
	firstLine := same[0].src.ID.Pos.Line
	for _, si := range same[1:] {
		w.add(errDuplicateStep(si.src.ID.Pos, si.src.ID.Path, id, firstLine))
	}
}

func (w *wfCheck) resolveDeps() {
	for _, si := range w.steps {
		if si.src == nil || si.src.DependsOn == nil {
			continue
		}
		n := si.src.DependsOn
		var items []*parser.Node
		switch n.Kind {
		case parser.Seq:
			items = n.Items
		case parser.String:
			items = []*parser.Node{n}
		case parser.Null:
		default:
			w.add(errWrongType(n.Pos, n.Path, "dependsOn", "a list of step ids", kindPhrase(n.Kind)))
			continue
		}
		// Repeats are dropped with a warning; short lists are searched, long
		// ones get a map.
		var seen map[int]bool
		if len(items) > 16 {
			seen = make(map[int]bool, len(items))
		}
		listed := func(to int) bool {
			if seen != nil {
				return seen[to]
			}
			for _, d := range si.deps {
				if d.to == to {
					return true
				}
			}
			return false
		}
		for _, it := range items {
			name, ok := w.str(it, "dependsOn entry")
			if !ok {
				continue
			}
			to, known := w.byID[name]
			switch {
			case w.dupIDs[name]:
				// Reported as duplicate_step; the step meant is in doubt.
			case !known:
				w.add(errUnknownStep(it.Pos, it.Path, name, w.ids))
			case to == si.index || (si.id != "" && name == si.id):
				w.add(errSelfDependency(it.Pos, it.Path, name))
			case listed(to):
				w.add(warnRepeatedDependency(it.Pos, it.Path, name))
			case w.steps[to].parent != si.parent:
				w.add(errCrossBodyDependency(it.Pos, it.Path, stepName(si), name, scopeName(si), scopeName(w.steps[to])))
			case !w.finallyEdgeAllowed(si, w.steps[to], it):
			default:
				if seen != nil {
					seen[to] = true
				}
				si.deps = append(si.deps, depEdge{to: to, node: it})
			}
		}
		if len(si.deps) > 0 {
			si.ir.Deps = make([]int, len(si.deps))
			for i, d := range si.deps {
				si.ir.Deps[i] = d.to
			}
		}
		sort.Ints(si.ir.Deps)
	}
}

func (w *wfCheck) checkCycles() {
	if w.acyclic() {
		return // nothing to report; the usual case, found without a graph
	}
	g := simple.NewDirectedGraph()
	for _, si := range w.steps {
		g.AddNode(simple.Node(si.index))
	}
	for _, si := range w.steps {
		for _, d := range si.deps {
			g.SetEdge(g.NewEdge(simple.Node(si.index), simple.Node(d.to)))
		}
	}
	var comps [][]int
	for _, c := range topo.TarjanSCC(g) {
		if len(c) < 2 {
			continue
		}
		ids := make([]int, len(c))
		for i, n := range c {
			ids[i] = int(n.ID())
		}
		sort.Ints(ids)
		comps = append(comps, ids)
	}
	sort.Slice(comps, func(i, j int) bool { return comps[i][0] < comps[j][0] })
	for _, comp := range comps {
		if cycles, ok := w.elementaryCycles(comp); ok {
			for _, c := range cycles {
				w.reportLinks(c, nil)
			}
			continue
		}
		w.reportCycle(comp)
	}
}

// acyclic reports whether the dependency graph has no cycle, by Kahn's
// algorithm: repeatedly remove steps that no remaining step depends on;
// every step is removed exactly when there is no cycle. It is a fast
// path: checkCycles runs the component analysis only when it fails.
func (w *wfCheck) acyclic() bool {
	n := len(w.steps)
	indeg := make([]int, n)
	for _, si := range w.steps {
		for _, d := range si.deps {
			indeg[d.to]++
		}
	}
	ready := make([]int, 0, n)
	for i, c := range indeg {
		if c == 0 {
			ready = append(ready, i)
		}
	}
	removed := 0
	for len(ready) > 0 {
		i := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		removed++
		for _, d := range w.steps[i].deps {
			if indeg[d.to]--; indeg[d.to] == 0 {
				ready = append(ready, d.to)
			}
		}
	}
	return removed == n
}

// maxCycleRank bounds the cyclomatic number of a component whose
// elementary cycles are all enumerated.
const maxCycleRank = 5

// elementaryCycles lists the component's elementary cycles as step
// indexes, each starting at its first step in the file, sorted; ok is
// false when the component is too dense to enumerate.
func (w *wfCheck) elementaryCycles(comp []int) ([][]int, bool) {
	in := map[int]bool{}
	for _, i := range comp {
		in[i] = true
	}
	g := simple.NewDirectedGraph()
	for _, i := range comp {
		g.AddNode(simple.Node(i))
	}
	edges := 0
	for _, i := range comp {
		for _, d := range w.steps[i].deps {
			if in[d.to] {
				g.SetEdge(g.NewEdge(simple.Node(i), simple.Node(d.to)))
				edges++
			}
		}
	}
	if edges-len(comp)+1 > maxCycleRank {
		return nil, false
	}
	var out [][]int
	for _, c := range topo.DirectedCyclesIn(g) {
		// gonum repeats the first node at the end.
		ids := make([]int, 0, len(c))
		for _, n := range c[:len(c)-1] {
			ids = append(ids, int(n.ID()))
		}
		start := 0
		for k, id := range ids {
			if id < ids[start] {
				start = k
			}
		}
		ids = append(ids[start:], ids[:start]...)
		out = append(out, ids)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		for k := 0; k < len(a) && k < len(b); k++ {
			if a[k] != b[k] {
				return a[k] < b[k]
			}
		}
		return len(a) < len(b)
	})
	return out, true
}

// edgeTo returns the dependsOn entry of step from that names step to.
func (w *wfCheck) edgeTo(from, to int) depEdge {
	for _, e := range w.steps[from].deps {
		if e.to == to {
			return e
		}
	}
	return depEdge{to: to}
}

// reportLinks reports the cycle that visits the steps in order and returns
// to the first. members, when longer than the cycle, names the whole
// strongly connected component.
func (w *wfCheck) reportLinks(cycle []int, members []string) {
	names := []string{stepName(w.steps[cycle[0]])}
	var details []string
	var first *parser.Node
	for k, from := range cycle {
		to := cycle[(k+1)%len(cycle)]
		e := w.edgeTo(from, to)
		if first == nil {
			first = e.node
		}
		names = append(names, stepName(w.steps[to]))
		details = append(details, fmt.Sprintf("%s depends on %s (%s)", stepName(w.steps[from]), stepName(w.steps[to]), e.node.Pos))
	}
	w.add(errDependencyCycle(first.Pos, first.Path, names, details, members))
}

// reportCycle reports the shortest cycle through the first step of a
// strongly connected component.
func (w *wfCheck) reportCycle(comp []int) {
	in := map[int]bool{}
	for _, i := range comp {
		in[i] = true
	}
	start := comp[0]
	// Breadth-first search for the shortest path from start back to start;
	// prev records the step each one was reached from.
	prev := map[int]int{}
	queue := []int{start}
	last := -1
	for len(queue) > 0 && last < 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, e := range w.steps[cur].deps {
			if !in[e.to] {
				continue
			}
			if e.to == start {
				last = cur
				break
			}
			if _, seen := prev[e.to]; !seen && e.to != start {
				prev[e.to] = cur
				queue = append(queue, e.to)
			}
		}
	}
	if last < 0 {
		return // cannot happen in a strongly connected component
	}
	cycle := []int{last}
	for at := last; at != start; at = prev[at] {
		cycle = append(cycle, prev[at])
	}
	for i, j := 0, len(cycle)-1; i < j; i, j = i+1, j-1 {
		cycle[i], cycle[j] = cycle[j], cycle[i]
	}
	var members []string
	for _, i := range comp {
		members = append(members, stepName(w.steps[i]))
	}
	w.reportLinks(cycle, members)
}

func (w *wfCheck) computeClosures() {
	n := len(w.steps)
	words := (n + 63) / 64
	block := make([]uint64, n*words)
	stack := make([]int, 0, n)
	for i, si := range w.steps {
		seen := bitset(block[i*words : (i+1)*words : (i+1)*words])
		stack = append(stack[:0], si.index)
		for len(stack) > 0 {
			cur := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, d := range w.steps[cur].deps {
				if !seen.has(d.to) {
					seen.set(d.to)
					stack = append(stack, d.to)
				}
			}
		}
		si.closure = seen
	}
}

// bitset is a set of small non-negative integers (step indexes).
type bitset []uint64

func (b bitset) has(i int) bool {
	return i >= 0 && i/64 < len(b) && b[i/64]&(1<<(uint(i)%64)) != 0
}

func (b bitset) set(i int) { b[i/64] |= 1 << (uint(i) % 64) }

// depNames lists a step's direct dependencies by id, for hints.
func (w *wfCheck) depNames(si *stepInfo) []string {
	var out []string
	for _, d := range si.deps {
		out = append(out, stepName(w.steps[d.to]))
	}
	return out
}

func (w *wfCheck) computeMaySkip(si *stepInfo) {
	if si.src == nil || si.src.Node == nil {
		return
	}
	var why []string
	if si.src.Condition != nil {
		why = append(why, "has a condition (it may be skipped)")
	}
	switch a := si.ir.OnError.Action; {
	case a == "continue":
		why = append(why, "may fail with onError: continue")
	case si.finally:
		why = append(why, finallyMayFail)
	case a != "abort" && w.wf.FailureMode == "continue":
		why = append(why, "may fail while the workflow's failureMode is continue")
	}
	if len(why) > 0 {
		si.maySkip = true
		si.ir.MaySkip = true
		si.why = strings.Join(why, " and ")
	}
	if si.typ == "elicitation" {
		var none []string
		if si.ir.OnDecline == "continue" {
			none = append(none, "continues when the user declines")
		}
		if si.ir.OnCancel == "continue" {
			none = append(none, "continues when the user cancels or does not answer in time")
		}
		if len(none) > 0 {
			si.ir.MaySkip = true
			si.noAnswer = strings.Join(none, " and ")
		}
	}
}
