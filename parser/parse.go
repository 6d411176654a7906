package parser

// Parse: from a file's bytes to workflows.
//
// The stream is cut into documents (split.go), each parsed by go-yaml on its
// own so that a syntax error in one does not hide the others. Each document
// is then classified by its top-level keys, in this order:
//   - a kind key: a Kubernetes resource. VirtualMCPCompositeToolDefinition
//     with a ToolHive apiVersion gives one workflow from spec; any other kind
//     is recorded in File.Skipped.
//   - compositeTools or composite_tools: a vMCP config; every entry of the
//     list is a workflow and the config's other keys are ignored.
//   - steps: a bare workflow definition.
//   - anything else (including an empty document) is recorded in
//     File.Skipped with a description; a document that is not a mapping is
//     an error.
// Only the parts that hold workflows are converted to Nodes (node.go), with
// paths relative to the workflow, and only those are checked for duplicate
// keys and limits.

import (
	"bytes"
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"unicode/utf8"

	yaml "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	goparser "github.com/goccy/go-yaml/parser"

	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
)

// Kubernetes identity of a composite tool definition.
const (
	CompositeToolKind = "VirtualMCPCompositeToolDefinition"
	apiGroup          = "toolhive.stacklok.dev/"
)

// APIVersions are the apiVersions accepted for CompositeToolKind.
var APIVersions = []string{apiGroup + "v1alpha1", apiGroup + "v1beta1"}

// Descriptions used as Skipped.Kind for documents that are not resources.
const (
	SkippedEmpty       = "empty document"
	SkippedConfig      = "vMCP config without compositeTools"
	SkippedEmptyConfig = "vMCP config with an empty compositeTools list"
	SkippedOther       = "mapping without kind, compositeTools or steps"
)

// configKeys are top-level keys of a vMCP config. A document with one of
// them and no composite tools is a config without workflows.
var configKeys = map[string]bool{
	"backends": true, "workflows": true, "server": true, "state": true, "aggregation": true,
	"groupRef": true, "group_ref": true, "incomingAuth": true, "incoming_auth": true,
	"outgoingAuth": true, "outgoing_auth": true, "operational": true, "telemetry": true,
	"audit": true, "optimizer": true, "compositeToolRefs": true, "composite_tool_refs": true,
}

