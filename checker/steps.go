package checker

// Step checks that need no other step: id, type, the fields each type
// allows and requires, durations, onError, elicitation and forEach
// settings. Steps are checked in three passes (see checkSteps) so that a
// broken step never hides the errors of the others.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/parser"
)

// stepInfo is what the checker knows about one step.
type stepInfo struct {
	index int
	src   *parser.Step
	ir    *ir.Step
	id    string // "" when missing
	label string // how messages name the step
	typ   string // "" when invalid
	deps  []depEdge
	// closure holds the indexes of every transitive dependency.
	closure bitset
	// defaults are the top-level keys of defaultResults.
	defaults    map[string]bool
	hasDefaults bool // defaultResults is a non-empty mapping
	// maySkip is set when readers may see defaultResults; why says why.
	maySkip bool
	why     string
	itemVar string // forEach steps
	// finally is set for the steps of the workflow's finally list; their
	// index comes after every top-level step (see finally.go).
	finally bool
	// answers are the properties an elicitation's schema asks for (nil
	// when the schema does not list them).
	answers []string
	// defaultContent are the keys of an elicitation's
	// defaultResults.content, which its output carries when it continues
	// without an answer.
	defaultContent map[string]bool
	// noAnswer says why an elicitation may complete without an answer
	// (its decline or cancel continues); "" when it cannot.
	noAnswer string
	timeout  time.Duration
	// callee is the workflow a workflow step (or a forEach's inner
	// workflow step) runs, "" otherwise.
	callee string
	// parent is the forEach whose body holds this step (nil at top level
	// and in finally). A loop with a body has its steps in body until
	// expandBodies checks them, then at w.steps[bodyBase:bodyBase+bodyLen].
	parent   *stepInfo
	body     []*parser.Step
	bodyBase int
	bodyLen  int
}

// depEdge is one resolved dependsOn entry.
type depEdge struct {
	to   int
	node *parser.Node
}

var (
	errorActions    = []string{ir.ActionAbort, ir.ActionContinue, ir.ActionRetry}
	responseActions = []string{ir.ActionAbort, ir.ActionContinue, ir.ActionSkipRemaining}
)

func (w *wfCheck) checkSteps(pos ir.Pos, path string) {
	n := w.src.StepsNode
	switch {
	case n == nil:
		w.add(errMissingField(pos, path, "steps", "workflow"))
		return
	case n.Kind == parser.Null:
		w.add(errNoSteps(n.Pos, n.Path))
		return
	case !w.kind(n, "steps", parser.Seq):
		return
	case len(n.Items) == 0:
		w.add(errNoSteps(n.Pos, n.Path))
		return
	case len(n.Items) > maxSteps:
		w.add(errTooManySteps(n.Pos, n.Path, len(n.Items)))
	}
	// Pass 1: each step on its own, the finally steps after the others.
	// Past the limit only the first maxSteps are checked: the workflow is
	// refused anyway, and checking cost stays bounded.
	for i, s := range atMost(w.src.Steps, maxSteps) {
		w.steps = append(w.steps, w.checkStep(i, s, false, nil))
	}
	w.nmain = len(w.steps)
	w.checkFinallySteps()
	w.nouter = len(w.steps)
	w.expandBodies()
	w.checkDuplicateIDs()
	// Pass 2: the dependency graph.
	w.resolveDeps()
	w.checkCycles()
	w.computeClosures()
	for _, si := range w.steps {
		w.computeMaySkip(si)
	}
	// Pass 3: templates, arguments and tool schemas, which need the graph.
	for _, si := range w.steps {
		w.checkStepTemplates(si)
	}
	for _, si := range w.steps[:w.nmain] {
		w.wf.Steps = append(w.wf.Steps, si.ir)
	}
	w.finallyIR()
	w.bodyIR()
}

