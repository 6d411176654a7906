package checker

// Template analysis.
//
// Every string that contains "{{" is a Go text/template. It is parsed here
// by text/template/parse (what text/template itself uses), knowing the
// built-in and workflow functions (ir.TemplateBuiltins, ir.TemplateFuncs) by name, so that syntax
// errors and unknown functions are compile-time errors. Each distinct text
// is parsed and analysed once per Check; its diagnostics are placed at
// every node that holds it. A syntax error from
// text/template names only a line inside the template; the column is found
// by looking on that line for the token the message names (the bad
// character, the unknown function, the unexpected token, the unclosed
// "{{"), and the resulting byte offset goes through parser.Node.OffsetPos,
// which knows how plain, quoted and block scalars map back to the file.
//
// The parse tree is then walked to collect references: every field chain
// rooted at the context (".steps.a.output.x"), every "$"-rooted chain
// ("$.params.p"), chains on parenthesised pipelines ("(.steps.a.output).x"),
// and "index" calls whose first argument is a reference followed by
// string-literal keys ("index .steps "a-b" "output" "f"" is the reference
// steps/a-b/output/f; components reached through index are marked optional,
// because index is the sanctioned way to read a field that may be absent).
// Inside {{with}} and {{range}} the dot is rebound, so plain ".x" chains in
// their bodies cannot be resolved statically and are skipped; "$" chains
// there are still resolved. Bodies of {{define}}d templates receive
// whatever data the caller passes, so nothing in them is resolved. Each
// reference keeps the byte offset of its first character, so its
// diagnostics point at the exact file column. refs.go checks them.

import (
	"strconv"
	"strings"
	"text/template/parse"
	"unicode/utf8"

	"github.com/vmcp-dev/vmcp/internal/lazyre"
	"github.com/vmcp-dev/vmcp/internal/spell"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/parser"
)

// templateRoots are the top-level names of the template context.
var templateRoots = []string{"params", "vars", "steps", "workflow", "forEach"}

// allFuncNames are the functions a template may call: text/template's
// built-ins and the workflow functions, both listed in ir (ir/funcs.go),
// which the runtime implements.
var allFuncNames = append(append([]string(nil), ir.TemplateBuiltins...), ir.TemplateFuncs...)

// parseFuncs is the function set templates are parsed against: the
// built-ins and ir.TemplateFuncs. Only the names matter to the parser, which
// checks that a called function exists; the values are never called. It is
// built once and only read, so parsing a template costs no map building
// (text/template's Template.Parse rebuilds the built-ins on every call).
var parseFuncs = func() map[string]any {
	m := map[string]any{}
	for _, name := range allFuncNames {
		m[name] = name
	}
	return m
}()

// ref is one reference into the template context.
type ref struct {
	// path holds the components after the root dot: steps, a, output, f.
	path []string
	// off is the byte offset of the reference's first character.
	off int
	// optionalFrom is the index of the first component that was reached
	// through index's string arguments (len(path) when none was).
	optionalFrom int
	// indexed is true when the reference is index's first argument, so its
	// value is only indexed further, never read whole.
	indexed bool
}

// isTemplate reports whether a string is a template (has an action).
func isTemplate(s string) bool { return strings.Contains(s, "{{") }

// parseTemplate parses the string value of n. For a string without
// actions it returns a plain Template and no references. ok is false when
// the template does not parse (the error has been reported).
//
// The analysis of a template text depends on the text alone, so each
// distinct text is parsed and walked once per Check (checker.templates);
// a text seen again only has its diagnostics placed at its own node.
// The returned references are shared between those nodes and are only
// read.
func (w *wfCheck) parseTemplate(n *parser.Node) (t *ir.Template, refs []ref, ok bool) {
	src, _ := n.Str()
	t = &ir.Template{Source: src, Pos: n.OffsetPos(0), Segments: n.Segments(), Path: n.Path}
	if !isTemplate(src) {
		return t, nil, true
	}
	a := w.c.templates[src]
	if a == nil {
		a = analyseTemplate(src)
		if w.c.templates == nil {
			w.c.templates = map[string]*templateAnalysis{}
		}
		w.c.templates[src] = a
	}
	if a.err != "" {
		w.reportSyntax(n, src, a.err)
		return t, nil, false
	}
	t.Single = a.single
	for _, u := range a.undefined {
		w.add(errUndefinedTemplate(n.OffsetPos(u.off), n.Path, u.name))
	}
	for _, q := range a.queries {
		w.add(errQuery(n.OffsetPos(q.off), n.Path, q))
	}
	if len(a.undefined) > 0 || len(a.queries) > 0 {
		return t, nil, false
	}
	return t, a.refs, true
}

