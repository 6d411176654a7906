package plangraph

// Text: what each node says, how wide it is, and how it is escaped.
//
// Measurement. An SVG has no text layout of its own that a program can
// ask before drawing, so widths are estimated: every label is set in a
// monospace font stack (ui-monospace, Menlo, Consolas, DejaVu Sans Mono,
// monospace), where each character advances a fixed 0.6 em (Menlo, DejaVu
// Sans Mono and Courier are exactly 0.6 em; Consolas is 0.55 em, so it
// fits with room to spare). A label of n characters (runes) at size s px
// is therefore n * 0.6 * s px wide, computed in integer tenths of a pixel
// and rounded up, so the estimate is exact for ASCII and never depends on
// the fonts of the machine that renders it. Wide (East Asian) characters
// take two cells in most monospace fonts and are counted as two. Labels
// longer than maxLabel characters are cut with an ellipsis; the full text
// is always in the node's <title> tooltip.
//
// Escaping. Every string from the plan (ids, tool and workflow names,
// descriptions, conditions) goes through xmlText, which escapes the five
// XML metacharacters and replaces characters XML 1.0 forbids (C0 controls
// other than tab and newline, lone surrogates, U+FFFE/U+FFFF) with U+FFFD,
// so any plan gives a well-formed document.

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vmcp-dev/vmcp/ir"
)

// Font sizes in px, and the advance of one monospace cell at each size in
// tenths of a pixel (0.6 em).
const (
	sizeTitle  = 16
	sizeID     = 12
	sizeAction = 11
	sizeSmall  = 10

	// maxLabel is the longest label drawn in full; longer ones are cut.
	maxLabel = 40
	// maxDescription is the longest description line drawn in full.
	maxDescription = 110
)

// textWidth is the width in px of s set at size px (see the comment at
// the top of this file).
func textWidth(s string, size int) int {
	cells := 0
	for _, r := range s {
		cells++
		if isWide(r) {
			cells++
		}
	}
	tenths := cells * size * 6 // 0.6 em per cell, in tenths of a px
	return (tenths + 9) / 10
}

// isWide reports whether r takes two monospace cells: the common East
// Asian wide and fullwidth blocks.
func isWide(r rune) bool {
	if r < 0x1100 {
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hangul, r) ||
		unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r) ||
		(r >= 0xFF01 && r <= 0xFF60) || (r >= 0x1F300 && r <= 0x1FAFF)
}

// clip cuts s to at most n characters, ending in an ellipsis when cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// firstLine is the first non-empty line of s, trimmed.
func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

var xmlEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;",
)

// xmlText escapes s for XML character data and attribute values alike.
func xmlText(s string) string {
	if strings.IndexFunc(s, badXMLRune) >= 0 || !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
		s = strings.Map(func(r rune) rune {
			if badXMLRune(r) {
				return '\uFFFD'
			}
			return r
		}, s)
	}
	return xmlEscaper.Replace(s)
}

// badXMLRune reports whether r may not appear in an XML 1.0 document.
func badXMLRune(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20:
		return true
	case r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE, r == 0xFFFF:
		return true
	}
	return false
}

// action says what a step does: the backend tool, the sub-workflow, an
// elicitation, or for a loop its item variable and (for an inner step:
// loop) what runs per item. A loop with a body draws the body instead.
func action(s *ir.Step) string {
	switch s.Type {
	case ir.StepElicitation:
		return "elicitation"
	case ir.StepWorkflow:
		if s.Workflow != nil {
			return "workflow " + s.Workflow.Name
		}
		return "workflow"
	case ir.StepForEach:
		fe := s.ForEach
		if fe == nil {
			return "forEach"
		}
		what := "forEach " + fe.ItemVar
		if fe.Step != nil {
			what += ": " + action(fe.Step)
		}
		return what
	}
	if s.Tool != nil {
		return s.Tool.String()
	}
	return s.Type
}

// marks are the compact badges under a step's action: "if" for a
// condition (also an inner loop step's), "retry×N" for onError retry,
// "continue" for onError continue, and the elicitation answers that do
// not abort.
func marks(s *ir.Step) []string {
	var out []string
	cond := s.Condition != nil
	if s.ForEach != nil && s.ForEach.Step != nil && s.ForEach.Step.Condition != nil {
		cond = true
	}
	if cond {
		out = append(out, "if")
	}
	switch s.OnError.Action {
	case ir.ActionRetry:
		out = append(out, fmt.Sprintf("retry×%d", s.OnError.MaxRetries))
	case ir.ActionContinue:
		out = append(out, "continue")
	}
	if s.Type == ir.StepElicitation {
		if a := s.OnDecline; a != "" && a != ir.ActionAbort {
			out = append(out, "decline→"+a)
		}
		if a := s.OnCancel; a != "" && a != ir.ActionAbort {
			out = append(out, "cancel→"+a)
		}
	}
	return out
}

// tooltip is the full text of a step's <title>: id, action, condition,
// what a loop iterates over, error handling and the source position, one
// per line.
func tooltip(s *ir.Step) string {
	lines := []string{s.ID, action(s)}
	cond := s.Condition
	if cond == nil && s.ForEach != nil && s.ForEach.Step != nil {
		cond = s.ForEach.Step.Condition
	}
	if cond != nil {
		lines = append(lines, "if "+cond.Source)
	}
	if fe := s.ForEach; fe != nil {
		over := "the literal list"
		if fe.Collection != nil {
			over = fe.Collection.Source
		} else if fe.Items != nil {
			over = fmt.Sprintf("a literal list of %d", len(fe.Items.Items))
		}
		lines = append(lines, fmt.Sprintf("for each %s in %s, at most %d at once and %d in all", fe.ItemVar, over, fe.MaxParallel, fe.MaxIterations))
	}
	switch s.OnError.Action {
	case ir.ActionRetry:
		lines = append(lines, fmt.Sprintf("on error: retry up to %d times", s.OnError.MaxRetries))
	case ir.ActionContinue:
		lines = append(lines, "on error: continue")
	case ir.ActionAbort:
		lines = append(lines, "on error: abort")
	}
	if s.Pos.IsValid() {
		lines = append(lines, s.Pos.String())
	}
	return strings.Join(lines, "\n")
}
