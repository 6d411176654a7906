package checker

// Finally steps: the workflow's finally list runs once every top-level
// step has ended, whatever the outcome (completed, failed, cancelled,
// timed_out), for cleanup and notification.
//
// The checker keeps them in w.steps after the top-level steps (indexes
// w.nmain and up), so ids are unique across both lists and the dependency,
// cycle and closure passes cover them unchanged. The rules of their own:
//
//   - A finally step is a tool or forEach step. Elicitation is an error:
//     a cancelled or timed-out run has no client left to answer.
//   - onError action abort is an error: the run has already ended, and a
//     failed finally step never stops the other finally steps (it is
//     failed, its output is its defaultResults, and its dependents run).
//     continue and retry are allowed.
//   - dependsOn inside finally names finally steps. Naming a top-level
//     step is a warning and the entry is dropped: every top-level step has
//     ended before any finally step starts. A top-level step that names a
//     finally step is an error.
//   - A finally step reads any top-level step without depending on it, and
//     finally steps it depends on (the racy-read rule applies among them).
//     Top-level steps and output values cannot read finally steps: they
//     are done before the finally steps start.
//   - The defaultResults rule: when the run failed, was cancelled or timed
//     out, any top-level step may have ended without an output of its own
//     (failed, or never started), so a finally step's read of
//     .steps.X.output.F needs F in X's defaultResults, or index. The same
//     holds for a finally step read by another, as finally steps may fail.
//   - A finally step's timeout bounds it on its own; it is not compared
//     with the workflow's timeout, which may have passed already.

import (
	"strconv"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/parser"
)

// Why a read of a step's output from a finally step needs defaultResults.
const (
	finallyReadWhy = "may have ended without an output (finally steps also run after a failed, cancelled or timed-out run)"
	finallyMayFail = "is a finally step, which may fail without stopping the others"
)

// checkFinallySteps runs pass 1 over the finally list, appending its steps
// to w.steps.
func (w *wfCheck) checkFinallySteps() {
	n := w.src.FinallyNode
	switch {
	case n == nil || n.Kind == parser.Null:
		return
	case !w.kind(n, "finally", parser.Seq):
		return
	case len(n.Items) > maxSteps:
		w.add(errTooManySteps(n.Pos, n.Path, len(n.Items)))
	}
	for i, s := range atMost(w.src.Finally, maxSteps) {
		w.steps = append(w.steps, w.checkStep(w.nmain+i, s, true, nil))
	}
}

// checkFinallyStep applies the rules for a finally step's type and onError.
func (w *wfCheck) checkFinallyStep(si *stepInfo) {
	s := si.src
	if si.typ == ir.StepElicitation {
		w.add(errFinallyElicitation(s.Type.Pos, s.Type.Path, stepName(si)))
	}
	if s.OnError != nil && s.OnError.Action != nil && si.ir.OnError.Action == ir.ActionAbort {
		w.add(errFinallyAbort(s.OnError.Action.Pos, s.OnError.Action.Path, stepName(si)))
	}
	// The IR index counts within the finally list.
	si.ir.Index = si.index - w.nmain
	if fe := si.ir.ForEach; fe != nil && fe.Step != nil {
		fe.Step.Index = si.ir.Index
	}
}

// finallyEdgeAllowed reports whether the dependsOn entry it, from step si
// to step to, joins the graph; it reports the entries that do not.
func (w *wfCheck) finallyEdgeAllowed(si, to *stepInfo, it *parser.Node) bool {
	switch {
	case !si.finally && to.finally:
		w.add(errDependsOnFinally(it.Pos, it.Path, stepName(si), stepName(to)))
		return false
	case si.finally && !to.finally:
		w.add(warnFinallyDependsOnStep(it.Pos, it.Path, stepName(si), stepName(to)))
		return false
	}
	return true
}

// finallyIR fills w.wf.Finally, with dependencies as indexes into it.
func (w *wfCheck) finallyIR() {
	for _, si := range w.steps[w.nmain:w.nouter] {
		for k := range si.ir.Deps {
			si.ir.Deps[k] -= w.nmain
		}
		w.wf.Finally = append(w.wf.Finally, si.ir)
	}
}

// readerName names who reads a step in a template's scope.
func readerName(sc scope) string {
	switch {
	case sc.kind == inOutput:
		return "the workflow's output"
	case sc.kind == inLoopOutput:
		return "the output of forEach " + strconv.Quote(stepName(sc.loop))
	case sc.step != nil:
		return "step " + strconv.Quote(stepName(sc.step))
	}
	return "a var"
}