// checkStep checks step i of w.steps: a top-level step, with finally
// set the finally step at i - w.nmain, or with parent set a step of
// parent's body. A body step of a finally loop is not a finally step
// itself: a failure stops its iteration, as in any body.
func (w *wfCheck) checkStep(i int, s *parser.Step, finally bool, parent *stepInfo) *stepInfo {
	si := &stepInfo{index: i, src: s, finally: finally, parent: parent, label: "steps[" + strconv.Itoa(i) + "]"}
	if finally {
		si.label = "finally[" + strconv.Itoa(i-w.nmain) + "]"
	}
	st := &ir.Step{Index: i, Type: ir.StepTool, Timeout: ir.Duration(defaultStepTimeout)}
	si.ir = st
	si.timeout = defaultStepTimeout
	if s == nil || s.Node == nil {
		return si
	}
	st.Pos = s.Node.Pos
	if s.Node.Kind != parser.Map {
		w.add(errWrongType(s.Node.Pos, s.Node.Path, "a step", "a mapping", kindPhrase(s.Node.Kind)))
		return si
	}
	w.checkStepID(si)
	si.typ = w.stepType(s)
	if si.typ != "" {
		st.Type = si.typ
	}
	w.checkFieldsAllowed(si)
	if d, ok := w.duration(s.Timeout, "timeout"); ok {
		si.timeout = d
		st.Timeout = ir.Duration(d)
		if d > w.wf.Timeout.D() && !si.outermost().finally { // finally steps run after the workflow timeout
			w.add(warnTimeoutExceeds(s.Timeout.Pos, s.Timeout.Path, si.id, d.String(), w.wf.Timeout.D().String()))
		}
	}
	st.OnError = w.checkOnError(s.OnError)
	w.checkAttemptTimeout(si, s.OnError, st.OnError)
	w.checkDefaults(si)
	w.checkIdempotent(si)
	switch si.typ {
	case ir.StepTool:
		w.checkToolRef(si, s, "tool")
	case ir.StepElicitation:
		w.checkElicitation(si)
	case ir.StepForEach:
		w.checkForEach(si)
	case ir.StepWorkflow:
		w.checkWorkflowRef(si, s)
	}
	switch {
	case parent != nil:
		w.checkBodyStep(si)
	case finally:
		w.checkFinallyStep(si)
	}
	return si
}

func (w *wfCheck) checkStepID(si *stepInfo) {
	s := si.src
	if s.ID == nil {
		w.add(errMissingField(s.Node.Pos, s.Node.Path, "id", si.label))
		return
	}
	id, ok := w.str(s.ID, "step id")
	if !ok {
		return
	}
	si.ir.ID = id
	if !validStepID(id) {
		w.add(errInvalidStepID(s.ID.Pos, s.ID.Path, id))
		return
	}
	si.id = id
	si.label = "step " + strconv.Quote(id)
	if strings.Contains(id, "-") {
		w.add(warnStepIDHyphen(s.ID.Pos, s.ID.Path, id))
	}
}

// validStepID accepts a template field name (letters, digits, '_',
// not starting with a digit) or a workflow-style name (which may contain
// '-' and start with a digit, but then templates must use index).
func validStepID(id string) bool {
	if id == "" || len(id) > maxNameLen {
		return false
	}
	return isIdentifier(id) || isName(id)
}

func (w *wfCheck) stepType(s *parser.Step) string {
	if s.Type == nil {
		return ir.StepTool
	}
	t, ok := w.str(s.Type, "type")
	if !ok {
		return ""
	}
	switch t {
	case ir.StepTool, ir.StepElicitation, ir.StepForEach, ir.StepWorkflow:
		return t
	}
	w.add(errInvalidStepType(s.Type.Pos, s.Type.Path, t))
	return ""
}

// typeFields lists, per step type, the type-specific fields it allows.
var typeFields = map[string][]string{
	ir.StepTool:        {"tool", "arguments"},
	ir.StepElicitation: {"message", "schema", "onDecline", "onCancel"},
	ir.StepForEach:     {"collection", "itemVar", "maxParallel", "maxIterations", "step", "steps", "output"},
	ir.StepWorkflow:    {"workflow", "arguments"},
}

// namedNode is a step field by its YAML name.
type namedNode struct {
	name string
	node *parser.Node
}

