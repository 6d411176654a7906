package diag

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Sources gives printers the text of a file, so they can show the line a
// diagnostic points at. A nil Sources, or a missing file, prints no excerpt.
type Sources map[string][]byte

// Format names an output form of Print.
type Format string

const (
	Text   Format = "text"
	JSON   Format = "json"
	GitHub Format = "github"
)

// Print writes the diagnostics, which should already be Sorted, in the
// given format.
func Print(w io.Writer, l List, format Format, src Sources) error {
	switch format {
	case JSON:
		if l == nil {
			l = List{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(l)
	case GitHub:
		for _, d := range l {
			fmt.Fprintf(w, "::%s file=%s,line=%d,col=%d,title=%s::%s\n",
				d.Severity, d.Pos.File, d.Pos.Line, d.Pos.Col, d.Code, escapeGitHub(d.Message))
		}
		return nil
	case Text, "":
		for _, d := range l {
			fmt.Fprintln(w, d.String())
			if excerpt := Excerpt(src[d.Pos.File], d.Pos.Line, d.Pos.Col); excerpt != "" {
				fmt.Fprint(w, excerpt)
			}
			for _, line := range d.Detail {
				fmt.Fprintf(w, "\t%s\n", line)
			}
		}
		return nil
	}
	return fmt.Errorf("unknown format %q (want text, json or github)", format)
}

// Excerpt renders the source line and a caret under column col, in the form
//
//	14 |         logs: "{{.steps.fetch_logs.output}}"
//	   |                  ^
//
// Columns count characters (runes), so the caret stays aligned after
// non-ASCII text; tabs before the column are kept so the caret lines up
// under a tab-indented line too.
func Excerpt(src []byte, line, col int) string {
	text, ok := sourceLine(src, line)
	if !ok {
		return ""
	}
	num := fmt.Sprintf("%5d", line)
	var caret strings.Builder
	i := 1
	for _, r := range text {
		if i >= col {
			break
		}
		if r == '\t' {
			caret.WriteByte('\t')
		} else {
			caret.WriteByte(' ')
		}
		i++
	}
	for ; i < col; i++ {
		caret.WriteByte(' ')
	}
	caret.WriteByte('^')
	pad := strings.Repeat(" ", len(num))
	return fmt.Sprintf("%s | %s\n%s | %s\n", num, text, pad, caret.String())
}

func sourceLine(src []byte, line int) (string, bool) {
	if line < 1 || len(src) == 0 {
		return "", false
	}
	for n := 1; n < line; n++ {
		i := bytes.IndexByte(src, '\n')
		if i < 0 {
			return "", false
		}
		src = src[i+1:]
	}
	if i := bytes.IndexByte(src, '\n'); i >= 0 {
		src = src[:i]
	}
	text := strings.TrimRight(string(src), "\r")
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	return text, true
}

func escapeGitHub(s string) string {
	r := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	return r.Replace(s)
}
