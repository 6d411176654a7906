package parser

// Position mapping for string scalars.
//
// A template error is found at a byte offset inside a string value, but the
// user needs the file line and column of that byte. The value is not a copy
// of the source text: quotes are removed, '' and backslash escapes collapse,
// line breaks fold into spaces, indentation disappears. So while building a
// string Node we walk the scalar's source text again and record, in
// Node.lines, a list of ir.Segment: "value bytes from Off onwards come from
// the file at Line:Col, one rune per column, on that line". ir.OffsetPos
// (used by Node.OffsetPos here and by the runtime through
// ir.Template.Segments) then finds the last segment starting at or before
// the offset and adds the number of runes between the segment start and
// the offset to its column.
//
// Segments are made by a spanner while it reproduces the value:
//   - copy(from, to) appends source bytes that stand for themselves. It
//     extends the current segment when the bytes follow on directly in the
//     same line, and starts a new one otherwise (after an escape, at the start
//     of each line).
//   - synth(b, at) appends bytes that the source spells differently (an
//     escape such as \" or \u00e9, the space or newlines of a line fold, the
//     newline ending a block-scalar line). They get a segment of their own
//     pointing at the source text that produced them, and the next copied
//     byte starts a new segment.
//
// Each style has its own walk:
//   - double- and single-quoted scalars are decoded in full from the opening
//     quote (escapes, '' pairs, line folding with trailing blanks trimmed and
//     empty lines kept as newlines);
//   - plain scalars are matched against the value go-yaml produced, line by
//     line: each line contributes its content up to where the value says the
//     scalar ends (a comment, a flow indicator), and line breaks between
//     lines must appear in the value as one space or as one newline per
//     empty line;
//   - literal block scalars (|) are matched line by line: each line of the
//     value must be the tail of its source line with only indentation before
//     it, so the indentation indicator and chomping need no interpretation;
//   - folded block scalars (>) are matched the same way, where a content
//     line's text starts at the smallest indentation that makes it match the
//     rest of the value, and spaces and newline runs between lines are the
//     folds.
//
// The reproduced value must equal go-yaml's value exactly. When it does not
// (a construct this walk does not model), the node keeps a single segment at
// its start, so OffsetPos still points at the scalar, and the builder counts
// the miss so tests can insist that it never happens for known inputs.

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/vmcp-dev/vmcp/ir"
)

// spanner reproduces a scalar's value from its source text and records the
// segments that map it back.
//
// The reproduced bytes are not kept: each piece is compared with the
// value at the offset it lands on as it is produced, which is the same as
// comparing the whole reproduction with the value at the end.
type spanner struct {
	s       *source
	want    string
	n       int          // length of the reproduction so far
	differs bool         // the reproduction is not a prefix of want
	segs    []ir.Segment // with file positions, converted as they are found
	nextSrc int          // source offset that continues the last segment, or -1
}

func (sp *spanner) rest() string { return sp.want[min(sp.n, len(sp.want)):] }

func (sp *spanner) done() bool { return sp.n >= len(sp.want) }

// emit adds b to the reproduction.
func (sp *spanner) emit(b []byte) {
	if !sp.differs && (len(b) > len(sp.want)-sp.n || string(b) != sp.want[sp.n:sp.n+len(b)]) {
		sp.differs = true
	}
	sp.n += len(b)
}

// copy appends src[from:to], which must lie within one line.
func (sp *spanner) copy(from, to int) {
	if from >= to {
		return
	}
	lineStart := from == 0 || sp.s.src[from-1] == '\n'
	if sp.nextSrc != from || lineStart {
		sp.segs = append(sp.segs, sp.s.segment(sp.n, from))
	}
	sp.emit(sp.s.src[from:to])
	sp.nextSrc = to
}

// synth appends bytes that the source text at offset at stands for.
func (sp *spanner) synth(b []byte, at int) {
	if len(b) == 0 {
		return
	}
	sp.segs = append(sp.segs, sp.s.segment(sp.n, at))
	sp.emit(b)
	sp.nextSrc = -1
}

