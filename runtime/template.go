package runtime

// Templates: every ir.Template of a plan is parsed exactly once, in New, and
// executed many times. A template is evaluated in one of three ways:
//
//  1. A Single template whose action is a plain field chain
//     ("{{.steps.a.output.items}}") is resolved directly by walking the
//     template data; no text/template execution, and the value keeps its type.
//  2. Any other Single template is parsed a second time with "| __typed"
//     appended to its pipeline. __typed encodes the pipeline's value as JSON,
//     which is decoded again, so the value keeps its type whatever the
//     pipeline does ("{{len .steps.a.output.items}}" is the number 3).
//  3. Every other template renders to a string.
//
// Execution uses missingkey=error, and the engine's own field walk follows
// the same rule, so a field that an output lacks is an error that names the
// step, the field and the template's file position: never "<no value>". A
// null value printed inside text renders as the empty string.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/vmcp-dev/vmcp/internal/lazyre"
	"github.com/vmcp-dev/vmcp/ir"
)

// Limits enforced while evaluating templates and arguments (ir/limits.go;
// limit.go checks whole values).
const (
	maxTemplateOutput = ir.MaxValueBytes    // bytes rendered by one template
	maxArgumentDepth  = ir.MaxArgumentDepth // nesting of argument values
)

// tmpl is one parsed template.
type tmpl struct {
	src *ir.Template
	// chain is set for a Single template that is a plain field chain;
	// chainPos is the chain's byte offset in the source.
	chain    []string
	chainPos int
	// entry, in a chains-only workflow, is 1 + the index of the step a
	// chain .steps.<id>... reads (0 for other templates): resolveChain
	// then finds the entry in the run's stepView without a lookup by id.
	entry int
	// text renders the template as a string (nil when chain is set).
	text *template.Template
	// typed renders a Single template's value as JSON (see file comment).
	typed *template.Template
	// call, when set, evaluates a Single template that is one query of a
	// field chain without rendering it (templatecall.go); typed stays
	// the path for what it leaves.
	call *queryCall
	// jsonOf, when set, is the chain of a Single template that is exactly
	// '{{json .field.chain}}': a forEach collection of that form is read
	// without the JSON text (collectionValue, templatecall.go).
	jsonOf *tmpl
	// noValueText is true when the source itself contains "<no value>",
	// so the writer must not treat that text as a printed null.
	noValueText bool
}

// errMissing marks template errors caused by absent data, which output
// properties turn into defaults.
var errMissing = errors.New("missing value")

// templateError is a failed evaluation: the position inside the file and a
// message that never contains data values.
type templateError struct {
	pos     ir.Pos
	msg     string
	missing bool
}

func (e *templateError) Error() string { return e.msg }
func (e *templateError) Is(target error) bool {
	return target == errMissing && e.missing
}

// templateFuncs are the functions available to every template, on top of
// the text/template built-ins: the workflow functions ir.TemplateFuncs
// names (workflowFuncs), and comparison functions that replace the
// built-ins so that numbers compare by value whatever their Go type.
func templateFuncs() template.FuncMap { return templateFuncsWith(0) }

// templateFuncsWith is templateFuncs with queries bounded by queryBytes
// (Options.MaxResultBytes).
func templateFuncsWith(queryBytes int) template.FuncMap {
	m := template.FuncMap{
		"eq":      eqFunc,
		"ne":      neFunc,
		"lt":      ltFunc,
		"le":      leFunc,
		"gt":      gtFunc,
		"ge":      geFunc,
		"__typed": typedFunc,
	}
	q := newQueryCache()
	q.maxBytes = queryBytes
	for name, f := range workflowFuncsOf(q) {
		m[name] = f
	}
	m[queriesFunc] = func() *queryCache { return q }
	return m
}

// queriesFunc is the hidden function that gives a function map's query
// cache to parseTemplate (the query shortcut, templatecall.go); like
// __typed, no workflow can name it (the checker knows only
// ir.TemplateFuncs).
const queriesFunc = "__queries"

// workflowFuncs implements each name of ir.TemplateFuncs, with queries
// bounded by queryBytes.
func workflowFuncs(queryBytes int) map[string]any {
	q := newQueryCache()
	q.maxBytes = queryBytes
	return workflowFuncsOf(q)
}

// workflowFuncsOf is workflowFuncs with queries through q.
func workflowFuncsOf(q *queryCache) map[string]any {
	return map[string]any{
		ir.FuncJSON:     jsonFunc,
		ir.FuncFromJSON: fromJSONFunc,
		ir.FuncQuote:    quoteFunc,
		ir.FuncQuery:    q.query,
	}
}

