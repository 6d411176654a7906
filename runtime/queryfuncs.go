package runtime

// The wording of query errors at run time. An expression the checker saw
// has parsed already; what fails here is an expression computed while the
// run goes (printf, a parameter) or a search on the data. The checker's
// words come from internal/jmes and so do these, with where the problem
// is: a computed expression exists only at run time, so its offset is
// given as a column of that expression, and the template error around it
// carries the query call's position in the workflow's file.

import (
	"errors"
	"fmt"
	"strings"
	"text/template/parse"
	"unicode/utf8"

	"github.com/vmcp-dev/vmcp/internal/jmes"
	"github.com/vmcp-dev/vmcp/ir"
)

// queryParseError words an expression that does not parse or reads a
// variable it does not define.
func queryParseError(expr string, err error) error {
	var e *jmes.Error
	if !errors.As(err, &e) {
		return fmt.Errorf("the JMESPath expression does not parse: %v", err)
	}
	what := "does not parse"
	if strings.HasPrefix(e.Msg, "variable ") {
		what = "reads a variable it does not define"
	}
	msg := fmt.Sprintf("the JMESPath expression %s (%s): %v", what, queryWhere(expr, e.Off), e)
	return &queryError{expr: expr, off: e.Off, msg: msg}
}

// querySearchError words a search that failed.
func querySearchError(err error) error {
	return fmt.Errorf("the JMESPath expression failed: %v", err)
}

// queryWhere words byte offset off of expr as a 1-based column in runes,
// or as its end.
func queryWhere(expr string, off int) string {
	if off >= len(expr) {
		return "at the end of the expression"
	}
	return fmt.Sprintf("at column %d of the expression", utf8.RuneCountInString(expr[:max(off, 0)])+1)
}

// queryError is a query expression that does not parse, with the
// expression as it ran and the byte offset in it, so that the template
// error around it can find the place in the source (queryExprPos).
type queryError struct {
	expr string
	off  int
	msg  string
}

func (e *queryError) Error() string { return e.msg }

// queryExprPos finds the file position of a queryError's offset when the
// template wrote the expression in its source: a string literal
// ({{query "..." .x}}, in a plan the checker did not see), or a printf
// whose format is a literal ({{query (printf "items[?name == '%s'" .n) .x}}),
// where the offset falls in the format's own text, in the text one of its
// verbs inserted (the verb's position), or at its end. ok is false when
// the source does not hold the expression, or when more than one query
// call of the template could have built it.
func (t *tmpl) queryExprPos(err error) (pos ir.Pos, ok bool) {
	var qe *queryError
	if !errors.As(err, &qe) || t.text == nil || t.text.Tree == nil {
		return ir.Pos{}, false
	}
	found := 0
	for _, lit := range queryExprLiterals(t.text.Tree.Root) {
		fmtOff, match := lit.offset(qe.expr, qe.off)
		if match {
			found++
			pos = t.offsetPos(int(lit.str.Pos) + ir.LiteralOffset(lit.str.Quoted, fmtOff))
		}
	}
	return pos, found == 1
}

// queryExprLiteral is the literal that a query call's expression is
// written in: the expression itself, or a printf format.
type queryExprLiteral struct {
	str    *parse.StringNode
	printf bool
}

// queryExprLiterals returns the expression literals of the query calls
// under n.
func queryExprLiterals(n parse.Node) []queryExprLiteral {
	var out []queryExprLiteral
	var walk func(parse.Node)
	walk = func(n parse.Node) {
		switch x := n.(type) {
		case *parse.ListNode:
			if x != nil {
				for _, c := range x.Nodes {
					walk(c)
				}
			}
		case *parse.ActionNode:
			walk(x.Pipe)
		case *parse.IfNode:
			walk(x.Pipe)
			walk(x.List)
			walk(x.ElseList)
		case *parse.RangeNode:
			walk(x.Pipe)
			walk(x.List)
			walk(x.ElseList)
		case *parse.WithNode:
			walk(x.Pipe)
			walk(x.List)
			walk(x.ElseList)
		case *parse.PipeNode:
			if x == nil {
				return
			}
			for _, c := range x.Cmds {
				if lit, ok := queryExprOf(c); ok {
					out = append(out, lit)
				}
				for _, a := range c.Args {
					walk(a)
				}
			}
		}
	}
	walk(n)
	return out
}

