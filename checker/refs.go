package checker

// Reference rules: what a template may read where.
//
//	.params.P            P must be a declared parameter.
//	.vars.V              V must be a declared var; vars themselves read
//	                     only .params and .workflow (they are evaluated
//	                     once, before any step).
//	.steps.X[.output...|.content.K|.status|.error]
//	                     X must be a step; in a step's templates X must be
//	                     a transitive dependency (not the step itself); in
//	                     output values any step will do, because output is
//	                     computed after every step. Reading X's output when
//	                     X may skip needs defaultResults (see deps.go); for
//	                     output values X may also skip because an
//	                     elicitation that does not depend on it ends the
//	                     run with skip_remaining. A forEach's output has
//	                     iterations, count, completed, failed and
//	                     skipped (ir.ForEachOutputFields). An
//	                     elicitation's is ToolHive's {action, content}
//	                     (and skipped, after skip_remaining): content holds
//	                     only the fields its schema asks for, and when the
//	                     step may continue without an answer, a read of
//	                     content.F needs F in defaultResults.content.
//	                     .content is a tool result's content map, whose keys
//	                     are text, text_N, image_N, resource, resource_N,
//	                     audio_N and link_N; elicitation and forEach steps
//	                     have none, and a key of a step that may skip is
//	                     read with index.
//	.workflow.F          F is id, duration_ms, step_count, status or
//	                     start_time.
//	.forEach.<itemVar>|.forEach.index
//	                     only inside a forEach's inner step or body
//	                     (and its output:), with the itemVar of every
//	                     enclosing loop. Body steps follow the scope
//	                     rules of bodies.go.
//
// Any other root (.timestamp, .inputs, ...) is an error that lists the
// valid roots.

import (
	"fmt"
	"strings"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/parser"
)

type scopeKind int

const (
	inVars scopeKind = iota
	inStep
	inOutput
	// inLoopOutput is a loop's output:, evaluated per iteration once the
	// body has ended.
	inLoopOutput
)

// scope says where a template is evaluated.
type scope struct {
	kind scopeKind
	// step is the reading step (inStep).
	step *stepInfo
	// itemVars are the .forEach items the template may read, outermost
	// loop first (none outside loops).
	itemVars []string
	// loop is the forEach whose output: this is (inLoopOutput).
	loop *stepInfo
}

var stepFields = []string{"output", "content", "status", "error"}

// workflowFields are the fields of .workflow, as in ToolHive.
var workflowFields = []string{"id", "duration_ms", "step_count", "status", "start_time"}

// elicitationOutputFields are the fields of an elicitation's output.
var elicitationOutputFields = []string{"action", "content", "skipped"}

var forEachOutputFields = ir.ForEachOutputFields

// template parses a string node as a template and checks its references.
// It returns nil when the node is not a string (reported as wrong_type).
func (w *wfCheck) template(n *parser.Node, field string, sc scope) *ir.Template {
	if n == nil {
		return nil
	}
	if _, ok := w.str(n, field); !ok {
		return nil
	}
	t, refs, ok := w.parseTemplate(n)
	if ok {
		for _, r := range refs {
			w.checkRef(n, r, sc)
		}
	}
	return t
}