// parseTemplate parses t once. It reports syntax errors with the absolute
// position, although the checker has normally rejected them already.
func parseTemplate(t *ir.Template, funcs template.FuncMap) (*tmpl, error) {
	out := &tmpl{src: t, noValueText: strings.Contains(t.Source, "<no value>")}
	text, err := template.New("t").Funcs(funcs).Option("missingkey=error").Parse(t.Source)
	if err != nil {
		return nil, fmt.Errorf("%s: template does not parse: %v", t.Pos, stripTemplatePrefix(err.Error()))
	}
	out.text = text
	if !t.Single {
		return out, nil
	}
	action := singleAction(text)
	if action == nil {
		return out, nil // not one action after all: render as a string
	}
	if len(action.Pipe.Cmds) == 1 && len(action.Pipe.Cmds[0].Args) == 1 {
		if f, ok := action.Pipe.Cmds[0].Args[0].(*parse.FieldNode); ok {
			out.chain = f.Ident
			out.chainPos = nodeOffset(t.Source, int(f.Position()), f.String())
			out.text = nil
			return out, nil
		}
	}
	if qf, ok := funcs[queriesFunc].(func() *queryCache); ok {
		out.call = parseQueryCall(out, action, qf())
	}
	out.jsonOf = parseJSONOf(out, action)
	// Re-parse with "| __typed" appended to the pipeline. Everything before
	// the pipeline's end keeps its offset, so positions stay exact.
	src := t.Source
	closeAt := strings.LastIndex(src, "}}")
	if closeAt < int(action.Pipe.Position()) {
		return out, nil
	}
	pipeEnd := closeAt
	if strings.HasSuffix(strings.TrimRight(src[:closeAt], " \t\r\n"), " -") {
		pipeEnd = strings.LastIndex(src[:closeAt], "-")
	}
	typedSrc := src[:pipeEnd] + " | __typed " + src[pipeEnd:]
	typed, err := template.New("t").Funcs(funcs).Option("missingkey=error").Parse(typedSrc)
	if err != nil {
		return out, nil // keep the string form; it parsed above
	}
	out.typed = typed
	return out, nil
}

// singleAction returns the template's only action when the template is
// exactly one action without variable declarations.
func singleAction(t *template.Template) *parse.ActionNode {
	if t.Tree == nil || t.Tree.Root == nil {
		return nil
	}
	var action *parse.ActionNode
	for _, n := range t.Tree.Root.Nodes {
		switch n := n.(type) {
		case *parse.ActionNode:
			if action != nil {
				return nil
			}
			action = n
		case *parse.TextNode:
			if len(bytes.TrimSpace(n.Text)) != 0 {
				return nil
			}
		default:
			return nil
		}
	}
	if action == nil || len(action.Pipe.Decl) > 0 {
		return nil
	}
	return action
}

// value evaluates the template: typed for Single templates, a string
// otherwise.
func (t *tmpl) value(data map[string]any) (any, error) {
	switch {
	case t.chain != nil:
		return t.resolveChain(data)
	case t.typed != nil:
		if t.call != nil {
			if v, ok := t.call.value(data); ok {
				return v, nil
			}
		}
		s, err := t.render(t.typed, data)
		if err != nil {
			return nil, err
		}
		v, err := decodeTyped(s)
		if err != nil {
			return nil, &templateError{pos: t.src.Pos, msg: "template value: " + err.Error()}
		}
		return v, nil
	}
	return t.render(t.text, data)
}

// str evaluates the template to a string, whatever its kind.
func (t *tmpl) str(data map[string]any) (string, error) {
	if t.chain == nil {
		return t.render(t.text, data)
	}
	v, err := t.resolveChain(data)
	if err != nil {
		return "", err
	}
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	}
	return fmt.Sprint(v), nil
}

func (t *tmpl) render(tt *template.Template, data map[string]any) (string, error) {
	w := limitWriter{noValueText: t.noValueText}
	if err := tt.Execute(&w, data); err != nil {
		if errors.Is(err, errTooLong) {
			return "", &templateError{pos: t.src.Pos, msg: "template output exceeds the 10 MB limit"}
		}
		return "", t.execError(err)
	}
	return w.buf.String(), nil
}

var (
	errTooLong = errors.New("template output too long")
	errTooDeep = fmt.Errorf("value is nested deeper than %d levels", maxArgumentDepth)
)

