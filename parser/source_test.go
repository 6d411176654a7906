package parser

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSourcePositions round-trips every rune boundary of a file through
// pos and offset, on ASCII lines, short non-ASCII lines and lines long
// enough to use several rune checkpoints.
func TestSourcePositions(t *testing.T) {
	long := strings.Repeat("aé☃😀", 100) // 400 runes, well past checkpointRunes
	text := "plain ascii\n" + "é\n" + long + "\n\n" + strings.Repeat("x", 300) + "\n" + long
	s := newSource("f", []byte(text))
	line, col := 1, 1
	for off := 0; off <= len(text); {
		p := s.pos(off)
		if p.Line != line || p.Col != col {
			t.Fatalf("pos(%d) = %d:%d; want %d:%d", off, p.Line, p.Col, line, col)
		}
		if back := s.offset(p.Line, p.Col); back != off {
			t.Fatalf("offset(%d, %d) = %d; want %d", p.Line, p.Col, back, off)
		}
		if ls, want := s.lineStart(off), strings.LastIndex(text[:off], "\n")+1; ls != want {
			t.Fatalf("lineStart(%d) = %d; want %d", off, ls, want)
		}
		if off == len(text) {
			break
		}
		r, size := utf8.DecodeRuneInString(text[off:])
		off += size
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	// Columns past the end of a line clamp to the line's end.
	if got, want := s.offset(2, 99), strings.Index(text, "é")+len("é"); got != want {
		t.Errorf("offset(2, 99) = %d; want %d (end of line 2)", got, want)
	}
	if got := s.offset(99, 1); got != len(text) {
		t.Errorf("offset(99, 1) = %d; want %d (end of file)", got, len(text))
	}
}