func (w *wfCheck) checkRef(n *parser.Node, r ref, sc scope) {
	if len(r.path) == 0 {
		return
	}
	pos, path := n.OffsetPos(r.off), n.Path
	switch root := r.path[0]; root {
	case "params":
		if len(r.path) >= 2 && !w.params[r.path[1]] {
			w.add(errUnknownParam(pos, path, r.path[1], w.paramNames))
		}
	case "vars":
		if sc.kind == inVars {
			w.add(errVarReference(pos, path, root))
			return
		}
		if len(r.path) >= 2 && !w.vars[r.path[1]] {
			w.add(errUnknownVar(pos, path, r.path[1], w.varNames))
		}
	case "workflow":
		if len(r.path) >= 2 && !contains(workflowFields, r.path[1]) {
			w.add(errUnknownWorkflowField(pos, path, r.path[1], workflowFields))
		}
	case "forEach":
		if sc.kind == inVars {
			w.add(errVarReference(pos, path, root))
			return
		}
		if len(sc.itemVars) == 0 {
			w.add(errForEachOutside(pos, path))
			return
		}
		if len(r.path) >= 2 && !contains(sc.itemVars, r.path[1]) && r.path[1] != "index" {
			w.add(errUnknownForEachVar(pos, path, r.path[1], sc.itemVars))
		}
	case "steps":
		if sc.kind == inVars {
			w.add(errVarReference(pos, path, root))
			return
		}
		w.checkStepRef(pos, path, r, sc)
	default:
		w.add(errUnknownTemplateRoot(pos, path, root))
	}
}

func (w *wfCheck) checkStepRef(pos ir.Pos, path string, r ref, sc scope) {
	if len(r.path) < 2 {
		w.add(errWholeSteps(pos, path))
		return
	}
	id := r.path[1]
	if w.dupIDs[id] {
		return // reported as duplicate_step; the step meant is in doubt
	}
	ti, known := w.byID[id]
	if !known {
		w.add(errUnknownStep(pos, path, id, w.ids))
		return
	}
	target := w.steps[ti]
	what := "result"
	if len(r.path) >= 3 {
		what = r.path[2]
		if !contains(stepFields, what) {
			w.add(errUnknownStepField(pos, path, id, what))
			return
		}
	}
	// chain is where the read happens: the reading step, or the loop
	// whose output: it is; the loops enclosing it follow through parent.
	chain := sc.step
	if sc.kind == inLoopOutput {
		chain = sc.loop
	}
	readerFinally := chain != nil && chain.outermost().finally
	if target.finally && (sc.kind == inOutput || !readerFinally) {
		w.add(errFinallyRead(pos, path, readerName(sc), id))
		return
	}
	if target.parent != nil && sc.kind == inOutput {
		w.add(errBodyStepOutside(pos, path, readerName(sc), id, stepName(target.parent)))
		return
	}
	why := target.why
	switch {
	case sc.kind == inOutput, sc.kind == inLoopOutput && target.parent == sc.loop:
		// Computed after every step of its scope has ended.
	case readerFinally && !target.finally && target.parent == nil:
		// Every top-level step has ended, but perhaps without an output.
		why = finallyReadWhy
	default:
		a, ok := anchor(chain, target)
		if !ok {
			w.add(errBodyStepOutside(pos, path, readerName(sc), id, stepName(target.parent)))
			return
		}
		switch {
		case a == target && a == sc.step:
			w.add(errSelfReference(pos, path, id, what))
			return
		case a == target:
			w.add(errBodyReadsLoop(pos, path, stepName(chain), id))
			return
		case a.closure.has(ti):
		case a == sc.step:
			w.add(errMissingDependency(pos, path, stepName(a), id, what, w.depNames(a)))
			return
		default:
			w.add(errMissingLoopDependency(pos, path, readerName(sc), stepName(a), id, what))
			return
		}
	}
	// why says why the target may end without a result of its own.
	if sc.kind == inOutput && why == "" && (what == "output" || what == "content") {
		why = w.skippedByRemaining(target)
	}
	if what == "content" {
		w.checkContentRef(pos, path, r, target, why)
		return
	}
	if what != "output" {
		return
	}
	if target.typ == ir.StepForEach && len(r.path) >= 4 && !contains(forEachOutputFields, r.path[3]) {
		w.add(errUnknownForEachOutput(pos, path, id, r.path[3]))
		return
	}
	if target.typ == ir.StepWorkflow && len(r.path) >= 4 && r.optionalFrom > 3 {
		w.noteCalleeRead(target, pos, path, r.path[3])
	}
	if target.typ == ir.StepElicitation && len(r.path) >= 4 {
		w.checkAnswerRef(pos, path, r, target, why)
		return
	}
	if why == "" {
		return
	}
	switch {
	case len(r.path) >= 4:
		if r.optionalFrom > 3 && !target.defaults[r.path[3]] {
			w.add(errMissingDefaultResult(pos, path, id, r.path[3], why, target.hasDefaults))
		}
	case !r.indexed && !target.hasDefaults:
		w.add(errMissingDefaultResult(pos, path, id, "", why, false))
	}
}

