package parser

// Conversion of go-yaml's syntax tree into Nodes.
//
// go-yaml gives a tree of ast.Node values whose tokens carry (line, rune
// column) positions relative to the document chunk we handed it. The
// builder turns that tree into plain Nodes:
//   - positions become file positions (chunk line offset added, then
//     through the source's line index), moved past any blank go-yaml left
//     in front of the token;
//   - paths are built from the workflow root as the walk descends;
//   - aliases are expanded. A first pass over the document (collectAnchors)
//     records, for every alias, the anchored node it names at that point
//     of the stream, so expansion later needs no state and an alias always
//     refers to an anchor defined before it (which makes expansion finite);
//   - merge keys (<<) add the fields of the merged mappings that the mapping
//     does not set itself, earlier merge sources first;
//   - every Node created while expanding an alias counts against one
//     budget per file (nodes written out in the text are bounded by the
//     file's size already), so a "billion laughs" stream of aliases of
//     aliases stops with a diagnostic at the alias being expanded instead of
//     exhausting memory; nesting beyond maxDepth stops with a diagnostic
//     instead of recursing further.

import (
	"math"
	"strconv"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
)

const (
	// maxAliasNodes bounds the nodes built by expanding aliases in one
	// file. Real files share a few small blocks (an onError policy, common
	// arguments); 100,000 nodes is far beyond that and still cheap to build.
	maxAliasNodes = 100_000
	// maxDepth bounds how deeply values may nest.
	maxDepth = 200
)

// builder converts one file's documents.
type builder struct {
	s     *source
	diags *diag.List

	// Per document.
	lineBase  int                         // file line of the chunk's first line, minus one
	aliases   map[*ast.AliasNode]ast.Node // alias -> anchored value
	depthHit  bool                        // nesting_too_deep reported for this document
	budgetHit bool                        // alias_budget reported (once per file)

	budget   int    // alias-expanded nodes left for this file
	inAlias  int    // depth of alias expansion at the current node
	aliasPos ir.Pos // the outermost alias being expanded
	inexact  int    // string scalars whose position mapping fell back to the start

	slab    []Node       // Nodes are handed out from here, nodeSlab at a time
	segSlab []ir.Segment // and string segments, segmentSlab at a time
}

// nodeSlab is how many Nodes the builder allocates at once. A file's
// Nodes live as long as the File, so allocating them together costs no
// memory that would otherwise be freed, and saves an allocation per value.
const nodeSlab = 64

// newNode returns a pointer to a copy of n.
func (b *builder) newNode(n Node) *Node {
	if len(b.slab) == 0 {
		b.slab = make([]Node, nodeSlab)
	}
	p := &b.slab[0]
	b.slab = b.slab[1:]
	*p = n
	return p
}

func newBuilder(s *source, diags *diag.List) *builder {
	return &builder{s: s, diags: diags, budget: maxAliasNodes}
}

// offset returns the file byte offset of a token's first character.
func (b *builder) offset(tk *token.Token) int {
	if tk == nil || tk.Position == nil {
		return -1
	}
	return b.s.skipBlanks(b.s.offset(tk.Position.Line+b.lineBase, tk.Position.Column))
}

// tokenPos returns the file position of a token.
func (b *builder) tokenPos(tk *token.Token) ir.Pos {
	off := b.offset(tk)
	if off < 0 {
		return ir.Pos{File: b.s.name}
	}
	// offset stays on the token's line when that line exists (skipBlanks
	// never crosses a line break).
	if line := tk.Position.Line + b.lineBase; line >= 1 && line <= len(b.s.lines) {
		return b.s.posOnLine(line-1, off)
	}
	return b.s.pos(off)
}

