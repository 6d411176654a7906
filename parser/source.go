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
type source struct {
	name  string
	src   []byte
	lines []int // byte offset of the start of each line, lines[0] == 0
}

func newSource(name string, src []byte) *source {
	s := &source{name: name, src: src, lines: []int{0}}
	for i, c := range src {
		if c == '\n' {
			s.lines = append(s.lines, i+1)
		}
	}
	return s
}

// lineCount is the number of lines, counting a last line without a newline.
func (s *source) lineCount() int { return len(s.lines) }

// lineEnd returns the offset of the newline ending the line that starts at
// lineStart (or len(src)), without a trailing carriage return.
func (s *source) lineEnd(off int) int {
	i := bytes.IndexByte(s.src[off:], '\n')
	if i < 0 {
		i = len(s.src) - off
	}
	end := off + i
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
	line := sort.Search(len(s.lines), func(i int) bool { return s.lines[i] > off }) - 1
	return ir.Pos{File: s.name, Line: line + 1, Col: utf8.RuneCount(s.src[s.lines[line]:off]) + 1}
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
	end := s.lineEnd(off)
	for c := 1; c < col && off < end; c++ {
		_, size := utf8.DecodeRune(s.src[off:end])
		off += size
	}
	return off
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