// templateAnalysis is what parseTemplate learns from a template text.
type templateAnalysis struct {
	err       string // text/template's parse error, "" when it parses
	single    bool   // ir.Template.Single
	refs      []ref
	undefined []undefinedTemplate
	queries   []queryProblem
}

// analyseTemplate parses src and collects its references: at once for a
// plain template (plainTemplate), through text/template's parser for any
// other.
func analyseTemplate(src string) *templateAnalysis {
	if a, ok := plainTemplate(src); ok {
		return a
	}
	return parsedTemplate(src)
}

// plainTemplate analyses the templates most workflows are made of, text
// around actions that are each one field chain ('{{.params.q}}', '{{
// .steps.a.output.items }}'), without text/template's parser: a third of
// a compile's own time, past goccy's parse, went to parsing them. It
// accepts only what it is sure of (no '{{' in the text, spaces and tabs
// inside the braces, so no trim marker, ASCII identifiers that start with
// a letter or '_') and gives what parsedTemplate gives, a
// reference per chain at the offset of its first dot
// (TestPlainTemplateIsTheParsedOne); ok is false for anything else.
func plainTemplate(src string) (*templateAnalysis, bool) {
	a := &templateAnalysis{}
	actions, text := 0, false
	for i := 0; i < len(src); {
		open := strings.Index(src[i:], "{{")
		if open < 0 {
			text = true
			break
		}
		if open > 0 {
			text = true
		}
		j := i + open + 2
		for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
			j++
		}
		start := j
		var path []string
		for j < len(src) && src[j] == '.' {
			k := j + 1
			if k >= len(src) || !isIdentStart(src[k]) {
				return nil, false
			}
			for k < len(src) && isIdentChar(src[k]) {
				k++
			}
			path = append(path, src[j+1:k])
			j = k
		}
		if len(path) == 0 {
			return nil, false
		}
		for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
			j++
		}
		if !strings.HasPrefix(src[j:], "}}") {
			return nil, false
		}
		a.refs = append(a.refs, ref{path: path, off: start, optionalFrom: len(path)})
		actions++
		i = j + 2
	}
	a.single = actions == 1 && !text
	return a, true
}

func isIdentStart(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || '0' <= c && c <= '9' }

// parsedTemplate parses src with text/template's parser and collects its
// references.
func parsedTemplate(src string) *templateAnalysis {
	// parse.Parse is what text/template's Template.Parse calls, with the
	// same name, delimiters and functions, so the trees and the error
	// messages are the same; the Template around them is not needed.
	trees, err := parse.Parse("t", src, "", "", parseFuncs)
	if err != nil {
		return &templateAnalysis{err: err.Error()}
	}
	root := trees["t"].Root
	defined := make(map[string]bool, len(trees))
	for name := range trees {
		defined[name] = true
	}
	wk := &refWalker{defined: defined}
	wk.node(root, true, true)
	for name, d := range trees {
		if name != "t" {
			wk.node(d.Root, false, false)
		}
	}
	return &templateAnalysis{
		single:    len(root.Nodes) == 1 && isPlainAction(root.Nodes[0]),
		refs:      wk.refs,
		undefined: wk.undefined,
		queries:   wk.queries,
	}
}

func isPlainAction(n parse.Node) bool {
	a, ok := n.(*parse.ActionNode)
	return ok && len(a.Pipe.Decl) == 0
}

type undefinedTemplate struct {
	name string
	off  int
}

type refWalker struct {
	refs      []ref
	defined   map[string]bool
	undefined []undefinedTemplate
	queries   []queryProblem // see query.go
}

