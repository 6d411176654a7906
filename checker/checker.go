package checker

// The driver: Check walks every workflow of every file, runs the rules in
// dependency order (workflow fields and parameters first, because templates
// need the parameter names; step ids before dependsOn; the dependency graph
// before templates, because a template may only read transitive
// dependencies), and collects every diagnostic. A workflow is returned in
// the result only when it produced no error; warnings do not count.

import (
	"slices"
	"time"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/parser"
)

// Options configure Check.
type Options struct {
	// Tools, when set, holds the backends' tool schemas: tool references,
	// argument names and literal argument types are checked against it.
	// Nil means no backend knowledge.
	Tools *catalog.Catalog
	// Workflows are compiled workflows of the same configuration (from
	// plan.json files) that workflow steps may call besides the ones being
	// checked.
	Workflows []*ir.Workflow
	// MaxIterations is the server-wide cap on a forEach's maxIterations
	// (limits.maxIterations in vmcp.yaml); 0 means ir.DefaultIterationLimit.
	MaxIterations int
}

// iterationLimit is the cap a forEach's maxIterations is checked against.
func (o Options) iterationLimit() int {
	if o.MaxIterations > 0 {
		return o.MaxIterations
	}
	return ir.DefaultIterationLimit
}

// Limits and defaults (design.md, "Limits").
const (
	maxNameLen           = 64
	maxSteps             = 100
	maxRetries           = ir.MaxRetries
	maxNesting           = ir.MaxArgumentDepth
	maxForEachParallel   = ir.MaxForEachParallel
	maxElicitationSchema = 100 * 1024

	defaultWorkflowTimeout = ir.DefaultWorkflowTimeout
	defaultStepTimeout     = ir.DefaultStepTimeout
	defaultMaxParallel     = ir.DefaultMaxParallel
	defaultItemVar         = "item"
	defaultForEachParallel = ir.DefaultMaxParallel
	defaultIterations      = ir.DefaultMaxIterations
	defaultRetryDelay      = ir.DefaultRetryDelay
)