// scalarSegments maps the string value v, written in style st starting at
// byte offset start, back to the file. ok is false when the source could
// not be matched with the value; segs then holds one segment at start.
// segs is the source's scratch space, valid until the next call: the
// builder copies it into the Node (builder.keepSegments).
func (s *source) scalarSegments(st Style, start int, v string) (segs []ir.Segment, ok bool) {
	if start < 0 || start > len(s.src) {
		return nil, false
	}
	if scalarShortcut {
		if at, ok := s.oneRun(st, start, v); ok {
			s.scratch = append(s.scratch[:0], s.segment(0, at))
			return s.scratch, true
		}
	}
	return s.walkSegments(st, start, v)
}

// scalarShortcut turns oneRun on; TestOneRunIsTheWalk turns it off to
// compare.
var scalarShortcut = true

// walkSegments is scalarSegments without the shortcut: it walks the
// scalar's source in its style (spanner), segment by segment.
func (s *source) walkSegments(st Style, start int, v string) (segs []ir.Segment, ok bool) {
	sp := &spanner{s: s, want: v, nextSrc: -1, segs: s.scratch[:0]}
	switch st {
	case Plain:
		ok = sp.plain(start)
	case SingleQuoted:
		ok = sp.quoted(start, '\'')
	case DoubleQuoted:
		ok = sp.quoted(start, '"')
	case Literal:
		ok = sp.literal(start)
	case Folded:
		ok = sp.folded(start)
	}
	if !ok || sp.differs || sp.n != len(v) {
		s.scratch = append(sp.segs[:0], s.segment(0, start))
		return s.scratch, false
	}
	if len(sp.segs) == 0 {
		sp.segs = append(sp.segs, s.segment(0, start))
	}
	s.scratch = sp.segs
	return s.scratch, true
}

// oneRun is scalarSegments' shortcut for the scalars most files are made
// of: a value on one line that is a run of the file's text as it stands (a
// plain scalar, or a quoted one without escapes or doubled quotes). Their
// walk (plain, quoted) would copy the run as one segment; oneRun finds the
// same segment by comparing the text with the value, and returns the
// offset it starts at. ok is false for any other scalar, which takes the
// walk.
func (s *source) oneRun(st Style, start int, v string) (at int, ok bool) {
	src := s.src
	switch st {
	case Plain:
		if strings.ContainsAny(v, "\n\r") || start+len(v) > len(src) || string(src[start:start+len(v)]) != v {
			return 0, false
		}
		return start, true
	case SingleQuoted, DoubleQuoted:
		q := byte('\'')
		special := "'\n\r"
		if st == DoubleQuoted {
			q, special = '"', "\"\\\n\r"
		}
		end := start + 1 + len(v) // the closing quote
		if end >= len(src) || src[start] != q || src[end] != q || strings.ContainsAny(v, special) ||
			string(src[start+1:end]) != v {
			return 0, false
		}
		if q == '\'' && end+1 < len(src) && src[end+1] == '\'' {
			return 0, false // '' stands for a quote: the value goes on
		}
		if v == "" {
			return start, true // the walk makes no segment; the value starts at the quote
		}
		return start + 1, true
	}
	return 0, false
}

// segment starts a segment at value offset off for the source byte at.
func (s *source) segment(off, at int) ir.Segment {
	p := s.pos(at)
	return ir.Segment{Off: off, Line: p.Line, Col: p.Col}
}

