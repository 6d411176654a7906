package diag

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vmcp-dev/vmcp/ir"
)

func pos(file string, line, col int) ir.Pos { return ir.Pos{File: file, Line: line, Col: col} }

func TestSortedOrdersAndDeduplicates(t *testing.T) {
	var l List
	l.Errorf(pos("b.yaml", 1, 1), "", "x", "late file")
	l.Warnf(pos("a.yaml", 3, 5), "", "w", "warning on line 3")
	l.Errorf(pos("a.yaml", 3, 5), "", "e", "error on line 3")
	l.Errorf(pos("a.yaml", 1, 9), "", "e", "first")
	l.Errorf(pos("a.yaml", 1, 9), "", "e", "first") // duplicate
	got := []string{}
	for _, d := range l.Sorted() {
		got = append(got, d.String())
	}
	want := []string{
		"a.yaml:1:9: error: first",
		"a.yaml:3:5: error: error on line 3",
		"a.yaml:3:5: warning: warning on line 3",
		"b.yaml:1:1: error: late file",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sorted() mismatch (-want +got):\n%s", diff)
	}
}

func TestSortedCaps(t *testing.T) {
	var l List
	for i := 0; i < MaxDiagnostics+7; i++ {
		l.Errorf(pos("f", i+1, 1), "", "c", "m")
	}
	s := l.Sorted()
	if len(s) != MaxDiagnostics+1 {
		t.Fatalf("len(Sorted()) = %d; want %d", len(s), MaxDiagnostics+1)
	}
	if last := s[len(s)-1]; last.Code != CodeTooManyErrors || !strings.Contains(last.Message, "7 more") {
		t.Errorf("last diagnostic = %+v; want too_many_errors naming 7 more", last)
	}
}

// TestSortedCapSeverity: the marker that stands for the dropped
// diagnostics is an error only when an error was dropped, so that a clean
// compilation with many warnings still succeeds.
func TestSortedCapSeverity(t *testing.T) {
	tests := []struct {
		name         string
		errorsAt     []int // lines of errors; every other line up to 105 warns
		wantSeverity Severity
		wantCode     string
		wantMessage  string
	}{
		{"warnings only", nil, Warning, CodeTooManyWarnings, "too many diagnostics: 5 more warnings not shown"},
		{"an error among the shown", []int{1}, Warning, CodeTooManyWarnings, "too many diagnostics: 5 more warnings not shown"},
		{"an error among the dropped", []int{103}, Error, CodeTooManyErrors, "too many diagnostics: 5 more not shown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var l List
			for line := 1; line <= MaxDiagnostics+5; line++ {
				if slices.Contains(tt.errorsAt, line) {
					l.Errorf(pos("f", line, 1), "", "e", "bad")
				} else {
					l.Warnf(pos("f", line, 1), "", "w", "odd")
				}
			}
			s := l.Sorted()
			last := s[len(s)-1]
			if last.Severity != tt.wantSeverity || last.Code != tt.wantCode || last.Message != tt.wantMessage {
				t.Errorf("last of Sorted() = %v %s %q; want %v %s %q", last.Severity, last.Code, last.Message, tt.wantSeverity, tt.wantCode, tt.wantMessage)
			}
			if got, want := s.HasErrors(), len(tt.errorsAt) > 0; got != want {
				t.Errorf("Sorted().HasErrors() = %v; want %v", got, want)
			}
		})
	}
}

func TestExcerpt(t *testing.T) {
	src := []byte("a: 1\n        logs: \"{{.steps.x}}\"\n\tb: é{{.y}}\n")
	tests := []struct {
		line, col int
		want      string
	}{
		{2, 18, "    2 |         logs: \"{{.steps.x}}\"\n      |                  ^\n"},
		// Non-ASCII before the column: the caret counts runes, and the tab is kept.
		{3, 6, "    3 | \tb: é{{.y}}\n      | \t    ^\n"},
		{9, 1, ""}, // past the end of the file
	}
	for _, tt := range tests {
		if got := Excerpt(src, tt.line, tt.col); got != tt.want {
			t.Errorf("Excerpt(line %d, col %d) =\n%q\nwant\n%q", tt.line, tt.col, got, tt.want)
		}
	}
}

func TestPrintFormats(t *testing.T) {
	l := List{{Severity: Error, Pos: pos("w.yaml", 2, 3), Code: "unknown_step", Message: "unknown step \"x\"", Detail: []string{"did you mean y?"}}}
	src := Sources{"w.yaml": []byte("steps:\n  - id: a\n")}
	tests := []struct {
		format Format
		want   string
	}{
		{Text, "w.yaml:2:3: error: unknown step \"x\"\n    2 |   - id: a\n      |   ^\n\tdid you mean y?\n"},
		{GitHub, "::error file=w.yaml,line=2,col=3,title=unknown_step::unknown step \"x\"\n"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := Print(&buf, l, tt.format, src); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tt.want {
			t.Errorf("Print(%s) =\n%q\nwant\n%q", tt.format, buf.String(), tt.want)
		}
	}
	var buf bytes.Buffer
	if err := Print(&buf, l, JSON, src); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"severity": "error"`) || !strings.Contains(buf.String(), `"code": "unknown_step"`) {
		t.Errorf("Print(json) = %s; want severity and code fields", buf.String())
	}
	if err := Print(&buf, l, "xml", src); err == nil {
		t.Errorf("Print(xml) succeeded; want an unknown-format error")
	}
}