// typeSpecific returns the step's type-specific fields that are present,
// in a fixed order (tool, arguments, message, schema, onDecline, onCancel,
// collection, itemVar, maxParallel, maxIterations, step, steps, output,
// workflow).
func typeSpecific(s *parser.Step) []namedNode {
	var out []namedNode
	add := func(name string, n *parser.Node) {
		if n != nil {
			out = append(out, namedNode{name, n})
		}
	}
	add("tool", s.Tool)
	add("arguments", s.Arguments)
	add("message", s.Message)
	add("schema", s.Schema)
	if s.OnDecline != nil {
		add("onDecline", s.OnDecline.Node)
	}
	if s.OnCancel != nil {
		add("onCancel", s.OnCancel.Node)
	}
	add("collection", s.Collection)
	add("itemVar", s.ItemVar)
	add("maxParallel", s.MaxParallel)
	add("maxIterations", s.MaxIterations)
	if s.Inner != nil {
		add("step", s.Inner.Node)
	}
	add("steps", s.StepsNode)
	if s.Output != nil {
		add("output", s.Output.Node)
	}
	add("workflow", s.Workflow)
	return out
}

func (w *wfCheck) checkFieldsAllowed(si *stepInfo) {
	if si.typ == "" {
		return
	}
	allowed := typeFields[si.typ]
	for _, f := range typeSpecific(si.src) {
		if slices.Contains(allowed, f.name) {
			continue
		}
		hint := ""
		if si.typ == ir.StepForEach && (f.name == "tool" || f.name == "arguments") {
			hint = "a forEach runs its inner step: put tool and arguments under step:"
		}
		pos, path := keyPos(si.src.Node, f.node, f.name)
		w.add(errFieldNotAllowed(pos, path, f.name, si.typ, hint))
	}
}

// checkIdempotent reads idempotent: a boolean, meaningful on tool steps
// only (the resume rule re-runs an in-flight backend call only when it
// is idempotent).
func (w *wfCheck) checkIdempotent(si *stepInfo) {
	n := si.src.Idempotent
	if n == nil {
		return
	}
	if n.Kind != parser.Bool {
		got := kindPhrase(n.Kind)
		if n.Kind == parser.String {
			got = "the string " + strconv.Quote(fmt.Sprint(n.Value))
		}
		w.add(errInvalidIdempotent(n.Pos, n.Path, got))
		return
	}
	b, _ := n.Value.(bool)
	if si.typ != ir.StepTool && si.typ != "" {
		if b {
			pos, path := keyPos(si.src.Node, n, "idempotent")
			w.add(warnIdempotentNoEffect(pos, path, si.typ))
		}
		return
	}
	si.ir.Idempotent = b
}

// keyPos finds where the key holding value n is written in mapping m.
func keyPos(m, n *parser.Node, name string) (ir.Pos, string) {
	if m != nil {
		for _, f := range m.Fields {
			if f.Value == n {
				return f.KeyPos, pathJoin(m.Path, f.Key)
			}
		}
	}
	return n.Pos, n.Path
}

func (w *wfCheck) checkOnError(oe *parser.OnError) ir.OnError {
	var out ir.OnError
	if oe == nil || oe.Node == nil {
		return out
	}
	if !w.kind(oe.Node, "onError", parser.Map) {
		return out
	}
	if oe.Action != nil {
		if a, ok := w.str(oe.Action, "onError action"); ok {
			if contains(errorActions, a) {
				out.Action = a
			} else {
				w.add(errInvalidAction(oe.Action.Pos, oe.Action.Path, "onError", a, errorActions))
			}
		}
	}
	if n := oe.MaxRetries; n != nil {
		if v, ok := w.integer(n, "maxRetries"); ok {
			switch {
			case v < 0:
				w.add(errOutOfRange(n.Pos, n.Path, "maxRetries", v, 0, maxRetries))
			case out.Action != ir.ActionRetry:
				// As in ToolHive, only action retry retries.
				pos, path := keyPos(oe.Node, n, "maxRetries")
				w.add(warnRetriesWithoutRetry(pos, path, out.Action))
			case v > maxRetries:
				w.add(warnTooManyRetries(n.Pos, n.Path, v))
				out.MaxRetries = maxRetries
			default:
				out.MaxRetries = int(v)
			}
		}
	} else if out.Action == ir.ActionRetry {
		out.MaxRetries = defaultRetries
	}
	if d, ok := w.duration(oe.RetryDelay, "retryDelay"); ok {
		out.RetryDelay = ir.Duration(d)
	} else if out.Action == ir.ActionRetry {
		out.RetryDelay = ir.Duration(defaultRetryDelay)
	}
	w.checkRetryTuning(oe, &out)
	return out
}