// Parse parses one source file into its workflows. It never returns a nil
// File; diagnostics say what could not be parsed.
func Parse(name string, src []byte) (*File, diag.List) {
	name = filepath.ToSlash(name)
	var diags diag.List
	f := &File{Name: name, Src: src}
	// Line breaks are normalised so that go-yaml and the position mapping
	// see the same text. Lines and columns do not change: a carriage
	// return only ever ends a line.
	// A byte-order mark is dropped for the same reason: editors do not
	// show it, so columns on the first line are counted without it.
	text := bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	if bytes.Contains(text, []byte("\r\n")) {
		text = bytes.ReplaceAll(text, []byte("\r\n"), []byte("\n"))
	}
	p := &parse{
		file: f,
		s:    newSource(name, text),
		x:    &extractor{file: f, diags: &diags},
	}
	p.b = newBuilder(p.s, &diags)
	p.diags = &diags
	if !utf8.Valid(text) {
		off := 0
		for off < len(text) {
			r, size := utf8.DecodeRune(text[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		diags.Add(errInvalidUTF8(p.s.pos(off)))
	}
	for i, c := range splitDocuments(text) {
		p.document(i, c)
	}
	// Unknown keys are found object by object; report them in file order.
	sort.SliceStable(f.Unknown, func(i, j int) bool {
		a, b := f.Unknown[i].Pos, f.Unknown[j].Pos
		return a.Line < b.Line || (a.Line == b.Line && a.Col < b.Col)
	})
	return f, diags
}

// parse holds the state of one Parse call.
type parse struct {
	file  *File
	s     *source
	b     *builder
	x     *extractor
	diags *diag.List
}

// document parses and classifies one document chunk.
func (p *parse) document(idx int, c chunk) {
	b := p.b
	b.lineBase = c.line - 1
	b.aliases = map[*ast.AliasNode]ast.Node{}
	b.depthHit = false
	text := p.s.src[c.start:c.end]
	switch bd := preScan(text); {
	case bd.depth > preParseDepth:
		p.diags.Add(errNestingTooDeep(p.s.pos(c.start+bd.depthAt), "", maxDepth))
		return
	case bd.nodesAt >= 0:
		p.diags.Add(errDocumentTooLarge(p.s.pos(c.start+bd.nodesAt), maxNodes))
		return
	}
	af, err := goparser.ParseBytes(text, 0, goparser.AllowDuplicateMapKey())
	if err != nil {
		p.diags.Add(p.syntaxError(err, c))
		return
	}
	var body ast.Node
	for _, d := range af.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		if _, directive := d.Body.(*ast.DirectiveNode); directive {
			continue // %YAML and %TAG lines come as a document of their own
		}
		body = d.Body
		break
	}
	docPos := p.s.pos(p.s.skipBlanks(c.start))
	if body != nil {
		b.collectAnchors(body, map[string]ast.Node{})
		if tk := body.GetToken(); tk != nil {
			docPos = b.tokenPos(tk)
		}
	}
	top := b.resolve(body)
	switch top.(type) {
	case nil, *ast.NullNode, *ast.CommentGroupNode, *ast.CommentNode:
		p.skip(SkippedEmpty, "", docPos)
		return
	case *ast.MappingNode, *ast.MappingValueNode:
	default:
		n := b.node(top, "", 0, docPos)
		stepList := n.Kind == Seq && len(n.Items) > 0 && n.Items[0].Get("id") != nil
		p.diags.Add(errDocumentNotAMapping(n.Pos, idx, n.Kind, stepList))
		return
	}
	fields := b.topFields(top)
	if len(fields) > 0 {
		docPos = b.keyPos(fields[0].Key, docPos)
	}
	// The top-level keys are looked up without converting the document;
	// a duplicate of a key that is used is reported when it is first used.
	first := map[string]*ast.MappingValueNode{}
	var dups []*ast.MappingValueNode
	for _, mv := range fields {
		if k, ok := b.key(mv.Key); ok {
			if _, seen := first[k]; seen {
				dups = append(dups, mv)
			} else {
				first[k] = mv
			}
		}
	}
	used := map[string]bool{}
	get := func(key string) *ast.MappingValueNode {
		if !used[key] {
			used[key] = true
			for _, mv := range dups {
				if k, _ := b.key(mv.Key); k == key {
					p.diags.Add(errDuplicateKey(b.keyPos(mv.Key, docPos), key, key, b.keyPos(first[key].Key, docPos)))
				}
			}
		}
		return first[key]
	}
	has := func(key string) bool { return first[key] != nil }
	switch {
	case has("kind"):
		p.resource(idx, docPos, get)
	case has("compositeTools") || has("composite_tools"):
		p.config(idx, docPos, get)
	case has("steps"):
		n := b.node(top, "", 0, docPos)
		p.file.Workflows = append(p.file.Workflows, p.x.workflow(n, idx, ""))
	default:
		kind := SkippedOther
		for _, mv := range fields {
			if k, ok := b.key(mv.Key); ok && configKeys[k] {
				kind = SkippedConfig
				break
			}
		}
		p.skip(kind, "", docPos)
	}
}

func (p *parse) skip(kind, name string, pos ir.Pos) {
	p.file.Skipped = append(p.file.Skipped, Skipped{Kind: kind, Name: name, Pos: pos})
}

// resource handles a document with a kind.
func (p *parse) resource(idx int, docPos ir.Pos, get func(string) *ast.MappingValueNode) {
	b := p.b
	kind, _ := b.scalar(get("kind").Value)
	name := ""
	if md := get("metadata"); md != nil {
		if m := b.resolve(md.Value); m != nil {
			for _, mv := range b.topFields(m) {
				if k, ok := b.key(mv.Key); ok && k == "name" {
					name, _ = b.scalar(mv.Value)
				}
			}
		}
	}
	if kind != CompositeToolKind {
		if kind == "" {
			kind = "resource with an unreadable kind"
		}
		p.skip(kind, name, docPos)
		return
	}
	apiVersion := ""
	apiPos := docPos
	if av := get("apiVersion"); av != nil {
		apiVersion, _ = b.scalar(av.Value)
		apiPos = b.tokenPos(av.Value.GetToken())
	}
	if !slices.Contains(APIVersions, apiVersion) {
		p.diags.Add(errAPIVersion(apiPos, apiVersion))
		return
	}
	spec := get("spec")
	if spec == nil {
		p.diags.Add(errMissingSpec(docPos, name))
		return
	}
	n := b.node(spec.Value, "", 1, b.keyPos(spec.Key, docPos))
	if n.Kind != Map {
		p.diags.Add(errMissingSpec(n.Pos, name))
		return
	}
	p.file.Workflows = append(p.file.Workflows, p.x.workflow(n, idx, name))
}

// config handles a vMCP config document.
func (p *parse) config(idx int, docPos ir.Pos, get func(string) *ast.MappingValueNode) {
	b := p.b
	mv := get("compositeTools")
	key := "compositeTools"
	if other := get("composite_tools"); other != nil {
		if mv != nil {
			p.diags.Add(errDuplicateField(b.keyPos(other.Key, docPos), "composite_tools", "config", "compositeTools",
				"composite_tools", "compositeTools", b.keyPos(mv.Key, docPos)))
		} else {
			mv, key = other, "composite_tools"
		}
	}
	list := b.resolve(mv.Value)
	switch list := list.(type) {
	case nil, *ast.NullNode:
		p.skip(SkippedEmptyConfig, "", docPos)
	case *ast.SequenceNode:
		if len(list.Values) == 0 {
			p.skip(SkippedEmptyConfig, "", docPos)
		}
		for i, item := range list.Values {
			n := b.node(item, "", 2, b.tokenPos(list.GetToken()))
			if n.Kind != Map {
				p.diags.Add(errCompositeToolNotMapping(n.Pos, indexPath(key, i), n.Kind))
				continue
			}
			p.file.Workflows = append(p.file.Workflows, p.x.workflow(n, idx, ""))
		}
	default:
		n := b.node(list, key, 1, b.keyPos(mv.Key, docPos))
		p.diags.Add(errCompositeToolsNotList(n.Pos, key, n.Kind))
	}
}

// resolve strips anchors and tags and follows aliases.
func (b *builder) resolve(n ast.Node) ast.Node {
	for range 100 {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		case *ast.AliasNode:
			n = b.aliases[v]
		default:
			return n
		}
	}
	return n
}

// topFields returns the key/value pairs of a mapping without converting
// them.
func (b *builder) topFields(n ast.Node) []*ast.MappingValueNode {
	switch m := b.resolve(n).(type) {
	case *ast.MappingNode:
		return m.Values
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}
	}
	return nil
}