// node walks n. dotRoot says whether dot is the context root; rootKnown
// says whether "$" is (it is not inside a {{define}}).
func (wk *refWalker) node(n parse.Node, dotRoot, rootKnown bool) {
	switch x := n.(type) {
	case nil:
	case *parse.ListNode:
		if x == nil {
			return
		}
		for _, c := range x.Nodes {
			wk.node(c, dotRoot, rootKnown)
		}
	case *parse.ActionNode:
		wk.pipe(x.Pipe, dotRoot, rootKnown)
	case *parse.IfNode:
		wk.branch(&x.BranchNode, dotRoot, dotRoot, rootKnown)
	case *parse.WithNode:
		wk.branch(&x.BranchNode, dotRoot, false, rootKnown)
	case *parse.RangeNode:
		wk.branch(&x.BranchNode, dotRoot, false, rootKnown)
	case *parse.TemplateNode:
		if !wk.defined[x.Name] {
			wk.undefined = append(wk.undefined, undefinedTemplate{x.Name, int(x.Pos)})
		}
		wk.pipe(x.Pipe, dotRoot, rootKnown)
	case *parse.PipeNode:
		wk.pipe(x, dotRoot, rootKnown)
	case *parse.CommandNode:
		wk.command(x, false, dotRoot, rootKnown)
	case *parse.FieldNode, *parse.VariableNode, *parse.ChainNode:
		if r, ok := wk.refOf(n, dotRoot, rootKnown); ok {
			wk.refs = append(wk.refs, r)
		} else if c, isChain := n.(*parse.ChainNode); isChain {
			wk.node(c.Node, dotRoot, rootKnown)
		}
	}
}

func (wk *refWalker) branch(b *parse.BranchNode, dotRoot, bodyDotRoot, rootKnown bool) {
	wk.pipe(b.Pipe, dotRoot, rootKnown)
	wk.node(b.List, bodyDotRoot, rootKnown)
	if b.ElseList != nil {
		wk.node(b.ElseList, dotRoot, rootKnown)
	}
}

func (wk *refWalker) pipe(p *parse.PipeNode, dotRoot, rootKnown bool) {
	if p == nil {
		return
	}
	for i, c := range p.Cmds {
		wk.command(c, i > 0, dotRoot, rootKnown)
	}
}

// command walks one command; piped says whether it receives the value of
// the command before it in a pipeline.
func (wk *refWalker) command(c *parse.CommandNode, piped, dotRoot, rootKnown bool) {
	args := c.Args
	if id, ok := args[0].(*parse.IdentifierNode); ok && id.Ident == ir.FuncQuery {
		wk.queryCall(args, piped)
	}
	if len(args) >= 2 {
		if id, ok := args[0].(*parse.IdentifierNode); ok && id.Ident == "index" {
			if base, ok := wk.refOf(args[1], dotRoot, rootKnown); ok {
				base.optionalFrom = len(base.path)
				rest := args[2:]
				for len(rest) > 0 {
					s, isStr := rest[0].(*parse.StringNode)
					if !isStr {
						break
					}
					base.path = append(base.path, s.Text)
					rest = rest[1:]
				}
				base.indexed = true
				wk.refs = append(wk.refs, base)
				for _, a := range rest {
					wk.node(a, dotRoot, rootKnown)
				}
				return
			}
		}
	}
	for _, a := range args {
		wk.node(a, dotRoot, rootKnown)
	}
}

// refOf turns a field, "$" variable or chain into a reference when its
// root is the context.
func (wk *refWalker) refOf(n parse.Node, dotRoot, rootKnown bool) (ref, bool) {
	switch x := n.(type) {
	case *parse.FieldNode:
		if !dotRoot {
			return ref{}, false
		}
		return newRef(x.Ident, chainStart(int(x.Pos), x.Ident, 1)), true
	case *parse.VariableNode:
		if !rootKnown || len(x.Ident) < 2 || x.Ident[0] != "$" {
			return ref{}, false
		}
		return newRef(x.Ident[1:], chainStart(int(x.Pos), x.Ident, 0)), true
	case *parse.ChainNode:
		// (.steps.a.output).f: a parenthesised reference with more fields.
		p, ok := x.Node.(*parse.PipeNode)
		if !ok || len(p.Decl) > 0 || len(p.Cmds) != 1 || len(p.Cmds[0].Args) != 1 {
			return ref{}, false
		}
		inner, ok := wk.refOf(p.Cmds[0].Args[0], dotRoot, rootKnown)
		if !ok {
			return ref{}, false
		}
		inner.path = append(inner.path, x.Field...)
		inner.optionalFrom = len(inner.path)
		return inner, true
	}
	return ref{}, false
}

func newRef(path []string, off int) ref {
	p := append([]string(nil), path...)
	return ref{path: p, off: off, optionalFrom: len(p)}
}

// chainStart finds where a field or variable chain begins: text/template
// records the position of the second component for chains of two or more.
// dot is 1 for fields (".steps"), 0 for variables ("$").
func chainStart(pos int, ident []string, dot int) int {
	if len(ident) < 2 {
		return pos
	}
	start := pos - len(ident[0]) - dot
	if start < 0 {
		return pos
	}
	return start
}

// ---- syntax errors ----