// checkRetryTuning reads maxDelay, multiplier, attemptTimeout and
// retryOn. They only shape retries, so without action retry they are a
// warning. Left out, they stay zero in the IR, which means the defaults
// (ir.DefaultMaxDelay, ir.DefaultMultiplier, no attempt deadline, every
// failure kind).
func (w *wfCheck) checkRetryTuning(oe *parser.OnError, out *ir.OnError) {
	if out.Action != ir.ActionRetry {
		for _, f := range []namedNode{{"maxDelay", oe.MaxDelay}, {"multiplier", oe.Multiplier}, {"attemptTimeout", oe.AttemptTimeout}, {"retryOn", oe.RetryOn}} {
			if f.node != nil {
				pos, path := keyPos(oe.Node, f.node, f.name)
				w.add(warnRetryTuningWithoutRetry(pos, path, f.name, out.Action))
			}
		}
	}
	if d, ok := w.duration(oe.MaxDelay, "maxDelay"); ok {
		if d < out.RetryDelay.D() {
			w.add(errMaxDelayBelowRetryDelay(oe.MaxDelay.Pos, oe.MaxDelay.Path, d.String(), out.RetryDelay.D().String()))
		} else {
			out.MaxDelay = ir.Duration(d)
		}
	}
	if n := oe.Multiplier; n != nil {
		if m, ok := w.number(n, "multiplier"); ok {
			if m < 1 || m > maxMultiplier {
				w.add(errMultiplierRange(n.Pos, n.Path, m))
			} else {
				out.Multiplier = m
			}
		}
	}
	if d, ok := w.duration(oe.AttemptTimeout, "attemptTimeout"); ok {
		out.AttemptTimeout = ir.Duration(d)
	}
	if n := oe.RetryOn; n != nil && w.kind(n, "retryOn", parser.Seq) {
		out.RetryOn = w.retryOn(n)
	}
	if out.Action != ir.ActionRetry {
		out.MaxDelay, out.Multiplier, out.AttemptTimeout, out.RetryOn = 0, 0, 0, nil
	}
}

// checkAttemptTimeout warns when each attempt may take as long as the
// whole step.
func (w *wfCheck) checkAttemptTimeout(si *stepInfo, src *parser.OnError, oe ir.OnError) {
	if oe.AttemptTimeout > 0 && oe.AttemptTimeout.D() >= si.timeout {
		n := src.AttemptTimeout
		w.add(warnAttemptTimeoutExceeds(n.Pos, n.Path, stepName(si), oe.AttemptTimeout.D().String(), si.timeout.String()))
	}
}

// maxMultiplier bounds onError.multiplier: beyond it the second interval
// already reaches maxDelay, which is what maxDelay alone says better.
const maxMultiplier = 10

