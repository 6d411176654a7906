package ir

// Mapping offsets inside a string value back to the source file.
//
// A template is the value of a YAML string scalar, and the value is not a
// copy of the file's text: quotes are removed, '' and backslash escapes
// collapse, line breaks fold into spaces, block indentation disappears. The
// parser records, for each string, a table of segments: "the value's bytes
// from Off onwards come from the file at Line:Col, one rune per column, on
// that line, up to the next segment". The compiler keeps that table in
// Template.Segments, so the checker (at compile time) and the runtime (for
// errors of a run) turn a byte offset into the same file position with the
// one function below.
//
// OffsetPos finds the last segment that starts at or before the offset
// (segments are sorted by Off) and adds the number of runes of the value
// between the segment's start and the offset to the segment's column.

import "strconv"

// Segment says that the bytes of a string value from Off onwards start in
// the source file at Line:Col and run on that line until the next segment.
type Segment struct {
	Off  int `json:"off"`
	Line int `json:"line"`
	Col  int `json:"col"`
}

// OffsetPos returns the position in file of the byte at offset off of
// value, which segs maps (see the file comment). Columns count runes. With
// no segments the position is unknown (the zero Pos); an offset past the
// end of the value is clamped to the end.
func OffsetPos(file string, segs []Segment, value string, off int) Pos {
	if len(segs) == 0 {
		return Pos{}
	}
	seg := segs[0]
	for _, s := range segs[1:] {
		if s.Off > off {
			break
		}
		seg = s
	}
	p := Pos{File: file, Line: seg.Line, Col: seg.Col}
	end := min(off, len(value))
	if seg.Off >= 0 && seg.Off < end {
		p.Col += runeCount(value[seg.Off:end])
	}
	return p
}

// OffsetPos returns the file position of the byte at offset off of the
// template's Source. A template without Segments is one run of text from
// Pos; a template without a valid Pos has no better position than Pos.
func (t *Template) OffsetPos(off int) Pos {
	if !t.Pos.IsValid() {
		return t.Pos
	}
	if len(t.Segments) == 0 {
		return OffsetPos(t.Pos.File, []Segment{{Line: t.Pos.Line, Col: t.Pos.Col}}, t.Source, off)
	}
	return OffsetPos(t.Pos.File, t.Segments, t.Source, off)
}

// LiteralOffset maps a byte offset in the value of a Go string literal
// inside a template ({{query "a.\"b\"" .x}}) to the offset in its quoted
// form, which starts with the quote: the literal's escapes are wider in
// the source than in the value. An offset at the value's end maps to the
// closing quote. Raw strings (`...`) have no escapes.
func LiteralOffset(quoted string, off int) int {
	if quoted == "" || quoted[0] == '`' {
		return 1 + off
	}
	i, value := 1, 0
	for i < len(quoted)-1 && value < off {
		r, _, tail, err := strconv.UnquoteChar(quoted[i:], '"')
		if err != nil {
			break
		}
		value += len(string(r))
		i = len(quoted) - len(tail)
	}
	return i
}

func runeCount(s string) int {
	n := 0
	for range s {
		n++
	}
	return n
}