// isName reports whether s is a workflow name: lower-case letters, digits,
// '_' and '-', starting and ending with a letter or digit
// (^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$).
func isName(s string) bool {
	if s == "" {
		return false
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
	if !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !alnum(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// isIdentifier reports whether s is an ASCII identifier
// (^[A-Za-z_][A-Za-z0-9_]*$).
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// Check validates parsed files and returns one ir.Workflow per workflow
// without errors, in file order, with steps in source order. Diagnostics
// cover every file; Check never stops at the first problem.
func Check(files []*parser.File, opts Options) ([]*ir.Workflow, diag.List) {
	c := &checker{opts: opts, names: map[string]ir.Pos{}, defs: map[string]*ir.Workflow{}}
	var out []*ir.Workflow
	for _, f := range files {
		if f == nil {
			continue
		}
		for _, u := range f.Unknown {
			c.diags.Add(errUnknownField(u.Pos, u.Path, u.Key, u.Object, u.Known))
		}
		for _, w := range f.Workflows {
			if w == nil {
				continue
			}
			if wf := c.workflow(f, w); wf != nil {
				out = append(out, wf)
			}
		}
	}
	if len(c.calls) > 0 {
		bad := c.checkCalls()
		c.applyDeferredFloors(bad)
		out = slices.DeleteFunc(out, func(wf *ir.Workflow) bool { return bad[wf] })
	}
	return out, c.diags
}

type checker struct {
	opts  Options
	diags diag.List
	// names maps each workflow name to where it was first defined.
	names map[string]ir.Pos
	// templates holds the analysis of every template text seen so far.
	templates map[string]*templateAnalysis
	// defs maps each workflow name to its first definition (errors or
	// not), and order lists those in input order, for workflow steps.
	defs  map[string]*ir.Workflow
	order []*ir.Workflow
	// calls and reads wait for checkCalls (workflows.go).
	calls []*workflowCall
	reads []*calleeRead
	// floors are the workflows with workflow steps whose annotation floor
	// waits for their callees' (applyDeferredFloors).
	floors []*wfCheck
}

// workflow checks one workflow and returns its IR, or nil when it has errors.
func (c *checker) workflow(f *parser.File, src *parser.Workflow) *ir.Workflow {
	w := &wfCheck{c: c, file: f, src: src, byID: map[string]int{}}
	calls := len(c.calls)
	w.run()
	switch {
	case c.opts.Tools == nil:
	case len(c.calls) > calls:
		// Its workflow steps need their callees' floors first (Check).
		c.floors = append(c.floors, w)
	default:
		w.addAll(applyAnnotationFloor(w.wf, c.opts.Tools, c.callee, w.hintPos))
	}
	// Unknown keys inside this workflow also make it invalid.
	invalid := w.diags.HasErrors() || w.hasUnknownKeys()
	c.diags = append(c.diags, w.diags...)
	if invalid {
		return nil
	}
	return w.wf
}

// wfCheck is the state of checking one workflow.
type wfCheck struct {
	c     *checker
	file  *parser.File
	src   *parser.Workflow
	wf    *ir.Workflow
	diags diag.List

	params     map[string]bool
	paramNames []string // declared order
	vars       map[string]bool
	varNames   []string

	steps []*stepInfo // the top-level steps, then the finally steps
	nmain int         // how many of steps are top-level steps
	// nouter is how many are top-level or finally steps; loop body steps
	// follow them (bodies.go).
	nouter int
	byID   map[string]int // id -> index of the first step with it
	ids    []string       // every distinct id, for suggestions
	// dupIDs are the ids more than one step has (nil when none):
	// references to them are not checked (checkDuplicateIDs).
	dupIDs map[string]bool

	valueSlab []ir.Value // see newValue

	// hints maps each explicit annotation hint (camelCase) to its key.
	hints map[string]*parser.Field
}

func (w *wfCheck) add(d diag.Diagnostic) { w.diags.Add(d) }

func (w *wfCheck) addAll(l diag.List) {
	for _, d := range l {
		w.add(d)
	}
}

// hasUnknownKeys reports whether the parser found unknown keys inside this
// workflow's mapping (they were reported once, by Check).
func (w *wfCheck) hasUnknownKeys() bool {
	if w.src.Node == nil {
		return false
	}
	start, end := w.src.Node.Pos, w.endPos()
	for _, u := range w.file.Unknown {
		if !before(u.Pos, start) && (end.Line == 0 || before(u.Pos, end)) {
			return true
		}
	}
	return false
}

// endPos is the start of the next workflow of the same file, or the zero
// Pos when this is the last one.
func (w *wfCheck) endPos() ir.Pos {
	found := false
	for _, o := range w.file.Workflows {
		if found && o.Node != nil {
			return o.Node.Pos
		}
		if o == w.src {
			found = true
		}
	}
	return ir.Pos{}
}

func before(a, b ir.Pos) bool {
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}

func (w *wfCheck) run() {
	src := w.src
	pos := ir.Pos{File: w.file.Name}
	path := ""
	if src.Node != nil {
		pos, path = src.Node.Pos, src.Node.Path
	}
	w.wf = &ir.Workflow{
		Pos:         pos,
		Timeout:     ir.Duration(defaultWorkflowTimeout),
		FailureMode: ir.FailureAbort,
		MaxParallel: defaultMaxParallel,
	}
	w.checkName(pos, path)
	w.checkDescription(pos, path)
	if d, ok := w.duration(src.Timeout, "timeout"); ok {
		w.wf.Timeout = ir.Duration(d)
	}
	w.checkFailureMode()
	if n, ok := w.intRange(src.MaxParallel, "maxParallel", 1, 0); ok {
		w.wf.MaxParallel = int(n)
	}
	w.checkAnnotations()
	w.checkParameters()
	w.checkVars()
	w.checkSteps(pos, path)
	w.checkOutput()
}

func (w *wfCheck) checkName(pos ir.Pos, path string) {
	n := w.src.Name
	if n == nil {
		w.add(errMissingField(pos, path, "name", "workflow"))
		return
	}
	name, ok := w.str(n, "name")
	if !ok {
		return
	}
	w.wf.Name = name
	if name == "" || len(name) > maxNameLen || !isName(name) {
		w.add(errInvalidName(n.Pos, n.Path, name))
		return
	}
	if first, dup := w.c.names[name]; dup {
		w.add(errDuplicateWorkflow(n.Pos, n.Path, name, first))
		return
	}
	w.c.names[name] = n.Pos
	w.c.defs[name] = w.wf
	w.c.order = append(w.c.order, w.wf)
}

func (w *wfCheck) checkDescription(pos ir.Pos, path string) {
	n := w.src.Description
	if n == nil {
		w.add(errMissingField(pos, path, "description", "workflow"))
		return
	}
	if s, ok := w.str(n, "description"); ok {
		if s == "" {
			w.add(errMissingField(n.Pos, n.Path, "description", "workflow"))
		}
		w.wf.Description = s
	}
}

func (w *wfCheck) checkFailureMode() {
	n := w.src.FailureMode
	if n == nil {
		return
	}
	s, ok := w.str(n, "failureMode")
	if !ok {
		return
	}
	switch s {
	case ir.FailureAbort, ir.FailureContinue:
		w.wf.FailureMode = s
	default:
		w.add(errInvalidFailureMode(n.Pos, n.Path, s))
	}
}

var annotationHints = []string{"destructiveHint", "idempotentHint", "openWorldHint", "readOnlyHint"}

func (w *wfCheck) checkAnnotations() {
	n := w.src.Annotations
	if n == nil {
		return
	}
	if !w.kind(n, "annotations", parser.Map) {
		return
	}
	a := &ir.Annotations{}
	known := append([]string{"title"}, annotationHints...)
	for _, f := range n.Fields {
		v := f.Value
		switch f.Key {
		case "title":
			if s, ok := w.str(v, "annotations.title"); ok {
				a.Title = s
			}
		case "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint",
			"read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint":
			b, ok := w.boolean(v, "annotations."+f.Key)
			if !ok {
				continue
			}
			hint := hintOpenWorld
			switch f.Key {
			case "readOnlyHint", "read_only_hint":
				a.ReadOnlyHint, hint = &b, hintReadOnly
			case "destructiveHint", "destructive_hint":
				a.DestructiveHint, hint = &b, hintDestructive
			case "idempotentHint", "idempotent_hint":
				a.IdempotentHint, hint = &b, "idempotentHint"
			default:
				a.OpenWorldHint = &b
			}
			if w.hints == nil {
				w.hints = map[string]*parser.Field{}
			}
			w.hints[hint] = f
		default:
			if !w.unknownReported(f.KeyPos) {
				w.add(errInvalidAnnotation(f.KeyPos, pathJoin(n.Path, f.Key), f.Key, known))
			}
		}
	}
	w.wf.Annotations = a
}

// hintPos is where the explicit annotation hint is written: its key.
func (w *wfCheck) hintPos(hint string) (ir.Pos, string) {
	if f, ok := w.hints[hint]; ok {
		return f.KeyPos, pathJoin(w.src.Annotations.Path, f.Key)
	}
	return w.wf.Pos, "annotations"
}

// unknownReported reports whether the parser already listed the key at pos
// as unknown, so it is not reported twice.
func (w *wfCheck) unknownReported(pos ir.Pos) bool {
	for _, u := range w.file.Unknown {
		if u.Pos == pos {
			return true
		}
	}
	return false
}

// ---- typed field access ----

func kindPhrase(k parser.Kind) string {
	switch k {
	case parser.Null:
		return "null"
	case parser.Int:
		return "an integer"
	case parser.Map:
		return "a mapping"
	case parser.Seq:
		return "a list"
	}
	return "a " + k.String()
}

// kind reports whether n has kind k, adding a wrong_type error otherwise.
func (w *wfCheck) kind(n *parser.Node, field string, k parser.Kind) bool {
	if n.Kind == k {
		return true
	}
	w.add(errWrongType(n.Pos, n.Path, field, kindPhrase(k), kindPhrase(n.Kind)))
	return false
}

func (w *wfCheck) str(n *parser.Node, field string) (string, bool) {
	if !w.kind(n, field, parser.String) {
		return "", false
	}
	s, _ := n.Str()
	return s, true
}

func (w *wfCheck) boolean(n *parser.Node, field string) (bool, bool) {
	if !w.kind(n, field, parser.Bool) {
		return false, false
	}
	b, _ := n.Value.(bool)
	return b, true
}

// integer reads an integral number (a float with no fraction counts).
func (w *wfCheck) integer(n *parser.Node, field string) (int64, bool) {
	switch v := n.Value.(type) {
	case int64:
		if n.Kind == parser.Int {
			return v, true
		}
	case float64:
		if n.Kind == parser.Float && v == float64(int64(v)) {
			return int64(v), true
		}
	}
	w.add(errWrongType(n.Pos, n.Path, field, "an integer", kindPhrase(n.Kind)))
	return 0, false
}

// number reads a number, integral or not.
func (w *wfCheck) number(n *parser.Node, field string) (float64, bool) {
	switch v := n.Value.(type) {
	case int64:
		if n.Kind == parser.Int {
			return float64(v), true
		}
	case float64:
		if n.Kind == parser.Float {
			return v, true
		}
	}
	w.add(errWrongType(n.Pos, n.Path, field, "a number", kindPhrase(n.Kind)))
	return 0, false
}

// intRange reads an optional integer in [lo, hi] (hi <= 0: no upper bound).
func (w *wfCheck) intRange(n *parser.Node, field string, lo, hi int64) (int64, bool) {
	if n == nil {
		return 0, false
	}
	v, ok := w.integer(n, field)
	if !ok {
		return 0, false
	}
	if v < lo || (hi > 0 && v > hi) {
		w.add(errOutOfRange(n.Pos, n.Path, field, v, lo, hi))
		return 0, false
	}
	return v, true
}

// duration reads an optional positive Go duration.
func (w *wfCheck) duration(n *parser.Node, field string) (time.Duration, bool) {
	if n == nil {
		return 0, false
	}
	if n.Kind != parser.String {
		w.add(errWrongType(n.Pos, n.Path, field, "a duration string such as \"5m\"", kindPhrase(n.Kind)))
		return 0, false
	}
	s, _ := n.Str()
	d, err := time.ParseDuration(s)
	if err != nil {
		w.add(errInvalidDuration(n.Pos, n.Path, field, s))
		return 0, false
	}
	if d <= 0 {
		w.add(errNonPositiveDuration(n.Pos, n.Path, field, s))
		return 0, false
	}
	return d, true
}

func pathJoin(base, key string) string {
	if base == "" {
		return key
	}
	return base + "." + key
}