// retryOn reads the failure kinds a retry applies to, in
// ir.RetryOnKinds order, or nil for every kind.
func (w *wfCheck) retryOn(n *parser.Node) []string {
	if len(n.Items) == 0 {
		w.add(errRetryOnEmpty(n.Pos, n.Path))
		return nil
	}
	seen := map[string]bool{}
	for _, it := range n.Items {
		k, ok := w.str(it, "a retryOn entry")
		if !ok {
			continue
		}
		if !contains(ir.RetryOnKinds, k) {
			w.add(errInvalidRetryOn(it.Pos, it.Path, k))
			continue
		}
		seen[k] = true
	}
	if len(seen) == len(ir.RetryOnKinds) {
		return nil
	}
	var kinds []string
	for _, k := range ir.RetryOnKinds {
		if seen[k] {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// defaultRetries is maxRetries for action retry when none is given.
const defaultRetries = 3

func (w *wfCheck) checkDefaults(si *stepInfo) {
	n := si.src.DefaultResults
	if n == nil || n.Kind == parser.Null {
		return
	}
	if !w.kind(n, "defaultResults", parser.Map) {
		return
	}
	si.defaults = map[string]bool{}
	for _, f := range n.Fields {
		si.defaults[f.Key] = true
	}
	si.hasDefaults = len(n.Fields) > 0
	si.ir.DefaultResults = n.Interface()
	if c := n.Get("content"); c != nil && c.Kind == parser.Map {
		si.defaultContent = map[string]bool{}
		for _, f := range c.Fields {
			si.defaultContent[f.Key] = true
		}
	}
}

// checkToolRef checks a step's tool reference. backend.tool is checked
// against the catalog when there is one. A bare ("echo") or aggregated
// ("backend_echo") name is resolved against the catalog (resolveToolRef);
// without a catalog it stays unresolved in the IR, with a warning, and vmcp
// run resolves it at startup against the live backends.
func (w *wfCheck) checkToolRef(si *stepInfo, s *parser.Step, object string) {
	if s.Tool == nil {
		w.add(errMissingStepField(s.Node.Pos, s.Node.Path, stepName(si), "tool", "tool"))
		return
	}
	ref, ok := w.str(s.Tool, "tool")
	if !ok {
		return
	}
	tr := &ir.ToolRef{Pos: s.Tool.Pos}
	backend, tool, dotted := strings.Cut(ref, ".")
	switch {
	case dotted && (backend == "" || tool == ""), ref == "":
		w.add(errInvalidToolRef(s.Tool.Pos, s.Tool.Path, ref))
		return
	case dotted:
		tr.Backend, tr.Name = backend, tool
	default:
		tr.Ref = ref
	}
	if si.ir.Type == ir.StepTool || object == "inner" {
		si.ir.Tool = tr
	}
	if tr.Resolved() {
		w.addAll(checkToolExists(w.c.opts.Tools, tr, s.Tool.Path))
		return
	}
	if w.c.opts.Tools == nil {
		w.add(warnUnresolvedToolRef(s.Tool.Pos, s.Tool.Path, ref))
		return
	}
	w.addAll(resolveToolRef(w.c.opts.Tools, tr, s.Tool.Path))
}

func stepName(si *stepInfo) string {
	if si.id != "" {
		return si.id
	}
	return si.label
}

func (w *wfCheck) checkElicitation(si *stepInfo) {
	s := si.src
	st := si.ir
	st.OnDecline, st.OnCancel = ir.ActionAbort, ir.ActionAbort
	if s.Message == nil {
		w.add(errMissingStepField(s.Node.Pos, s.Node.Path, stepName(si), "elicitation", "message"))
	}
	if s.Schema == nil {
		w.add(errMissingStepField(s.Node.Pos, s.Node.Path, stepName(si), "elicitation", "schema"))
	} else if w.kind(s.Schema, "schema", parser.Map) {
		w.checkElicitationSchema(si, s.Schema)
	}
	if s.Timeout != nil && si.timeout > ir.MaxElicitationTimeout {
		// As in ToolHive: a warning, and the wait is capped.
		w.add(warnElicitationTimeout(s.Timeout.Pos, s.Timeout.Path, si.timeout.String()))
		si.timeout = ir.MaxElicitationTimeout
		st.Timeout = ir.Duration(ir.MaxElicitationTimeout)
	}
	if a, ok := w.response(s.OnDecline, "onDecline"); ok {
		st.OnDecline = a
	}
	if a, ok := w.response(s.OnCancel, "onCancel"); ok {
		st.OnCancel = a
	}
	w.checkDefaultContent(si)
}

// checkDefaultContent checks an elicitation's defaultResults.content, the
// answer its output carries when it continues without one: a mapping whose
// keys are fields the schema asks for.
func (w *wfCheck) checkDefaultContent(si *stepInfo) {
	d := si.src.DefaultResults
	if d == nil || d.Kind != parser.Map {
		return
	}
	c := d.Get("content")
	if c == nil || !w.kind(c, "defaultResults.content", parser.Map) || si.answers == nil {
		return
	}
	for _, f := range c.Fields {
		if !contains(si.answers, f.Key) {
			w.add(errUnknownDefaultAnswer(f.KeyPos, pathJoin(c.Path, f.Key), stepName(si), f.Key, si.answers))
		}
	}
}

func (w *wfCheck) checkElicitationSchema(si *stepInfo, n *parser.Node) {
	schema, _ := n.Interface().(map[string]any)
	if size := jsonSize(schema); size > maxElicitationSchema {
		w.add(errSchemaTooLarge(n.Pos, n.Path, size))
		return
	}
	t := n.Get("type")
	if t == nil {
		w.add(errElicitationNotObject(n.Pos, n.Path, ""))
	} else if s, _ := t.Str(); s != "object" {
		w.add(errElicitationNotObject(t.Pos, t.Path, describeTypeNode(t)))
	}
	top := map[string]any{}
	for k, v := range schema {
		if k != "properties" {
			top[k] = v
		}
	}
	if p := n.Get("properties"); p != nil && w.kind(p, "schema properties", parser.Map) {
		var names []string
		for _, f := range p.Fields {
			names = append(names, f.Key)
			what := "schema property " + fmt.Sprintf("%q", f.Key)
			if !w.kind(f.Value, what, parser.Map) {
				continue
			}
			if t := f.Value.Get("type"); t != nil {
				s, _ := t.Str()
				if s == "object" {
					w.add(errElicitationFieldType(t.Pos, t.Path, f.Key, s))
					continue
				}
				if s == "array" && !isMultiSelect(f.Value) {
					at := t
					if items := f.Value.Get("items"); items != nil {
						at = items
					}
					w.add(errElicitationArrayField(at.Pos, at.Path, f.Key))
					continue
				}
			}
			w.checkPropertySchema(f.Value, f.Value.Interface(), what)
		}
		w.requiredList(n.Get("required"), "elicitation schema", names)
		delete(top, "required")
		si.answers = append([]string{}, names...)
	}
	w.compileSchema(n, top, "elicitation schema")
	si.ir.Schema = schema
}

// isMultiSelect reports whether an array field of an elicitation form is a
// multi-select as MCP 2025-11-25 defines it: items: {type: string, enum:
// [...]}, or items: {anyOf: [{const: ..., title: ...}, ...]}, with at least
// one string choice.
func isMultiSelect(field *parser.Node) bool {
	items := field.Get("items")
	if items == nil || items.Kind != parser.Map {
		return false
	}
	if t := items.Get("type"); t != nil {
		if s, _ := t.Str(); s == "string" {
			return allStrings(items.Get("enum"), func(it *parser.Node) *parser.Node { return it })
		}
	}
	return allStrings(items.Get("anyOf"), func(it *parser.Node) *parser.Node { return it.Get("const") })
}

// allStrings reports whether list is a non-empty list whose items each
// yield (through pick) a string.
func allStrings(list *parser.Node, pick func(*parser.Node) *parser.Node) bool {
	if list == nil || list.Kind != parser.Seq || len(list.Items) == 0 {
		return false
	}
	for _, it := range list.Items {
		v := pick(it)
		if v == nil || v.Kind != parser.String {
			return false
		}
	}
	return true
}

func describeTypeNode(t *parser.Node) string {
	if s, ok := t.Str(); ok {
		return fmt.Sprintf("%q", s)
	}
	return kindPhrase(t.Kind)
}

func (w *wfCheck) response(r *parser.Response, field string) (string, bool) {
	if r == nil || r.Node == nil {
		return "", false
	}
	if !w.kind(r.Node, field, parser.Map) {
		return "", false
	}
	if r.Action == nil {
		w.add(errMissingField(r.Node.Pos, r.Node.Path, "action", field))
		return "", false
	}
	a, ok := w.str(r.Action, field+" action")
	if !ok {
		return "", false
	}
	if !contains(responseActions, a) {
		w.add(errInvalidAction(r.Action.Pos, r.Action.Path, field, a, responseActions))
		return "", false
	}
	return a, true
}

func (w *wfCheck) checkForEach(si *stepInfo) {
	s := si.src
	// The default maxIterations never exceeds the server-wide limit, so a
	// lower limits.maxIterations does not reject loops that set none.
	fe := &ir.ForEach{ItemVar: defaultItemVar, MaxParallel: defaultForEachParallel, MaxIterations: min(defaultIterations, w.c.opts.iterationLimit())}
	si.ir.ForEach = fe
	si.itemVar = defaultItemVar
	if s.Collection == nil {
		w.add(errMissingStepField(s.Node.Pos, s.Node.Path, stepName(si), "forEach", "collection"))
	}
	if n := s.ItemVar; n != nil {
		if v, ok := w.str(n, "itemVar"); ok {
			if v == "index" || !isIdentifier(v) {
				w.add(errInvalidItemVar(n.Pos, n.Path, v))
			} else {
				fe.ItemVar, si.itemVar = v, v
			}
		}
	}
	w.checkItemVarClash(si)
	if v, ok := w.intRange(s.MaxParallel, "forEach maxParallel", 1, maxForEachParallel); ok {
		fe.MaxParallel = int(v)
	}
	if n := s.MaxIterations; n != nil {
		if v, ok := w.integer(n, "maxIterations"); ok {
			if limit := w.c.opts.iterationLimit(); v < 1 || v > int64(limit) {
				w.add(errMaxIterations(n.Pos, n.Path, v, limit))
			} else {
				fe.MaxIterations = int(v)
			}
		}
	}
	if !w.checkLoopDepth(si) {
		return
	}
	if s.StepsNode != nil {
		w.checkLoopBody(si)
		return
	}
	if s.Output != nil && s.Output.Node != nil {
		pos, path := keyPos(s.Node, s.Output.Node, "output")
		w.add(errFieldNotAllowed(pos, path, "output", "forEach", "output: shapes the result of a loop body; write the body as steps:"))
	}
	in := s.Inner
	if in == nil || in.Node == nil {
		w.add(errMissingStepField(s.Node.Pos, s.Node.Path, stepName(si), "forEach", "step (or steps)"))
		return
	}
	if !w.kind(in.Node, "the forEach step", parser.Map) {
		return
	}
	inner := &ir.Step{Index: si.index, ID: si.ir.ID, Type: ir.StepTool, Pos: in.Node.Pos, Timeout: si.ir.Timeout}
	fe.Step = inner
	innerInfo := &stepInfo{index: si.index, src: in, ir: inner, id: si.id, label: si.label + " (inner step)", typ: ir.StepTool}
	if in.Type != nil {
		t, ok := w.str(in.Type, "type")
		switch {
		case ok && t == ir.StepWorkflow:
			inner.Type, innerInfo.typ = t, t
		case ok && t != ir.StepTool:
			w.add(errInnerStepType(in.Type.Pos, in.Type.Path, t))
			return
		}
	}
	if in.DependsOn != nil {
		pos, path := keyPos(in.Node, in.DependsOn, "dependsOn")
		w.add(errInnerDependsOn(pos, path))
	}
	for _, f := range typeSpecific(in) {
		if slices.Contains(typeFields[innerInfo.typ], f.name) {
			continue
		}
		pos, path := keyPos(in.Node, f.node, f.name)
		w.add(errFieldNotAllowed(pos, path, f.name, "forEach inner", "the inner step of a forEach is a tool or workflow step"))
	}
	if d, ok := w.duration(in.Timeout, "timeout"); ok {
		inner.Timeout = ir.Duration(d)
	}
	inner.OnError = w.checkOnError(in.OnError)
	w.checkDefaults(innerInfo)
	if innerInfo.typ == ir.StepWorkflow {
		w.checkWorkflowRef(innerInfo, in)
		si.callee = innerInfo.callee
		return
	}
	w.checkToolRef(innerInfo, in, "inner")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// atMost returns the first n elements of s, or all of s when it is shorter.
func atMost[T any](s []T, n int) []T {
	return s[:min(len(s), n)]
}
