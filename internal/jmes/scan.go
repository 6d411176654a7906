package jmes

// A scanner of the few tokens whose positions the library's tree does not
// keep. The library's tree has no offsets, so to place a diagnostic at a
// variable, a let or a JSON literal, the expression text is scanned for
// those tokens with the library lexer's rules for what is inside a
// literal: 'raw strings' (\' and \\ escape), "quoted names" and `JSON
// literals` (a backslash escapes the next character). Everything else is
// skipped a rune at a time. The scan runs on text that the library's
// lexer has accepted, except for an unclosed literal, which it reports.

import "strings"

// tokKind is a kind of token the scanner reports.
type tokKind int

const (
	tokVar      tokKind = iota // $name
	tokLet                     // the let keyword that starts a let expression
	tokJSON                    // `...`
	tokQuoted                  // "..."
	tokRaw                     // '...'
	tokUnclosed                // a literal whose closing delimiter is missing
	tokU0080                   // U+0080 right after a name, on which the library lexer panics
)

// tok is one scanned token: its kind, its offset, and its text (the name
// with its $ for a variable, the text between the delimiters for a
// literal, the opening delimiter for an unclosed literal).
type tok struct {
	kind tokKind
	off  int
	text string
}

// scan returns the tokens of expr that the scanner reports, in order.
func scan(expr string) []tok {
	var toks []tok
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			end := closing(expr, i+1, c)
			if end < 0 {
				return append(toks, tok{kind: tokUnclosed, off: i, text: string(c)})
			}
			kind := map[byte]tokKind{'\'': tokRaw, '"': tokQuoted, '`': tokJSON}[c]
			toks = append(toks, tok{kind: kind, off: i, text: expr[i+1 : end]})
			i = end + 1
		case c == '$':
			j := identEnd(expr, i+1)
			if j > i+1 {
				toks = append(toks, tok{kind: tokVar, off: i, text: expr[i:j]})
			}
			toks = u0080(toks, expr, j)
			i = j
		case identStart(c):
			j := identEnd(expr, i)
			if expr[i:j] == "let" && startsVar(expr[j:]) {
				toks = append(toks, tok{kind: tokLet, off: i, text: "let"})
			}
			toks = u0080(toks, expr, j)
			i = j
		default:
			i++
		}
	}
	return toks
}

// closing returns the offset of the delimiter d that closes a literal
// whose text starts at i, or -1.
func closing(expr string, i int, d byte) int {
	for ; i < len(expr); i++ {
		switch expr[i] {
		case '\\':
			i++
		case d:
			return i
		}
	}
	return -1
}

// u0080 adds a tokU0080 token when the name that ends at j is followed
// by U+0080: the library's lexer reads one entry past its table of name
// characters for exactly that rune.
func u0080(toks []tok, expr string, j int) []tok {
	if strings.HasPrefix(expr[j:], "\u0080") {
		return append(toks, tok{kind: tokU0080, off: j})
	}
	return toks
}

// IsVarName reports whether name may follow "$" in a variable, as the
// scanner reads one: a letter or _, then letters, digits and _. It is the
// rule for the named inputs of query (ir.FuncQuery): the checker refuses
// other names at compile time, the runtime refuses them in a computed
// call.
func IsVarName(name string) bool {
	return name != "" && identStart(name[0]) && identEnd(name, 0) == len(name)
}

func identStart(c byte) bool {
	return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func identEnd(expr string, i int) int {
	for i < len(expr) && (identStart(expr[i]) || ('0' <= expr[i] && expr[i] <= '9')) {
		i++
	}
	return i
}

// startsVar reports whether s, after white space, starts with a variable.
func startsVar(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	return len(s) > 1 && s[0] == '$' && identEnd(s, 1) > 1
}