// scalar returns the text of a scalar value.
func (b *builder) scalar(n ast.Node) (string, bool) {
	switch v := b.resolve(n).(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		if v.Value != nil {
			return v.Value.Value, true
		}
	case ast.ScalarNode:
		if _, null := v.(*ast.NullNode); !null {
			return v.GetToken().Value, true
		}
	}
	return "", false
}

// chunkPosRE matches go-yaml's [line:column] positions inside messages,
// and leadingPosRE the one that starts its error strings.
var (
	chunkPosRE   = regexp.MustCompile(`\[(\d+):(\d+)\]`)
	leadingPosRE = regexp.MustCompile(`^\[(\d+):(\d+)\] `)
)

// syntaxError turns a go-yaml error into a diagnostic with a file position
// and a one-line message: go-yaml's own excerpt and caret are dropped, and
// positions it mentions are made relative to the file.
func (p *parse) syntaxError(err error, c chunk) diag.Diagnostic {
	pos := p.s.pos(c.start)
	msg := err.Error()
	var se *yaml.SyntaxError
	if errors.As(err, &se) {
		msg = se.Message
		if se.Token != nil && se.Token.Position != nil {
			pos = p.b.tokenPos(se.Token)
		}
	} else if m := leadingPosRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		pos = p.s.pos(p.s.skipBlanks(p.s.offset(line+p.b.lineBase, col)))
		msg = msg[len(m[0]):]
	}
	if i := indexNewline(msg); i >= 0 {
		msg = msg[:i]
	}
	msg = chunkPosRE.ReplaceAllStringFunc(msg, func(s string) string {
		m := chunkPosRE.FindStringSubmatch(s)
		line, _ := strconv.Atoi(m[1])
		return "[" + strconv.Itoa(line+p.b.lineBase) + ":" + m[2] + "]"
	})
	if goyamlTabMessages[msg] {
		// go-yaml points past the tab; point at the first tab of the line.
		ls := p.s.offset(pos.Line, 1)
		if i := bytes.IndexByte(p.s.src[ls:p.s.lineEnd(ls)], '\t'); i >= 0 {
			pos = p.s.pos(ls + i)
		}
	}
	// An unquoted template is the most common YAML mistake in workflows:
	// go-yaml reads {{ as two nested flow mappings and points at the
	// second brace.
	off := p.s.offset(pos.Line, pos.Col)
	for _, at := range []int{off - 1, off} {
		if at >= 0 && at+2 <= len(p.s.src) && p.s.src[at] == '{' && p.s.src[at+1] == '{' {
			return errUnquotedTemplate(p.s.pos(at), msg)
		}
	}
	return errSyntax(pos, msg)
}

func indexNewline(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return i
		}
	}
	return -1
}
