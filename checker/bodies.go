package checker

// Loop bodies: a forEach with steps: runs a small graph of steps once per
// item (design.md "Loop bodies and sub-workflows").
//
// The checker keeps body steps in the same flat list as every other step
// (w.steps, after the top-level and finally steps), each with a link to
// the loop it belongs to (stepInfo.parent), so ids are unique across the
// whole workflow and the graph passes (cycles, closures, the
// defaultResults rule) run once over everything. Bodies are expanded
// breadth first (expandBodies): a loop's steps come in one contiguous run
// starting at its bodyBase, which is how their IR indexes are made
// relative to the body (bodyIR).
//
// Scope. dependsOn names steps of the same list only (the same parent).
// A template in a body step R may read step T when T's list encloses R:
// walk up from R (R, its loop, that loop's loop, ...) to the step A that
// sits in T's list; T must be a transitive dependency of A. When A is R
// this is the top-level rule; when A is an enclosing loop it is "the
// dependency check applies through the loop step". A loop's output:
// is evaluated when its body has ended, so it reads any step of its own
// body without a dependency, and enclosing steps through the loop. A
// body step is never visible outside its loop (read the loop's
// iterations instead).
//
// .forEach holds the item of every enclosing loop by its itemVar, so the
// itemVars along a chain of loops must differ; .forEach.index is the
// innermost loop's index. Loops nest at most ir.MaxLoopDepth deep, counting
// the innermost loop whether its body is steps: or step: (checkLoopDepth).

import (
	"strconv"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/parser"
)

// loopDepth is how deeply a forEach step nests: 1 for a loop whose step
// is not in a body.
func (si *stepInfo) loopDepth() int {
	d := 1
	for p := si.parent; p != nil; p = p.parent {
		d++
	}
	return d
}

// itemVars lists the items .forEach holds in si's templates: those of
// the loops si is in, outermost first (si's own loop item is added by the
// caller for a forEach's inner step).
func (si *stepInfo) itemVars() []string {
	var out []string
	for p := si.parent; p != nil; p = p.parent {
		out = append([]string{p.itemVar}, out...)
	}
	return out
}

// outermost is the step at top level (or in finally) that si is in, or si.
func (si *stepInfo) outermost() *stepInfo {
	for si.parent != nil {
		si = si.parent
	}
	return si
}

// checkLoopDepth reports a loop nested deeper than ir.MaxLoopDepth, at
// its id, whichever form its body takes (steps: or step:), and returns
// false then: the loop's body is not checked.
func (w *wfCheck) checkLoopDepth(si *stepInfo) bool {
	d := si.loopDepth()
	if d <= ir.MaxLoopDepth {
		return true
	}
	s := si.src
	pos, path := s.Node.Pos, s.Node.Path
	if s.ID != nil {
		pos, path = s.ID.Pos, s.ID.Path
	}
	w.add(errLoopTooDeep(pos, path, stepName(si), d))
	return false
}

// checkLoopBody checks a forEach's steps: (pass 1 of the loop itself):
// that it is the only body and that it has steps. The body's steps are
// checked by expandBodies.
func (w *wfCheck) checkLoopBody(si *stepInfo) {
	s := si.src
	n := s.StepsNode
	if s.Inner != nil && s.Inner.Node != nil {
		pos, path := keyPos(s.Node, n, "steps")
		w.add(errLoopBodyConflict(pos, path, stepName(si)))
	}
	switch {
	case n.Kind == parser.Null, n.Kind == parser.Seq && len(n.Items) == 0:
		w.add(errNoBodySteps(n.Pos, n.Path, stepName(si)))
		return
	case !w.kind(n, "steps", parser.Seq):
		return
	case len(n.Items) > maxSteps:
		w.add(errTooManySteps(n.Pos, n.Path, len(n.Items)))
	}
	si.body = s.Body
}