// collectAnchors walks a document in source order and records what each
// alias refers to. An anchor is registered after its own value, so an alias
// inside the value it would name does not resolve to it.
func (b *builder) collectAnchors(n ast.Node, anchors map[string]ast.Node) {
	switch n := n.(type) {
	case *ast.DocumentNode:
		b.collectAnchors(n.Body, anchors)
	case *ast.AnchorNode:
		b.collectAnchors(n.Value, anchors)
		if n.Name != nil {
			anchors[n.Name.GetToken().Value] = n.Value
		}
	case *ast.AliasNode:
		if n.Value != nil {
			if target, ok := anchors[n.Value.GetToken().Value]; ok {
				b.aliases[n] = target
			}
		}
	case *ast.TagNode:
		b.collectAnchors(n.Value, anchors)
	case *ast.MappingNode:
		for _, mv := range n.Values {
			b.collectAnchors(mv, anchors)
		}
	case *ast.MappingValueNode:
		b.collectAnchors(n.Key, anchors)
		b.collectAnchors(n.Value, anchors)
	case *ast.MappingKeyNode:
		b.collectAnchors(n.Value, anchors)
	case *ast.SequenceNode:
		for _, v := range n.Values {
			b.collectAnchors(v, anchors)
		}
	}
}

// take counts a node made by alias expansion against the budget and
// reports, once, when it runs out.
func (b *builder) take() bool {
	if b.inAlias == 0 {
		return true
	}
	if b.budget <= 0 {
		if !b.budgetHit {
			b.budgetHit = true
			b.diags.Add(errAliasBudget(b.aliasPos, "", maxAliasNodes))
		}
		return false
	}
	b.budget--
	return true
}

// refund returns a node taken for a wrapper that makes no node itself.
func (b *builder) refund() {
	if b.inAlias > 0 {
		b.budget++
	}
}

func (b *builder) null(pos ir.Pos, path string) *Node {
	return b.newNode(Node{Kind: Null, Pos: pos, Path: path})
}

// node converts a go-yaml node found at path, depth levels below the
// document root. pos is where the value should be placed if it has no
// token of its own (a missing value).
func (b *builder) node(n ast.Node, path string, depth int, pos ir.Pos) *Node {
	if n == nil {
		return b.null(pos, path)
	}
	if tk := n.GetToken(); tk != nil {
		pos = b.tokenPos(tk)
	}
	if depth > maxDepth {
		if !b.depthHit {
			b.depthHit = true
			b.diags.Add(errNestingTooDeep(pos, path, maxDepth))
		}
		return b.null(pos, path)
	}
	if !b.take() {
		return b.null(pos, path)
	}
	switch n := n.(type) {
	case *ast.AnchorNode:
		b.refund() // the anchor is a wrapper, not a node of its own
		return b.node(n.Value, path, depth, pos)
	case *ast.AliasNode:
		b.refund()
		target, ok := b.aliases[n]
		if !ok {
			name := ""
			if n.Value != nil {
				name = n.Value.GetToken().Value
			}
			b.diags.Add(errUnknownAnchor(pos, path, name))
			return b.null(pos, path)
		}
		if b.inAlias == 0 {
			b.aliasPos = pos
		}
		b.inAlias++
		defer func() { b.inAlias-- }()
		return b.node(target, path, depth, pos)
	case *ast.TagNode:
		b.refund()
		return b.tagged(n, path, depth, pos)
	case *ast.NullNode:
		return b.null(pos, path)
	case *ast.BoolNode:
		return b.newNode(Node{Kind: Bool, Pos: pos, Path: path, Value: n.Value})
	case *ast.IntegerNode:
		return b.integer(n, pos, path)
	case *ast.FloatNode:
		return b.newNode(Node{Kind: Float, Pos: pos, Path: path, Value: n.Value})
	case *ast.InfinityNode, *ast.NanNode:
		// Kept as written: JSON has no infinities, and no workflow field
		// means them as numbers.
		return b.str(n.GetToken().Value, Plain, b.offset(n.GetToken()), pos, path)
	case *ast.StringNode:
		return b.str(n.Value, tokenStyle(n.Token), b.offset(n.Token), pos, path)
	case *ast.LiteralNode:
		st := Literal
		if n.Start != nil && n.Start.Type == token.FoldedType {
			st = Folded
		}
		v := ""
		if n.Value != nil {
			v = n.Value.Value
		}
		return b.str(v, st, b.offset(n.Start), pos, path)
	case *ast.MappingNode:
		m := b.newNode(Node{Kind: Map, Pos: pos, Path: path, Fields: make([]*Field, 0, len(n.Values))})
		if !n.IsFlowStyle && len(n.Values) > 0 {
			m.Pos = b.keyPos(n.Values[0].Key, pos)
		}
		b.fields(m, n.Values, depth)
		return m
	case *ast.MappingValueNode:
		m := b.newNode(Node{Kind: Map, Pos: b.keyPos(n.Key, pos), Path: path, Fields: []*Field{}})
		b.fields(m, []*ast.MappingValueNode{n}, depth)
		return m
	case *ast.SequenceNode:
		sq := b.newNode(Node{Kind: Seq, Pos: pos, Path: path, Items: make([]*Node, 0, len(n.Values))})
		for i, v := range n.Values {
			sq.Items = append(sq.Items, b.node(v, indexPath(path, i), depth+1, pos))
		}
		return sq
	case *ast.CommentGroupNode, *ast.CommentNode, *ast.DirectiveNode:
		b.refund()
		return b.null(pos, path)
	}
	b.diags.Add(errUnsupportedNode(pos, path, n.Type().String()))
	return b.null(pos, path)
}