func isBlankLine(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// skipEmptyLines starts after the line break at brk and skips lines that
// hold only blanks. It returns the offset of the first non-blank byte of
// the next non-empty line (or -1 at the end of the file) and the number of
// empty lines skipped.
func (sp *spanner) skipEmptyLines(brk int) (next, empties int) {
	src := sp.s.src
	i := sp.s.nextLine(brk)
	for i >= 0 {
		j := sp.s.skipBlanks(i)
		if j < len(src) && (src[j] == '\n' || src[j] == '\r') {
			empties++
			i = sp.s.nextLine(j)
			continue
		}
		return j, empties
	}
	return -1, empties
}

// fold consumes the line break at brk and any empty lines after it, and
// appends what they stand for: one space for a single break, otherwise one
// newline per empty line. It returns the offset of the first non-blank byte
// of the next non-empty line, or -1 at the end of the file.
func (sp *spanner) fold(brk int) int {
	i, empties := sp.skipEmptyLines(brk)
	if empties == 0 {
		sp.synth([]byte{' '}, brk)
	} else {
		sp.synth(bytes.Repeat([]byte{'\n'}, empties), brk)
	}
	return i
}

// plain matches a plain scalar starting at start against the value.
func (sp *spanner) plain(start int) bool {
	src := sp.s.src
	i := start
	for !sp.done() {
		end := sp.s.lineEnd(i)
		content := src[i:end]
		rest := sp.rest()
		if len(rest) <= len(content) && string(content[:len(rest)]) == rest {
			sp.copy(i, i+len(rest))
			return true
		}
		trimmed := bytes.TrimRight(content, " \t")
		if len(trimmed) == 0 || len(trimmed) > len(rest) || string(trimmed) != rest[:len(trimmed)] {
			return false
		}
		sp.copy(i, i+len(trimmed))
		i = sp.fold(end)
		if i < 0 {
			return false
		}
	}
	return true
}

// quoted decodes a single- or double-quoted scalar whose opening quote is
// at start.
func (sp *spanner) quoted(start int, q byte) bool {
	src := sp.s.src
	if start >= len(src) || src[start] != q {
		return false
	}
	i := start + 1
	for i < len(src) {
		c := src[i]
		switch {
		case c == q && q == '\'' && i+1 < len(src) && src[i+1] == '\'':
			sp.synth([]byte{'\''}, i)
			i += 2
		case c == q:
			return true
		case c == '\n' || c == '\r':
			i = sp.fold(i)
			if i < 0 {
				return false
			}
		case c == ' ' || c == '\t':
			j := sp.s.skipBlanks(i)
			if j < len(src) && (src[j] == '\n' || src[j] == '\r') {
				i = j // trailing blanks before a line break are not content
				continue
			}
			sp.copy(i, j)
			i = j
		case c == '\\' && q == '"':
			n, ok := sp.escape(i)
			if !ok {
				return false
			}
			i = n
		default:
			j := i + 1
			for j < len(src) && !isQuotedSpecial(src[j], q) {
				j++
			}
			sp.copy(i, j)
			i = j
		}
	}
	return false
}

func isQuotedSpecial(c, q byte) bool {
	return c == q || c == '\n' || c == '\r' || c == ' ' || c == '\t' || (q == '"' && c == '\\')
}

var simpleEscapes = map[byte]rune{
	'0': 0, 'a': '\a', 'b': '\b', 't': '\t', '\t': '\t', 'n': '\n', 'v': '\v', 'f': '\f',
	'r': '\r', 'e': 0x1b, ' ': ' ', '"': '"', '/': '/', '\\': '\\', 'N': 0x85,
	'_': 0xa0, 'L': 0x2028, 'P': 0x2029,
}

// escape decodes the backslash escape at i and returns the offset after it.
func (sp *spanner) escape(i int) (int, bool) {
	src := sp.s.src
	if i+1 >= len(src) {
		return 0, false
	}
	e := src[i+1]
	if e == '\n' || e == '\r' {
		// An escaped line break joins the lines without a space; empty
		// lines after it still stand for newlines.
		j, empties := sp.skipEmptyLines(i + 1)
		if j < 0 {
			return 0, false
		}
		sp.synth(bytes.Repeat([]byte{'\n'}, empties), i)
		sp.nextSrc = -1
		return j, true
	}
	if r, ok := simpleEscapes[e]; ok {
		sp.synth(utf8.AppendRune(nil, r), i)
		return i + 2, true
	}
	width := 0
	switch e {
	case 'x':
		width = 2
	case 'u':
		width = 4
	case 'U':
		width = 8
	}
	if width == 0 || i+2+width > len(src) {
		return 0, false
	}
	var r rune
	for _, h := range src[i+2 : i+2+width] {
		d, ok := hexDigit(h)
		if !ok {
			return 0, false
		}
		r = r<<4 | d
	}
	sp.synth(utf8.AppendRune(nil, r), i)
	return i + 2 + width, true
}

func hexDigit(c byte) (rune, bool) {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0'), true
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10, true
	}
	return 0, false
}