var (
	syntaxPrefixRE = lazyre.New(`^template: t:(\d+): `)
	startedAtRE    = lazyre.New(` (?:in action )?started at t:(\d+)`)
	badCharRE      = lazyre.New(`U\+([0-9A-F]{4,6})`)
	quotedRE       = lazyre.New(`"((?:[^"\\]|\\.)*)"`)
	keywordRE      = lazyre.New(`^unexpected (?:<(\w+)>|\{\{(\w+)\}\})`)
	hyphenRE       = lazyre.New(`(?:\.|\$\.)(steps|params|vars)\.([A-Za-z0-9_]+)$`)
	idTailRE       = lazyre.New(`^[A-Za-z0-9_-]*`)
	undefinedFnRE  = lazyre.New(`^function "([^"]+)" not defined`)
)

// reportSyntax reports a text/template parse error at its file position.
func (w *wfCheck) reportSyntax(n *parser.Node, src, raw string) {
	line := 1
	msg := raw
	if m := syntaxPrefixRE().FindStringSubmatch(raw); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = raw[len(m[0]):]
	}
	if m := startedAtRE().FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = strings.Replace(msg, m[0], "", 1)
	}
	off := syntaxOffset(src, line, msg)
	var detail []string
	if strings.Contains(msg, "U+002D '-'") {
		if m := hyphenRE().FindStringSubmatch(src[:off]); m != nil {
			detail = append(detail, hyphenHint(m[1], m[2]+idTailRE().FindString(src[off:])))
		}
	}
	if m := undefinedFnRE().FindStringSubmatch(msg); m != nil {
		msg += spell.DidYouMean(m[1], allFuncNames)
	}
	w.add(errTemplateSyntax(n.OffsetPos(off), n.Path, msg, detail...))
}

// syntaxOffset finds the byte offset, in src, of the token that the
// message on template line line complains about.
func syntaxOffset(src string, line int, msg string) int {
	start := 0
	for i := 1; i < line; i++ {
		j := strings.IndexByte(src[start:], '\n')
		if j < 0 {
			break
		}
		start += j + 1
	}
	end := len(src)
	if j := strings.IndexByte(src[start:], '\n'); j >= 0 {
		end = start + j
	}
	text := src[start:end]
	action := strings.Index(text, "{{")
	if action < 0 {
		action = 0
	}
	find := func(needle string) (int, bool) {
		if needle == "" {
			return 0, false
		}
		if i := strings.Index(text[action:], needle); i >= 0 {
			return start + action + i, true
		}
		if i := strings.Index(text, needle); i >= 0 {
			return start + i, true
		}
		return 0, false
	}
	last := func(needle string) (int, bool) {
		if i := strings.LastIndex(text, needle); i >= 0 {
			return start + i, true
		}
		return 0, false
	}
	var (
		off int
		ok  bool
	)
	switch {
	case strings.HasPrefix(msg, "unclosed action"), strings.HasPrefix(msg, "unexpected EOF"):
		off, ok = last("{{")
	case strings.HasPrefix(msg, "unclosed left paren"):
		off, ok = last("(")
	case strings.HasPrefix(msg, "unterminated quoted string"):
		off, ok = last(`"`)
	case strings.HasPrefix(msg, "unterminated raw quoted string"):
		off, ok = last("`")
	case strings.HasPrefix(msg, "unterminated character constant"):
		off, ok = last("'")
	case strings.Contains(msg, "comment"):
		off, ok = find("/*")
	case strings.Contains(msg, "U+"):
		if m := badCharRE().FindStringSubmatch(msg); m != nil {
			if r, err := strconv.ParseUint(m[1], 16, 32); err == nil {
				off, ok = find(string(rune(r)))
			}
		}
	case strings.HasPrefix(msg, "missing value for "):
		off, ok = find(strings.TrimPrefix(msg, "missing value for "))
	case strings.Contains(msg, "{{break}}"):
		off, ok = find("break")
	case strings.Contains(msg, "{{continue}}"):
		off, ok = find("continue")
	default:
		if m := keywordRE().FindStringSubmatch(msg); m != nil {
			off, ok = find(m[1] + m[2])
		} else if m := quotedRE().FindStringSubmatch(msg); m != nil {
			needle, err := strconv.Unquote(`"` + m[1] + `"`)
			if err != nil {
				needle = m[1]
			}
			needle = strings.TrimSuffix(needle, "...")
			off, ok = find(needle)
		}
	}
	if !ok {
		off = start + action
	}
	if off > len(src) {
		off = len(src)
	}
	for off > 0 && off < len(src) && !utf8.RuneStart(src[off]) {
		off--
	}
	return off
}