func tokenStyle(tk *token.Token) Style {
	if tk == nil {
		return Plain
	}
	switch tk.Type {
	case token.SingleQuoteType:
		return SingleQuoted
	case token.DoubleQuoteType:
		return DoubleQuoted
	}
	return Plain
}

// str builds a string node and maps its value back to the file.
func (b *builder) str(v string, st Style, off int, pos ir.Pos, path string) *Node {
	n := b.newNode(Node{Kind: String, Pos: pos, Path: path, Value: v, Style: st})
	if off < 0 {
		n.lines = []ir.Segment{{Line: pos.Line, Col: pos.Col}}
		b.inexact++
		return n
	}
	segs, ok := b.s.scalarSegments(st, off, v)
	if !ok {
		// resync reuses the scratch space segs is in: the fallback, one
		// segment at off, is made again when it finds nothing.
		if start, rs, found := b.resync(st, off, v); found {
			segs, ok = rs, true
			n.Pos = b.s.pos(start)
		} else {
			segs = append(segs[:0], b.s.segment(0, off))
		}
	}
	if !ok {
		b.inexact++
	}
	n.lines = b.keepSegments(segs)
	return n
}

// segmentSlab is how many ir.Segments keepSegments allocates at once; most
// strings need one.
const segmentSlab = 256

// keepSegments copies segments from scalarSegments' scratch space into
// the builder's slab, which, like the Nodes' slab, lives as long as the
// File.
func (b *builder) keepSegments(segs []ir.Segment) []ir.Segment {
	if len(segs) > len(b.segSlab) {
		if len(segs) > segmentSlab/4 {
			return append([]ir.Segment(nil), segs...)
		}
		b.segSlab = make([]ir.Segment, segmentSlab)
	}
	out := b.segSlab[:len(segs):len(segs)]
	b.segSlab = b.segSlab[len(segs):]
	copy(out, segs)
	return out
}

// maxResync and maxResyncDistance bound the start offsets tried by resync,
// so that it stays cheap on long lines.
const (
	maxResync         = 64
	maxResyncDistance = 1024
)

// resync looks for the real start of a scalar on the line go-yaml gave when
// the reported column is wrong (go-yaml's column for a multi-line plain
// scalar is off by the trailing blanks of its first line, for example). It
// tries the offsets of that line nearest to the reported one first.
func (b *builder) resync(st Style, off int, v string) (int, []ir.Segment, bool) {
	src := b.s.src
	ls := b.s.lineStart(off)
	le := b.s.lineEnd(ls)
	var first byte
	switch st {
	case SingleQuoted:
		first = '\''
	case DoubleQuoted:
		first = '"'
	case Literal:
		first = '|'
	case Folded:
		first = '>'
	default:
		if v == "" {
			return 0, nil, false
		}
		first = v[0]
	}
	tries := 0
	for d := 1; d <= le-ls && d <= maxResyncDistance && tries < maxResync; d++ {
		for _, c := range [2]int{off - d, off + d} {
			if c < ls || c >= le || src[c] != first {
				continue
			}
			tries++
			if segs, ok := b.s.scalarSegments(st, c, v); ok {
				return c, segs, true
			}
		}
	}
	return 0, nil, false
}