// literal matches a | block scalar whose indicator is at start.
func (sp *spanner) literal(start int) bool {
	src := sp.s.src
	ls := sp.s.nextLine(start)
	for !sp.done() {
		if ls < 0 {
			return false
		}
		le := sp.s.lineEnd(ls)
		line := src[ls:le]
		rest := sp.rest()
		piece := rest
		nl := strings.IndexByte(rest, '\n')
		if nl >= 0 {
			piece = rest[:nl]
		}
		if piece == "" {
			if !isBlankLine(line) {
				return false
			}
		} else {
			st, ok := literalStart(line, piece)
			if !ok {
				return false
			}
			sp.copy(ls+st, ls+st+len(piece))
		}
		if nl >= 0 {
			sp.synth([]byte{'\n'}, le)
		}
		ls = sp.s.nextLine(ls)
	}
	return true
}

// literalStart finds where a literal line's content piece starts: it is
// the tail of the line after indentation. go-yaml drops the trailing blanks
// of a last line without a newline, so a piece followed by blanks only is
// accepted too.
func literalStart(line []byte, piece string) (int, bool) {
	if st := len(line) - len(piece); st >= 0 && string(line[st:]) == piece && isBlankLine(line[:st]) {
		return st, true
	}
	indent := len(line) - len(bytes.TrimLeft(line, " \t"))
	for k := 0; k <= indent; k++ {
		rest := line[k:]
		if len(rest) >= len(piece) && string(rest[:len(piece)]) == piece && isBlankLine(rest[len(piece):]) {
			return k, true
		}
	}
	return 0, false
}

// folded matches a > block scalar whose indicator is at start.
func (sp *spanner) folded(start int) bool {
	src := sp.s.src
	prevEnd := sp.s.lineEnd(start)
	ls := sp.s.nextLine(start)
	needSep := false
	for !sp.done() {
		rest := sp.rest()
		if rest[0] == '\n' {
			n := len(rest) - len(strings.TrimLeft(rest, "\n"))
			sp.synth(bytes.Repeat([]byte{'\n'}, n), prevEnd)
			needSep = false
			continue
		}
		if rest[0] == ' ' && needSep {
			sp.synth([]byte{' '}, prevEnd)
			needSep = false
			continue
		}
		// Find the source line that holds the next content.
		for {
			if ls < 0 {
				return false
			}
			le := sp.s.lineEnd(ls)
			line := src[ls:le]
			if k, ok := contentStart(line, rest); ok {
				sp.copy(ls+k, le)
				prevEnd = le
				ls = sp.s.nextLine(ls)
				needSep = true
				break
			}
			if !isBlankLine(line) {
				return false
			}
			ls = sp.s.nextLine(ls)
		}
	}
	return true
}

// contentStart returns the smallest k within the line's indentation such
// that line[k:] is a non-empty prefix of rest. A line of blanks only counts
// as content when a newline follows it in rest.
func contentStart(line []byte, rest string) (int, bool) {
	indent := len(line) - len(bytes.TrimLeft(line, " \t"))
	blank := indent == len(line)
	for k := 0; k <= indent && k < len(line); k++ {
		t := string(line[k:])
		if blank {
			t += "\n"
		}
		if len(t) <= len(rest) && rest[:len(t)] == t {
			return k, true
		}
	}
	return 0, false
}