// checkAnswerRef checks a read of .steps.E.output.F, F and what follows
// it, where E is an elicitation. why is set when E's whole output may be
// its defaultResults (it was skipped or failed).
func (w *wfCheck) checkAnswerRef(pos ir.Pos, path string, r ref, target *stepInfo, why string) {
	id, field := target.id, r.path[3]
	direct := r.optionalFrom > 3 // the field is read without index
	switch field {
	case "action":
		if why != "" && direct && !target.defaults["action"] {
			w.add(errMissingDefaultResult(pos, path, id, "action", why, target.hasDefaults))
		}
	case "skipped":
		if !target.skipsRemaining() {
			w.add(errUnknownElicitationOutput(pos, path, id, field, target.answers))
		} else if direct {
			w.add(errSkippedFlag(pos, path, id))
		}
	case "content":
		// Without an answer the content is defaultResults.content.
		noAnswer := target.noAnswer
		if noAnswer == "" {
			noAnswer = why
		}
		if noAnswer != "" && r.optionalFrom > 3 && target.defaultContent == nil {
			// .output.content itself is absent, whatever is read in it.
			w.add(errMissingDefaultContent(pos, path, id, "", noAnswer))
			return
		}
		if len(r.path) == 4 {
			return
		}
		f := r.path[4]
		if target.answers != nil && !contains(target.answers, f) && !target.defaultContent[f] {
			w.add(errUnknownAnswerField(pos, path, id, f, target.answers))
			return
		}
		if noAnswer != "" && r.optionalFrom > 4 && !target.defaultContent[f] {
			w.add(errMissingDefaultContent(pos, path, id, f, noAnswer))
		}
	default:
		w.add(errUnknownElicitationOutput(pos, path, id, field, target.answers))
	}
}

// skipsRemaining reports whether a decline or cancel of the elicitation
// ends the run with skip_remaining.
func (si *stepInfo) skipsRemaining() bool {
	return si.ir.OnDecline == ir.ActionSkipRemaining || si.ir.OnCancel == ir.ActionSkipRemaining
}

// checkContentRef checks a read of .steps.X.content[.K]: K must be a key
// of the content map, X must be a tool step, and a key of a step that may
// end without a result (why) is read with index, because its content map
// is then empty.
func (w *wfCheck) checkContentRef(pos ir.Pos, path string, r ref, target *stepInfo, why string) {
	if target.typ == ir.StepElicitation || target.typ == ir.StepForEach {
		w.add(errNoContent(pos, path, target.id, target.typ, r.path[3:]))
		return
	}
	if len(r.path) < 4 {
		return
	}
	key := r.path[3]
	if !isContentKey(key) {
		w.add(errUnknownContentKey(pos, path, target.id, key))
		return
	}
	if why != "" && r.optionalFrom > 3 {
		w.add(errContentMayBeAbsent(pos, path, target.id, key, why))
	}
}

// isContentKey reports whether key names an entry of a content map:
// text, resource, text_N and resource_N (N >= 1), image_N, audio_N and
// link_N (N >= 0).
func isContentKey(key string) bool {
	if key == "text" || key == "resource" {
		return true
	}
	prefix, num, ok := strings.Cut(key, "_")
	if !ok || num == "" || (len(num) > 1 && num[0] == '0') {
		return false
	}
	for _, c := range num {
		if c < '0' || c > '9' {
			return false
		}
	}
	switch prefix {
	case "text", "resource":
		return num != "0"
	case "image", "audio", "link":
		return true
	}
	return false
}