func (b *builder) integer(n *ast.IntegerNode, pos ir.Pos, path string) *Node {
	switch v := n.Value.(type) {
	case int64:
		return b.newNode(Node{Kind: Int, Pos: pos, Path: path, Value: v})
	case uint64:
		if v <= math.MaxInt64 {
			return b.newNode(Node{Kind: Int, Pos: pos, Path: path, Value: int64(v)})
		}
		return b.newNode(Node{Kind: Float, Pos: pos, Path: path, Value: float64(v)})
	}
	// go-yaml documents int64 or uint64; anything else is kept as written.
	return b.newNode(Node{Kind: String, Pos: pos, Path: path, Value: n.Token.Value, lines: []ir.Segment{{Line: pos.Line, Col: pos.Col}}})
}

// tagged applies the standard scalar tags and ignores any other tag.
func (b *builder) tagged(n *ast.TagNode, path string, depth int, pos ir.Pos) *Node {
	tag := ""
	if n.Start != nil {
		tag = n.Start.Value
	}
	val := n.Value
	if val == nil {
		return b.null(pos, path)
	}
	if tag == "!!str" || tag == "tag:yaml.org,2002:str" {
		if _, ok := val.(ast.ScalarNode); ok {
			switch sv := val.(type) {
			case *ast.StringNode:
				return b.node(sv, path, depth, pos)
			case *ast.LiteralNode:
				return b.node(sv, path, depth, pos)
			}
			tk := val.GetToken()
			return b.str(tk.Value, tokenStyle(tk), b.offset(tk), b.tokenPos(tk), path)
		}
	}
	return b.node(val, path, depth, pos)
}

// keyPos is the position of a mapping key.
func (b *builder) keyPos(k ast.MapKeyNode, fallback ir.Pos) ir.Pos {
	if k == nil || k.GetToken() == nil {
		return fallback
	}
	if mk, ok := k.(*ast.MappingKeyNode); ok && mk.Value != nil {
		return b.tokenPos(mk.Value.GetToken())
	}
	return b.tokenPos(k.GetToken())
}

// key returns a mapping key as a string. Only scalar keys are allowed.
func (b *builder) key(k ast.Node) (string, bool) {
	switch k := k.(type) {
	case *ast.MappingKeyNode:
		return b.key(k.Value)
	case *ast.AnchorNode:
		return b.key(k.Value)
	case *ast.TagNode:
		return b.key(k.Value)
	case *ast.AliasNode:
		if t, ok := b.aliases[k]; ok {
			return b.key(t)
		}
		return "", false
	case *ast.StringNode:
		return k.Value, true
	case *ast.LiteralNode:
		if k.Value != nil {
			return k.Value.Value, true
		}
		return "", true
	case *ast.NullNode:
		return "null", true
	case ast.ScalarNode:
		return k.GetToken().Value, true
	}
	return "", false
}

// resolveKeyAlias reports whether a key is an alias that names no anchor,
// and the name it uses.
func (b *builder) resolveKeyAlias(k ast.Node) (string, bool) {
	if mk, ok := k.(*ast.MappingKeyNode); ok {
		k = mk.Value
	}
	al, ok := k.(*ast.AliasNode)
	if !ok || al.Value == nil {
		return "", false
	}
	if _, known := b.aliases[al]; known {
		return "", false
	}
	return al.Value.GetToken().Value, true
}