// limitWriter collects template output up to maxTemplateOutput bytes and
// turns a printed null ("<no value>") into nothing.
type limitWriter struct {
	buf         bytes.Buffer
	noValueText bool
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if !w.noValueText && string(p) == "<no value>" {
		return len(p), nil
	}
	if w.buf.Len()+len(p) > maxTemplateOutput {
		return 0, errTooLong
	}
	return w.buf.Write(p)
}

var _ io.Writer = (*limitWriter)(nil)

// mayReadWorkflow reports whether t may read .workflow, which changes as
// the run goes: a template whose text never names "workflow" cannot
// reach it.
func (t *tmpl) mayReadWorkflow() bool { return strings.Contains(t.src.Source, "workflow") }

// isParam reports whether t is exactly a parameter, {{.params.P}}.
func (t *tmpl) isParam() bool { return len(t.chain) == 2 && t.chain[0] == "params" }

// resolveChain walks a field chain through maps, as text/template would
// with missingkey=error, without executing a template.
func (t *tmpl) resolveChain(data map[string]any) (any, error) {
	var cur any = data
	start := 0
	if t.entry > 0 {
		if sv, ok := data["steps"].(*stepView); ok {
			cur, start = &sv.entries[t.entry-1], 2
		}
	}
	for i := start; i < len(t.chain); i++ {
		name := t.chain[i]
		var (
			v  any
			ok bool
		)
		switch m := cur.(type) {
		case map[string]any:
			v, ok = m[name]
		case *stepView:
			if sp := m.byID[name]; sp != nil {
				v, ok = &m.entries[sp.index], true
			} else {
				return nil, t.fieldError(t.chainPos, t.chain, i, map[string]any(nil))
			}
		case *stepEntry:
			if v, ok = m.field(name); !ok {
				// Explained as the map the entry stands for.
				return nil, t.fieldError(t.chainPos, t.chain, i, map[string]any(nil))
			}
		}
		if !ok {
			return nil, t.fieldError(t.chainPos, t.chain, i, cur)
		}
		cur = v
	}
	switch x := cur.(type) {
	case *stepEntry:
		return x.asMap(), nil
	case *stepView:
		m := make(map[string]any, len(x.entries))
		for id, sp := range x.byID {
			m[id] = x.entries[sp.index].asMap()
		}
		return m, nil
	}
	return cur, nil
}

// fieldError explains why chain[i] could not be read from holder.
func (t *tmpl) fieldError(offset int, chain []string, i int, holder any) error {
	field := chain[i]
	where := describeChain(chain[:i])
	e := &templateError{pos: t.offsetPos(offset), missing: true}
	switch holder.(type) {
	case nil:
		e.msg = fmt.Sprintf("cannot read field %q of %s: it is null (in {{.%s}})", field, where, strings.Join(chain, "."))
	case map[string]any:
		e.msg = fmt.Sprintf("%s has no field %q (in {{.%s}}); use index to read an optional field", where, field, strings.Join(chain, "."))
	default:
		e.msg = fmt.Sprintf("cannot read field %q of %s: it is %s, not an object (in {{.%s}})", field, where, typeName(holder), strings.Join(chain, "."))
	}
	return e
}

// describeChain names the value a field chain reaches, for messages.
func describeChain(chain []string) string {
	switch {
	case len(chain) == 0:
		return "the template data"
	case len(chain) >= 3 && chain[0] == "steps" && chain[2] == "output":
		if len(chain) == 3 {
			return fmt.Sprintf("the output of step %q", chain[1])
		}
		return fmt.Sprintf("the output of step %q at .%s", chain[1], strings.Join(chain[3:], "."))
	case len(chain) == 1 && chain[0] == "params":
		return "the parameters"
	case len(chain) == 1 && chain[0] == "steps":
		return "the steps"
	}
	return "." + strings.Join(chain, ".")
}

// nodeOffset corrects the offset text/template reports for a node: for a
// field chain it points at the second field, so look for the node's text
// just before the reported offset.
func nodeOffset(src string, offset int, text string) int {
	start := offset - len(text)
	if start < 0 {
		start = 0
	}
	if offset > len(src) {
		return offset
	}
	if i := strings.Index(src[start:], text); i >= 0 && start+i <= offset {
		return start + i
	}
	return offset
}