// skippedByRemaining says why target may be skipped by an elicitation
// whose decline or cancel ends the run with skip_remaining: every step
// that is not among that elicitation's dependencies may not have started
// by then. Only output values see such steps; no later step runs.
func (w *wfCheck) skippedByRemaining(target *stepInfo) string {
	for _, e := range w.steps {
		if e.typ != ir.StepElicitation || e == target || e.closure.has(target.index) {
			continue
		}
		if e.ir.OnDecline == ir.ActionSkipRemaining || e.ir.OnCancel == ir.ActionSkipRemaining {
			return fmt.Sprintf("may not have run when %q ends the run with skip_remaining", stepName(e))
		}
	}
	return ""
}

// checkStepTemplates converts and checks every template of a step.
func (w *wfCheck) checkStepTemplates(si *stepInfo) {
	s := si.src
	if s == nil || s.Node == nil || s.Node.Kind != parser.Map {
		return
	}
	sc := scope{kind: inStep, step: si, itemVars: si.itemVars()}
	si.ir.Condition = w.condition(s.Condition, sc)
	switch si.typ {
	case ir.StepTool:
		si.ir.Arguments = w.arguments(s, si.ir.Tool, sc)
	case ir.StepElicitation:
		si.ir.Message = w.template(s.Message, "message", sc)
	case ir.StepWorkflow:
		si.ir.Arguments = w.arguments(s, nil, sc)
		w.noteCall(si, s, si.ir)
	case ir.StepForEach:
		if si.ir.ForEach == nil {
			return
		}
		w.collection(si, sc)
		if si.bodyLen > 0 {
			w.checkLoopOutput(si)
			return
		}
		in, inner := s.Inner, si.ir.ForEach.Step
		if in == nil || inner == nil {
			return
		}
		isc := scope{kind: inStep, step: si, itemVars: append(sc.itemVars, si.itemVar)}
		inner.Condition = w.condition(in.Condition, isc)
		inner.Arguments = w.arguments(in, inner.Tool, isc)
		if inner.Type == ir.StepWorkflow {
			w.noteCall(si, in, inner)
		}
		inner.MaySkip = in.Condition != nil || inner.OnError.Action == ir.ActionContinue
	}
}

// condition reads a condition: a template, or a literal true/false.
func (w *wfCheck) condition(n *parser.Node, sc scope) *ir.Template {
	if n == nil {
		return nil
	}
	if n.Kind == parser.Bool {
		b, _ := n.Value.(bool)
		src := "false"
		if b {
			src = "true"
		}
		return &ir.Template{Source: src, Pos: n.Pos, Path: n.Path}
	}
	t := w.template(n, "condition", sc)
	if t != nil && !isTemplate(t.Source) {
		if s := strings.ToLower(strings.TrimSpace(t.Source)); s != "true" && s != "false" {
			w.add(errConditionConstant(n.Pos, n.Path, t.Source))
		}
	}
	return t
}

// collection reads a forEach's collection: a template that yields an
// array, or a literal list whose strings are templates (checked like
// arguments). A literal list longer than maxIterations is an error here,
// since its length is known.
func (w *wfCheck) collection(si *stepInfo, sc scope) {
	n, fe := si.src.Collection, si.ir.ForEach
	switch {
	case n == nil:
	case n.Kind == parser.Seq:
		tooDeep := false
		fe.Items = w.value(n, sc, 1, "collection", &tooDeep)
		if len(n.Items) > fe.MaxIterations {
			w.add(errLiteralCollectionTooLong(n.Pos, n.Path, len(n.Items), fe.MaxIterations))
		}
	case n.Kind == parser.String:
		fe.Collection = w.template(n, "collection", sc)
	default:
		w.add(errWrongType(n.Pos, n.Path, "collection", "a template or a list", kindPhrase(n.Kind)))
	}
}