// checkItemVarClash reports a loop whose itemVar an enclosing loop uses.
func (w *wfCheck) checkItemVarClash(si *stepInfo) {
	for p := si.parent; p != nil; p = p.parent {
		if p.itemVar != si.itemVar {
			continue
		}
		s := si.src
		pos, path := s.Node.Pos, s.Node.Path
		switch {
		case s.ItemVar != nil:
			pos, path = s.ItemVar.Pos, s.ItemVar.Path
		case s.ID != nil:
			pos, path = s.ID.Pos, s.ID.Path
		}
		w.add(errItemVarClash(pos, path, stepName(si), si.itemVar, stepName(p), p.src.Node.Pos))
		return
	}
}

// expandBodies checks the steps of every loop body, appending them to
// w.steps; a body's loops are expanded when the walk reaches them.
func (w *wfCheck) expandBodies() {
	for k := 0; k < len(w.steps); k++ {
		loop := w.steps[k]
		if loop.body == nil {
			continue
		}
		loop.bodyBase = len(w.steps)
		for j, s := range loop.body {
			bi := w.checkStep(len(w.steps), s, false, loop)
			if bi.id == "" {
				bi.label = loop.label + ".steps[" + strconv.Itoa(j) + "]"
			}
			w.steps = append(w.steps, bi)
		}
		loop.bodyLen = len(loop.body)
	}
}

// checkBodyStep applies the rules for a step inside a loop body.
func (w *wfCheck) checkBodyStep(si *stepInfo) {
	if si.typ == ir.StepElicitation {
		pos, path := si.src.Node.Pos, si.src.Node.Path
		if si.src.Type != nil {
			pos, path = si.src.Type.Pos, si.src.Type.Path
		}
		w.add(errBodyElicitation(pos, path, stepName(si)))
	}
}

// scopeName says which list a step is in, for messages.
func scopeName(si *stepInfo) string {
	switch {
	case si.parent != nil:
		return "in the body of " + strconv.Quote(stepName(si.parent))
	case si.finally:
		return "a finally step"
	}
	return "a top-level step"
}

// bodyIR fills each loop's ForEach.Steps, with indexes and dependencies
// counted within the body.
func (w *wfCheck) bodyIR() {
	for _, loop := range w.steps {
		if loop.bodyLen == 0 || loop.ir.ForEach == nil {
			continue
		}
		fe := loop.ir.ForEach
		for _, bi := range w.steps[loop.bodyBase : loop.bodyBase+loop.bodyLen] {
			bi.ir.Index = bi.index - loop.bodyBase
			for k := range bi.ir.Deps {
				bi.ir.Deps[k] -= loop.bodyBase
			}
			fe.Steps = append(fe.Steps, bi.ir)
		}
	}
}

// anchor finds, for a read of target from inside chain (the reader, or
// for a loop's output the loop, then each enclosing loop), the member of
// chain that sits in target's list. ok is false when no member does:
// target is in a body that does not enclose the reader.
func anchor(chain *stepInfo, target *stepInfo) (*stepInfo, bool) {
	for a := chain; a != nil; a = a.parent {
		if a.parent == target.parent {
			return a, true
		}
	}
	return nil, false
}

// checkLoopOutput converts a loop's output: declaration, evaluated once
// per iteration after its body has ended.
func (w *wfCheck) checkLoopOutput(si *stepInfo) {
	o := si.src.Output
	if o == nil || o.Node == nil || o.Node.Kind == parser.Null {
		return
	}
	if !w.kind(o.Node, "forEach output", parser.Map) {
		return
	}
	if len(o.Properties) == 0 {
		w.add(errMissingField(o.Node.Pos, o.Node.Path, "properties", "forEach output"))
		return
	}
	sc := scope{kind: inLoopOutput, loop: si, itemVars: append(si.itemVars(), si.itemVar)}
	out := &ir.Output{}
	out.Properties, out.Schema = w.outputProps(o.Properties, o.Required, "forEach output", 1, &out.Required, sc)
	si.ir.ForEach.Output = out
}