// lineColOffset converts a 1-based line and a 0-based column (as
// text/template reports them) to a byte offset.
func lineColOffset(src string, line, col int) int {
	off := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(src[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
	}
	return off + col
}

// offsetPos converts a byte offset inside the template source to an
// absolute file position, through the compiler's segment table
// (ir.Template.OffsetPos), so that quoted and block scalars map exactly as
// they do in compile-time diagnostics.
func (t *tmpl) offsetPos(offset int) ir.Pos { return t.src.OffsetPos(offset) }

var execErrorRE = lazyre.New(`(?s)^template: t:(\d+):(\d+): executing "t" at <(.*?)>: (.*)$`)

var (
	missingKeyRE = lazyre.New(`^map has no entry for key "(.*)"$`)
	nilFieldRE   = lazyre.New(`^nil pointer evaluating .*\.(\w+)$`)
	badFieldRE   = lazyre.New(`^can't evaluate field (\w+) in type (.*)$`)
)

// execError maps a text/template execution error to a templateError with
// an absolute position and a message that names the step and the field.
func (t *tmpl) execError(err error) error {
	m := execErrorRE().FindStringSubmatch(err.Error())
	if m == nil {
		return &templateError{pos: t.src.Pos, msg: stripTemplatePrefix(err.Error())}
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	node, msg := m[3], m[4]
	pos := t.offsetPos(nodeOffset(t.src.Source, lineColOffset(t.src.Source, line, col), node))
	chain := nodeChain(node)
	if k := missingKeyRE().FindStringSubmatch(msg); k != nil {
		return &templateError{pos: pos, missing: true, msg: fmt.Sprintf("%s has no field %q (in {{%s}}); use index to read an optional field", describeChain(chainBefore(chain, k[1])), k[1], node)}
	}
	if k := nilFieldRE().FindStringSubmatch(msg); k != nil {
		return &templateError{pos: pos, missing: true, msg: fmt.Sprintf("cannot read field %q of %s: it is null (in {{%s}})", k[1], describeChain(chainBefore(chain, k[1])), node)}
	}
	if k := badFieldRE().FindStringSubmatch(msg); k != nil {
		return &templateError{pos: pos, missing: true, msg: fmt.Sprintf("cannot read field %q of %s: it is %s, not an object (in {{%s}})", k[1], describeChain(chainBefore(chain, k[1])), goTypeName(k[2]), node)}
	}
	if qp, ok := t.queryExprPos(err); ok {
		pos = qp // the character of the query expression (queryfuncs.go)
	}
	return &templateError{pos: pos, msg: fmt.Sprintf("in {{%s}}: %s", node, msg)}
}

// nodeChain returns the field names of a node printed as ".a.b.c".
func nodeChain(node string) []string {
	if !strings.HasPrefix(node, ".") || strings.ContainsAny(node, " ()|") {
		return nil
	}
	return strings.Split(node[1:], ".")
}

// chainBefore returns the part of chain before field (the last occurrence).
func chainBefore(chain []string, field string) []string {
	for i := len(chain) - 1; i >= 0; i-- {
		if chain[i] == field {
			return chain[:i]
		}
	}
	return nil
}

func goTypeName(t string) string {
	switch t {
	case "string":
		return "a string"
	case "float64", "int", "int64":
		return "a number"
	case "bool":
		return "a boolean"
	case "[]interface {}":
		return "an array"
	case "map[string]interface {}":
		return "an object"
	}
	return "a " + t
}

// typeName names the JSON type of v, for errors that must not show v.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, float32, int, int64, int32, int16, int8, uint, uint64, uint32, uint16, uint8, json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("a %T", v)
}

func stripTemplatePrefix(s string) string {
	s = strings.TrimPrefix(s, "template: ")
	return strings.TrimPrefix(s, "t:")
}

// --- functions ---

func jsonFunc(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("json: value cannot be encoded: %v", err)
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

func fromJSONFunc(s string) (any, error) {
	v, err := decodeTyped(s)
	if errors.Is(err, errTooDeep) {
		return nil, fmt.Errorf("fromJson: %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("fromJson: the string is not valid JSON")
	}
	return v, nil
}

// quoteFunc returns v as a JSON string literal, so it can be embedded in
// JSON or YAML text safely.
func quoteFunc(v any) (string, error) {
	var s string
	switch v := v.(type) {
	case nil:
		s = ""
	case string:
		s = v
	default:
		s = fmt.Sprint(v)
	}
	return jsonFunc(s)
}

// typedFunc is appended to the pipeline of Single templates; see the file
// comment.
func typedFunc(v any) (string, error) { return jsonFunc(v) }

// decodeTyped decodes JSON, turning integral numbers into int64 and other
// numbers into float64, like the compiler does for literals.
func decodeTyped(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	if depth(v, 0) > maxArgumentDepth {
		return nil, errTooDeep
	}
	return ir.NormalizeNumbers(v), nil
}

// depth returns the nesting depth of a JSON-like value, stopping early
// once it passes the limit.
func depth(v any, d int) int {
	if d > maxArgumentDepth {
		return d
	}
	max := d
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if n := depth(e, d+1); n > max {
				max = n
			}
		}
	case []any:
		for _, e := range x {
			if n := depth(e, d+1); n > max {
				max = n
			}
		}
	}
	return max
}

// --- number-aware comparison ---

// number converts any Go numeric value to int64 (exact) or float64.
func number(v any) (i int64, f float64, isInt, ok bool) {
	switch x := v.(type) {
	case int:
		return int64(x), 0, true, true
	case int64:
		return x, 0, true, true
	case int32:
		return int64(x), 0, true, true
	case int16:
		return int64(x), 0, true, true
	case int8:
		return int64(x), 0, true, true
	case uint:
		if uint64(x) > math.MaxInt64 {
			return 0, float64(x), false, true
		}
		return int64(x), 0, true, true
	case uint64:
		if x > math.MaxInt64 {
			return 0, float64(x), false, true
		}
		return int64(x), 0, true, true
	case uint32:
		return int64(x), 0, true, true
	case uint16:
		return int64(x), 0, true, true
	case uint8:
		return int64(x), 0, true, true
	case float64:
		return 0, x, false, true
	case float32:
		return 0, float64(x), false, true
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n, 0, true, true
		}
		if g, err := x.Float64(); err == nil {
			return 0, g, false, true
		}
	}
	return 0, 0, false, false
}