// queryExprOf returns the literal of a command that calls query.
func queryExprOf(c *parse.CommandNode) (queryExprLiteral, bool) {
	if len(c.Args) < 2 || !isIdent(c.Args[0], ir.FuncQuery) {
		return queryExprLiteral{}, false
	}
	switch a := c.Args[1].(type) {
	case *parse.StringNode:
		return queryExprLiteral{str: a}, true
	case *parse.PipeNode:
		if len(a.Cmds) == 1 && len(a.Cmds[0].Args) >= 2 && isIdent(a.Cmds[0].Args[0], "printf") {
			if s, ok := a.Cmds[0].Args[1].(*parse.StringNode); ok {
				return queryExprLiteral{str: s, printf: true}, true
			}
		}
	}
	return queryExprLiteral{}, false
}

func isIdent(n parse.Node, name string) bool {
	id, ok := n.(*parse.IdentifierNode)
	return ok && id.Ident == name
}

// offset maps byte offset off of the expression expr to an offset in the
// literal's value; match is false when the literal cannot have given expr.
func (l queryExprLiteral) offset(expr string, off int) (int, bool) {
	if !l.printf {
		return off, l.str.Text == expr
	}
	return formatOffset(l.str.Text, expr, off)
}

// formatOffset maps byte offset off of s, the output of printf with
// format f, to an offset in f. The format's literal runs must appear in s
// in order (the first at its start, the last at its end); the text
// between them is what the verbs inserted, and maps to its verb.
func formatOffset(f, s string, off int) (int, bool) {
	pieces := formatPieces(f)
	at, mapped := 0, len(f) // past the end of s: the end of f
	for i, p := range pieces {
		end := at + len(p.text)
		if p.verb {
			end = len(s)
			if i+1 < len(pieces) {
				j := strings.Index(s[at:], pieces[i+1].text)
				if i+2 == len(pieces) {
					j = strings.LastIndex(s[at:], pieces[i+1].text)
				}
				if j < 0 {
					return 0, false
				}
				end = at + j
			}
		} else if !strings.HasPrefix(s[at:], p.text) {
			return 0, false
		}
		if off >= at && off < end {
			mapped = p.off
			if !p.verb {
				mapped += min(off-at, len(p.src)-1)
			}
		}
		at = end
	}
	return mapped, at == len(s)
}

// formatPiece is a run of a printf format: literal text (with the source
// it comes from: "%%" is "%") or one verb, at byte offset off of the
// format.
type formatPiece struct {
	off       int
	text, src string
	verb      bool
}

// formatPieces splits a printf format into literal runs and verbs.
func formatPieces(f string) []formatPiece {
	var out []formatPiece
	lit := func(off int, text, src string) {
		if n := len(out); n > 0 && !out[n-1].verb && text == src && out[n-1].text == out[n-1].src {
			out[n-1].text += text
			out[n-1].src += src
			return
		}
		out = append(out, formatPiece{off: off, text: text, src: src})
	}
	for i := 0; i < len(f); {
		if f[i] != '%' {
			lit(i, f[i:i+1], f[i:i+1])
			i++
			continue
		}
		if i+1 < len(f) && f[i+1] == '%' {
			lit(i, "%", "%%")
			i += 2
			continue
		}
		j := i + 1
		for j < len(f) && strings.IndexByte("+-# 0123456789.*[]", f[j]) >= 0 {
			j++
		}
		out = append(out, formatPiece{off: i, verb: true})
		i = min(j+1, len(f))
	}
	return out
}