// fields converts the key/value pairs of a mapping into m, then applies
// merge keys.
func (b *builder) fields(m *Node, values []*ast.MappingValueNode, depth int) {
	// Every converted field is in m.Fields, so m.Fields is the set of keys
	// seen so far; small mappings are searched directly and only large
	// ones get a map.
	var seen map[string]ir.Pos
	if len(values) > smallMapping {
		seen = make(map[string]ir.Pos, len(values))
	}
	if m.Fields == nil {
		m.Fields = make([]*Field, 0, len(values))
	}
	block := make([]Field, len(values))
	var merges []*ast.MappingValueNode
	for _, mv := range values {
		if mv == nil {
			continue
		}
		if mv.Key != nil && mv.Key.IsMergeKey() {
			merges = append(merges, mv)
			continue
		}
		kpos := b.keyPos(mv.Key, m.Pos)
		key, ok := b.key(mv.Key)
		if !ok {
			if al, isAlias := b.resolveKeyAlias(mv.Key); isAlias {
				b.diags.Add(errUnknownAnchor(kpos, m.Path, al))
			} else {
				b.diags.Add(errComplexKey(kpos, m.Path))
			}
			continue
		}
		path := fieldPath(m.Path, key)
		if first, dup := lookupField(m, seen, key); dup {
			b.diags.Add(errDuplicateKey(kpos, path, key, first))
			continue
		}
		if seen != nil {
			seen[key] = kpos
		}
		f := &block[0]
		block = block[1:]
		*f = Field{Key: key, KeyPos: kpos, Value: b.node(mv.Value, path, depth+1, kpos)}
		m.Fields = append(m.Fields, f)
	}
	for _, mv := range merges {
		kpos := b.keyPos(mv.Key, m.Pos)
		// Each merged mapping is converted at this mapping's path, so the
		// fields it contributes carry the paths they have here.
		var sources []*Node
		if seq, ok := b.resolve(mv.Value).(*ast.SequenceNode); ok {
			for _, item := range seq.Values {
				sources = append(sources, b.node(item, m.Path, depth, kpos))
			}
		} else {
			sources = append(sources, b.node(mv.Value, m.Path, depth, kpos))
		}
		for _, s := range sources {
			if s.Kind != Map {
				b.diags.Add(errBadMerge(s.Pos, m.Path, s.Kind))
				continue
			}
			for _, f := range s.Fields {
				if seen == nil && len(m.Fields) > smallMapping {
					// Merges made the mapping large: index it once.
					seen = make(map[string]ir.Pos, 2*len(m.Fields))
					for _, g := range m.Fields {
						seen[g.Key] = g.KeyPos
					}
				}
				if _, dup := lookupField(m, seen, f.Key); dup {
					continue
				}
				if seen != nil {
					seen[f.Key] = f.KeyPos
				}
				m.Fields = append(m.Fields, f)
			}
		}
	}
}

// smallMapping is the number of keys up to which fields looks for
// duplicates by scanning the fields converted so far instead of a map.
const smallMapping = 16

// lookupField returns the key position of m's field key, from seen when
// the mapping is large enough to have one.
func lookupField(m *Node, seen map[string]ir.Pos, key string) (ir.Pos, bool) {
	if seen != nil {
		p, ok := seen[key]
		return p, ok
	}
	for _, f := range m.Fields {
		if f.Key == key {
			return f.KeyPos, true
		}
	}
	return ir.Pos{}, false
}

// isSimpleKey reports whether key is non-empty and made of
// [A-Za-z0-9_$-] only.
func isSimpleKey(key string) bool {
	if key == "" {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !isWordByte(c) && c != '$' && c != '-' {
			return false
		}
	}
	return true
}

// fieldPath appends a mapping key to a YAML path. Keys that are not simple
// names are written quoted in brackets: arguments["Content-Type"].
func fieldPath(parent, key string) string {
	if !isSimpleKey(key) {
		return parent + "[" + strconv.Quote(key) + "]"
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// indexPath appends a sequence index to a YAML path.
func indexPath(parent string, i int) string {
	return parent + "[" + strconv.Itoa(i) + "]"
}
