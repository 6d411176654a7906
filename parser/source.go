package parser

import (
	"bytes"
	"sort"
	"unicode/utf8"

	"github.com/vmcp-dev/vmcp/ir"
)

// source is one file's text with an index of where each line starts, so
// that byte offsets and go-yaml's (line, rune column) pairs convert to each
// other. This is the one place where positions become 1-based ir.Pos
// values: lines count from 1, columns count runes from 1, as diag's
// excerpt printer expects.
//
// Converting between byte offsets and rune columns costs a walk over the
// line. To keep that cheap on long lines (minified JSON is one line), each
// line that is not pure ASCII gets, on first use, a list of checkpoints: the
// byte offset of every checkpointRunes-th rune. A conversion then walks at
// most that many runes. On ASCII lines, columns are byte offsets.
type source struct {
	name   string
	src    []byte
	lines  []int   // byte offset of the start of each line, lines[0] == 0
	ascii  []bool  // whether each line is pure ASCII
	checks [][]int // per line: byte offset of rune k*checkpointRunes, lazily

	scratch  []ir.Segment // scalarSegments' result, reused from call to call
	lastLine int          // the line lineOf found last
}

const checkpointRunes = 64

func newSource(name string, src []byte) *source {
	n := bytes.Count(src, []byte{'\n'}) + 1
	s := &source{name: name, src: src, lines: make([]int, 1, n), ascii: make([]bool, 0, n)}
	ascii := true
	for i, c := range src {
		if c >= utf8.RuneSelf {
			ascii = false
		}
		if c == '\n' {
			s.lines = append(s.lines, i+1)
			s.ascii = append(s.ascii, ascii)
			ascii = true
		}
	}
	s.ascii = append(s.ascii, ascii)
	return s
}

// checkpoints returns the rune checkpoints of line i (0-based).
func (s *source) checkpoints(i int) []int {
	if s.checks == nil {
		s.checks = make([][]int, len(s.lines)) // only files with non-ASCII lines need it
	}
	if s.checks[i] != nil {
		return s.checks[i]
	}
	start := s.lines[i]
	end := len(s.src)
	if i+1 < len(s.lines) {
		end = s.lines[i+1]
	}
	cps := []int{start}
	n := 0
	for off := start; off < end; {
		_, size := utf8.DecodeRune(s.src[off:end])
		off += size
		n++
		if n%checkpointRunes == 0 {
			cps = append(cps, off)
		}
	}
	s.checks[i] = cps
	return cps
}

// lineOf returns the 0-based line holding byte offset off.
func (s *source) lineOf(off int) int {
	// Conversions mostly go forward through the file: try the line found
	// last and the one after it before searching.
	for l := s.lastLine; l < s.lastLine+2 && l < len(s.lines); l++ {
		if s.lines[l] <= off && (l+1 == len(s.lines) || off < s.lines[l+1]) {
			s.lastLine = l
			return l
		}
	}
	l := sort.Search(len(s.lines), func(i int) bool { return s.lines[i] > off }) - 1
	s.lastLine = max(l, 0)
	return l
}

// lineStart returns the offset of the start of the line containing off.
func (s *source) lineStart(off int) int { return s.lines[s.lineOf(off)] }

// nextLine returns the start of the line after the one containing off, or
// -1 at the end of the file.
func (s *source) nextLine(off int) int {
	if line := s.lineOf(off); line+1 < len(s.lines) {
		return s.lines[line+1]
	}
	return -1
}

// lineEnd returns the offset of the newline ending the line that contains
// off (or len(src)), before a trailing carriage return.
func (s *source) lineEnd(off int) int {
	return s.endOfLine(s.lineOf(off), off)
}

// endOfLine is lineEnd(off) for an off known to be on the line with
// 0-based index line.
func (s *source) endOfLine(line, off int) int {
	end := len(s.src)
	if line+1 < len(s.lines) {
		end = s.lines[line+1] - 1
	}
	if end > off && s.src[end-1] == '\r' {
		end--
	}
	return end
}

// pos converts a byte offset to a file position.
func (s *source) pos(off int) ir.Pos {
	if off < 0 {
		off = 0
	}
	if off > len(s.src) {
		off = len(s.src)
	}
	return s.posOnLine(s.lineOf(off), off)
}

// posOnLine is pos(off) for an off known to be on the line with 0-based
// index line, which saves looking the line up.
func (s *source) posOnLine(line, off int) ir.Pos {
	if s.ascii[line] {
		return ir.Pos{File: s.name, Line: line + 1, Col: off - s.lines[line] + 1}
	}
	cps := s.checkpoints(line)
	k := sort.Search(len(cps), func(i int) bool { return cps[i] > off }) - 1
	return ir.Pos{File: s.name, Line: line + 1, Col: k*checkpointRunes + utf8.RuneCount(s.src[cps[k]:off]) + 1}
}

// offset converts a 1-based line and rune column to a byte offset. Columns
// past the end of the line clamp to the line's end.
func (s *source) offset(line, col int) int {
	if line < 1 {
		return 0
	}
	if line > len(s.lines) {
		return len(s.src)
	}
	off := s.lines[line-1]
	end := s.endOfLine(line-1, off)
	if col < 1 {
		col = 1
	}
	if s.ascii[line-1] {
		return min(off+col-1, end)
	}
	cps := s.checkpoints(line - 1)
	k := min((col-1)/checkpointRunes, len(cps)-1)
	off = cps[k]
	for c := k*checkpointRunes + 1; c < col && off < end; c++ {
		_, size := utf8.DecodeRune(s.src[off:end])
		off += size
	}
	return min(off, end)
}

// skipBlanks returns the first offset at or after off on the same line that
// is not a space or tab. go-yaml sometimes reports a token at the blank
// before it (after a tab, for instance); this puts the position on the
// token's first character.
func (s *source) skipBlanks(off int) int {
	for off < len(s.src) && (s.src[off] == ' ' || s.src[off] == '\t') {
		off++
	}
	return off
}
