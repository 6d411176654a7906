package parser

// Splitting a stream into documents, and a nesting pre-check.
//
// go-yaml stops at the first syntax error of a stream. To keep going, Parse
// cuts the stream into documents itself and hands go-yaml one document at a
// time. YAML makes this safe: a line that starts with "---" or "..."
// followed by a blank or the end of the line is a document marker wherever
// it appears, even inside a block or quoted scalar. A "---" line starts a new
// document unless the text so far holds only comments, blank lines and
// directives (then it is the explicit start of the first document); a "..."
// line ends the current document. Chunks holding no content at all (a
// leading comment block, text after a final "...") are not documents.
//
// go-yaml's parser recurses once per nesting level and slows down
// quadratically with depth (10,000 nested flow sequences take seconds, and
// a million would exhaust the stack). Before parsing, nestingBound
// estimates a document's nesting cheaply from the raw text: open flow
// brackets outside quotes and comments, plus the number of indentation
// levels open in block context, plus the block indicators ("- ", "? ",
// ": ") on the line, which can open nested collections without indenting. A
// document whose estimate exceeds preParseDepth is reported as too deeply
// nested without being parsed; everything else is parsed and then held to
// the exact limit maxDepth while it is converted.
//
// go-yaml's cost in time and memory also grows with the number of nodes
// (about a kilobyte and several microseconds each), so a large document is
// refused before it is parsed too. The same pass counts an upper estimate
// of the nodes: one for the root, one per line holding content, plus one
// per block indicator and, in flow context, one per bracket and comma.
// Every other node starts on a line of its own, after a block indicator, or
// after a bracket or a comma,
// so the estimate is never below the real count (aliases aside: their
// expansion has a budget of its own, see node.go). A document whose
// estimate exceeds maxNodes is reported as too large without being parsed,
// however large it is: the scan stops at the line that crosses the limit.

import "bytes"

// preParseDepth is the nesting estimate above which a document is not
// handed to go-yaml at all. It is far above maxDepth, so it only catches
// documents that would be rejected anyway.
const preParseDepth = 1000

// maxNodes is the node estimate above which a document is not parsed. The
// largest file of the ToolHive corpus estimates at about 450 nodes; a
// document at the limit parses in well under a second.
const maxNodes = 20_000

// chunk is one document's text.
type chunk struct {
	start, end int // byte offsets in the file
	line       int // 1-based file line of start
	content    bool
}

// splitDocuments cuts src into document chunks.
func splitDocuments(src []byte) []chunk {
	var out []chunk
	cur := chunk{start: 0, line: 1}
	line := 1
	for off := 0; off < len(src); line++ {
		next := len(src)
		if i := bytes.IndexByte(src[off:], '\n'); i >= 0 {
			next = off + i + 1
		}
		text := src[off:next]
		switch {
		case isMarker(text, "---"):
			if cur.content {
				cur.end = off
				out = append(out, cur)
				cur = chunk{start: off, line: line}
			}
			cur.content = true
		case isMarker(text, "..."):
			cur.end = next
			if cur.content {
				out = append(out, cur)
			}
			cur = chunk{start: next, line: line + 1}
		case !cur.content && !isNonContent(text):
			cur.content = true
		}
		off = next
	}
	cur.end = len(src)
	if cur.content {
		out = append(out, cur)
	}
	return out
}

// isMarker reports whether a line is the document marker m.
func isMarker(line []byte, m string) bool {
	if !bytes.HasPrefix(line, []byte(m)) {
		return false
	}
	rest := line[len(m):]
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '\r'
}

// isNonContent reports whether a line before any content is blank, a
// comment, a directive or a byte-order mark.
func isNonContent(line []byte) bool {
	line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
	t := bytes.TrimLeft(line, " \t\r\n")
	return len(t) == 0 || t[0] == '#' || (len(line) > 0 && line[0] == '%')
}

// bounds are the pre-parse estimates of one document.
type bounds struct {
	depth   int // nesting estimate
	depthAt int // offset of the deepest line's content
	nodes   int // node estimate, up to the line that crossed maxNodes
	nodesAt int // offset of that line; -1 when the document is within maxNodes
}

// nestingBound estimates the nesting depth of a document's text.
func nestingBound(text []byte) (depth int, at int) {
	b := preScan(text)
	return b.depth, b.depthAt
}

// preScan estimates a document's nesting depth and node count from its raw
// text; see the comment at the top of the file.
func preScan(text []byte) bounds {
	b := bounds{nodes: 1, nodesAt: -1} // the root
	var indents []int
	flow := 0
	for off := 0; off < len(text); {
		end := len(text)
		if i := bytes.IndexByte(text[off:], '\n'); i >= 0 {
			end = off + i
		}
		line := text[off:end]
		indent := len(line) - len(bytes.TrimLeft(line, " "))
		blank := len(bytes.TrimSpace(line)) == 0 || bytes.TrimSpace(line)[0] == '#'
		if !blank {
			b.nodes++
			if flow == 0 {
				for len(indents) > 0 && indents[len(indents)-1] >= indent {
					indents = indents[:len(indents)-1]
				}
				indents = append(indents, indent)
			}
		}
		inline := 0 // block indicators on this line: "- ", "? ", ": "
		maxFlow := flow
		var quote byte
		for i := indent; i < len(line); i++ {
			c := line[i]
			switch {
			case quote != 0:
				if c == quote {
					quote = 0
				} else if c == '\\' && quote == '"' {
					i++
				}
			case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
				i = len(line)
			case (c == '"' || c == '\'') && (i == 0 || !isWordByte(line[i-1])):
				quote = c
			case c == '[' || c == '{':
				flow++
				maxFlow = max(maxFlow, flow)
				b.nodes++
			case (c == ']' || c == '}') && flow > 0:
				flow--
			case c == ',' && flow > 0:
				b.nodes++
			case (c == '-' || c == '?' || c == ':') && (i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t'):
				inline++
				b.nodes++
			}
		}
		if d := len(indents) + inline + maxFlow; d > b.depth {
			b.depth, b.depthAt = d, off+indent
		}
		if b.nodes > maxNodes {
			b.nodesAt = off + indent
			return b
		}
		off = end + 1
	}
	return b
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