var errIncomparable = errors.New("incompatible types for comparison")

// compare returns -1, 0 or 1. ordered is false for values that only
// support equality (booleans, null).
func compare(a, b any) (c int, ordered bool, err error) {
	ai, af, aInt, aNum := number(a)
	bi, bf, bInt, bNum := number(b)
	switch {
	case aNum && bNum:
		if aInt && bInt {
			return cmp3(ai, bi), true, nil
		}
		if aInt {
			af = float64(ai)
		}
		if bInt {
			bf = float64(bi)
		}
		return cmp3(af, bf), true, nil
	case a == nil || b == nil:
		// null equals only null; it is not ordered.
		if a == nil && b == nil {
			return 0, false, nil
		}
		return 1, false, nil
	case aNum || bNum:
		return 0, false, errIncomparable
	}
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		if !ok {
			return 0, false, errIncomparable
		}
		return strings.Compare(x, y), true, nil
	case bool:
		y, ok := b.(bool)
		if !ok {
			return 0, false, errIncomparable
		}
		if x == y {
			return 0, false, nil
		}
		return 1, false, nil
	}
	// Other kinds (e.g. named string types) fall back to reflection.
	av, bv := reflect.ValueOf(a), reflect.ValueOf(b)
	if av.Kind() == reflect.String && bv.Kind() == reflect.String {
		return strings.Compare(av.String(), bv.String()), true, nil
	}
	if av.Type() == bv.Type() && av.Comparable() {
		if av.Equal(bv) {
			return 0, false, nil
		}
		return 1, false, nil
	}
	return 0, false, errIncomparable
}

func cmp3[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func eqFunc(a any, bs ...any) (bool, error) {
	if len(bs) == 0 {
		return false, errors.New("eq needs at least two arguments")
	}
	for _, b := range bs {
		c, _, err := compare(a, b)
		if err != nil {
			return false, err
		}
		if c == 0 {
			return true, nil
		}
	}
	return false, nil
}

func neFunc(a, b any) (bool, error) {
	eq, err := eqFunc(a, b)
	return !eq, err
}

func ordered(a, b any) (int, error) {
	c, ord, err := compare(a, b)
	if err != nil {
		return 0, err
	}
	if !ord {
		return 0, errors.New("values of this type cannot be ordered")
	}
	return c, nil
}

func ltFunc(a, b any) (bool, error) { c, err := ordered(a, b); return c < 0, err }
func leFunc(a, b any) (bool, error) { c, err := ordered(a, b); return c <= 0, err }
func gtFunc(a, b any) (bool, error) { c, err := ordered(a, b); return c > 0, err }
func geFunc(a, b any) (bool, error) { c, err := ordered(a, b); return c >= 0, err }
