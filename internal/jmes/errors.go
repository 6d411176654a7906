package jmes

// All wording of query errors lives in this file. The library words its
// syntax errors in its own token names ("Expected TOKRbracket, received:
// TOKEOF") at the offset of the token it stopped at; here they become
// what the author wrote and what to write instead ("expected ']' but the
// query ended"). Messages never quote the expression's text beyond a
// delimiter or a keyword: an expression built at run time may hold data.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jmespath-community/go-jmespath/pkg/parsing"

	"github.com/vmcp-dev/vmcp/internal/lazyre"
)

// Error is a query that does not parse, cannot be evaluated, or failed:
// the byte offset in the expression (-1 when it has none), what is wrong,
// and how to fix it ("" when there is no one fix). Msg and Fix never
// quote the expression, which may hold data when it is built at run time;
// SourceFix, when set, is a better fix that does quote it, for an
// expression written in the workflow's source.
type Error struct {
	Off       int
	Msg       string
	Fix       string
	SourceFix string
}

// InSource returns the message and the fix for an expression written in
// the workflow's source.
func (e *Error) InSource() (msg, fix string) {
	if e.SourceFix != "" {
		return e.Msg, e.SourceFix
	}
	return e.Msg, e.Fix
}

func (e *Error) Error() string {
	if e.Fix == "" {
		return e.Msg
	}
	return e.Msg + "; " + e.Fix
}

// tokenWords are the library's token names in the author's terms.
var tokenWords = map[string]string{
	"TOKUnknown": "an unknown token", "TOKStar": "'*'", "TOKDot": "'.'",
	"TOKFilter": "'[?'", "TOKFlatten": "'[]'", "TOKLparen": "'('",
	"TOKRparen": "')'", "TOKLbracket": "'['", "TOKRbracket": "']'",
	"TOKLbrace": "'{'", "TOKRbrace": "'}'", "TOKOr": "'||'", "TOKPipe": "'|'",
	"TOKNumber": "a number", "TOKUnquotedIdentifier": "a name",
	"TOKQuotedIdentifier": "a quoted name", "TOKComma": "','", "TOKColon": "':'",
	"TOKPlus": "'+'", "TOKMinus": "'-'", "TOKMultiply": "'×'", "TOKDivide": "'/'",
	"TOKModulo": "'%'", "TOKDiv": "'//'", "TOKLT": "'<'", "TOKLTE": "'<='",
	"TOKGT": "'>'", "TOKGTE": "'>='", "TOKEQ": "'=='", "TOKNE": "'!='",
	"TOKJSONLiteral": "a `JSON` literal", "TOKStringLiteral": "a 'string'",
	"TOKCurrent": "'@'", "TOKRoot": "'$'", "TOKExpref": "'&'", "TOKAnd": "'&&'",
	"TOKNot": "'!'", "TOKVarref": "a $variable", "TOKAssign": "'='",
	"TOKEOF":            "the end of the query",
	"tQuotedIdentifier": "a quoted name", "tUnquotedIdentifier": "a name",
	"tColon": "':'", "tNumber": "a number",
	"identifier": "a name", "lbracket": "'['", "lbrace": "'{'",
}

var tokenNameRE = lazyre.New(`\b(TOK[A-Za-z]+|t(?:Quoted|Unquoted)Identifier|tColon|tNumber)\b`)

// words replaces the library's token names in msg.
func words(msg string) string {
	return tokenNameRE().ReplaceAllStringFunc(msg, func(name string) string {
		if w, ok := tokenWords[name]; ok {
			return w
		}
		return name
	})
}

var (
	expectedRE   = lazyre.New(`^Expected (\S+), received: (\S+)$`)
	keywordRE    = lazyre.New(`^Expected keyword (\S+), received: (\S+)$`)
	unexpectedRE = lazyre.New(`^Unexpected token: (\S+)$`)
	trailingRE   = lazyre.New(`^Unexpected token at the end of the expression: (\S+)$`)
	invalidRE    = lazyre.New(`^Invalid token: (\S+)$`)
	unclosedRE   = lazyre.New(`^Unclosed delimiter: (.)$`)
	sliceRE      = lazyre.New(`^Expected tColon or tNumber, received: (\S+)$`)
)

// found words what the parser met: "the query ended" at the end, else
// "found X".
func found(tok string) string {
	if tok == "TOKEOF" {
		return "the query ended"
	}
	return "found " + words(tok)
}

// syntaxError words the library's syntax error se of expr.
func syntaxError(expr string, se parsing.SyntaxError) *Error {
	msg := strings.TrimPrefix(se.Error(), "SyntaxError: ")
	e := &Error{Off: se.Offset}
	if m := sliceRE().FindStringSubmatch(msg); m != nil {
		e.Msg, e.Fix = "a slice takes numbers and ':' but "+found(m[1]), "write [start:stop:step], as in [0:2]"
	} else if m := keywordRE().FindStringSubmatch(msg); m != nil {
		e.Msg, e.Fix = fmt.Sprintf("expected %q after the bindings of let but %s", m[1], found(m[2])), "write let $name = expression, $other = expression in body"
	} else if m := expectedRE().FindStringSubmatch(msg); m != nil {
		e.Msg, e.Fix = "expected "+words(m[1])+" but "+found(m[2]), expectedFix(m[1])
	} else if m := trailingRE().FindStringSubmatch(msg); m != nil {
		e.Msg, e.Fix = words(m[1])+" follows a complete expression", "join the parts with '.', '|' or an operator, or remove what follows"
	} else if m := unexpectedRE().FindStringSubmatch(msg); m != nil {
		e.Msg = "unexpected " + words(m[1])
	} else if m := invalidRE().FindStringSubmatch(msg); m != nil {
		e.Msg = words(m[1]) + " cannot start an expression"
		switch m[1] {
		case "TOKNumber":
			e.Msg, e.Fix = "a number cannot stand here", "write a number as a JSON literal in backticks, as in `1`"
		case "TOKJSONLiteral", "TOKStringLiteral":
			e.Msg = words(m[1]) + " cannot stand here"
		}
	} else if m := unclosedRE().FindStringSubmatch(msg); m != nil {
		e.Msg, e.Fix = "the "+delimited(m[1])+" starting here is never closed", "end it with "+m[1]
		e.Off = unclosedAt(expr, se.Offset)
	} else {
		e.Msg = fixedWords(msg)
	}
	return e
}

// expectedFix is the fix for a missing token.
func expectedFix(want string) string {
	switch want {
	case "TOKRbracket", "TOKRparen", "TOKRbrace":
		return "close it with " + words(want)
	case "TOKStar":
		return "after '[' write an index ([0]), a slice ([0:2]), '*' ([*]) or a filter ([?...])"
	case "TOKColon":
		return "write {key: expression}"
	}
	return ""
}

// delimited names what a delimiter starts.
func delimited(d string) string {
	switch d {
	case "'":
		return "'string'"
	case `"`:
		return `"quoted name"`
	}
	return "`JSON literal`"
}

// unclosedAt returns the offset of the literal that is never closed (the
// library reports the end of the expression), else def.
func unclosedAt(expr string, def int) int {
	toks := scan(expr)
	if n := len(toks); n > 0 && toks[n-1].kind == tokUnclosed {
		return toks[n-1].off
	}
	return def
}

// fixedWords words the library's other syntax messages.
func fixedWords(msg string) string {
	switch msg {
	case "Incomplete expression":
		return "the query ends where an expression must follow"
	case "Expected identifier, lbracket, or lbrace":
		return "after '.' expected a name, '[' or '{'"
	case "Expected tQuotedIdentifier or tUnquotedIdentifier":
		return "expected a key name in {key: expression}"
	case "Can't have quoted identifier as function name.":
		return "a function name cannot be quoted"
	case "Error":
		return "unexpected token after a projection"
	}
	if strings.HasPrefix(msg, "Unknown char: ") {
		return "unexpected character" // which one would quote the expression
	}
	return strings.ToLower(msg[:1]) + msg[1:]
}

// literalError words a literal that lexed but does not decode: a JSON
// literal that is not JSON or a quoted name that is not a JSON string
// (the library reports these without an offset). It finds the first such
// literal in expr; ok is false when there is none.
func literalError(expr string) (*Error, bool) {
	for _, t := range scan(expr) {
		switch t.kind {
		case tokJSON:
			if !isJSON(strings.ReplaceAll(t.text, "\\`", "`")) {
				return &Error{Off: t.off, Msg: "the text between backticks is not JSON", Fix: jsonLiteralHolds, SourceFix: jsonLiteralFix(t.text)}, true
			}
		case tokQuoted:
			if !isJSON(`"` + t.text + `"`) {
				return &Error{Off: t.off, Msg: `the quoted name is not a valid JSON string`, Fix: `escape '"' and '\' inside it with a backslash`}, true
			}
		}
	}
	return nil, false
}

// jsonLiteralHolds is what a JSON literal may hold.
const jsonLiteralHolds = "a `JSON literal` holds a number, true, false, null, a \"string\", an [array] or an {object}; write a string as 'text'"

// jsonLiteralFix says how to write a JSON literal that was meant to be a
// string (`Pod`), or what a JSON literal holds.
func jsonLiteralFix(text string) string {
	s := strings.TrimSpace(text)
	if s != "" && isJSON(`"`+s+`"`) && !strings.ContainsAny(s, `'"\{}[]`) {
		return fmt.Sprintf("write '%s' for a string, or `\"%s\"` for a JSON string literal", s, s)
	}
	return jsonLiteralHolds
}

// functionError words an error of function name. Type errors drop the
// argument value the library quotes ("invalid type for: <value>,
// expected: ..."): errors never show data, which may hold secrets. The
// error of a call made by an expression reference inside it (map, sort_by)
// is that call's own.
func functionError(name string, err error) *Error {
	var inner *Error
	if errors.As(err, &inner) {
		return inner // an expression's call inside this one (map(&f(@), ...)) names itself
	}
	msg := err.Error()
	const prefix, sep = "invalid type for: ", ", expected: "
	if i := strings.LastIndex(msg, sep); strings.HasPrefix(msg, prefix) && i >= 0 {
		want := strings.TrimSuffix(strings.TrimPrefix(msg[i+len(sep):], "[]functions.JpType{"), "}")
		msg = "an argument has the wrong type; it must be " + strings.ReplaceAll(want, ", ", " or ")
	}
	if strings.HasPrefix(msg, "unknown function: ") {
		return &Error{Off: -1, Msg: fmt.Sprintf("unknown function %s()", name), Fix: "the guide lists the functions a query may call"}
	}
	return &Error{Off: -1, Msg: name + "(): " + msg}
}

// errFunctionPanic words a function the library could not complete.
func errFunctionPanic(name string) *Error {
	return &Error{Off: -1, Msg: name + "() cannot take these arguments", Fix: "check their types against the function's description in the guide"}
}

// searchError words an error of an evaluation.
func searchError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "variable not defined: "); ok {
		return ErrUndefined(Var{Name: name, Off: -1})
	}
	return &Error{Off: -1, Msg: msg}
}

// ErrUndefined words a variable read where it is not defined. The fix
// names the two ways to define it: a named input of the query call
// ("name" VALUE after the value binds $name for the whole expression)
// or a let around the part that reads it.
func ErrUndefined(v Var) *Error {
	bare := strings.TrimPrefix(v.Name, "$")
	return &Error{
		Off: v.Off,
		Msg: fmt.Sprintf("variable %s is not defined here", v.Name),
		Fix: fmt.Sprintf("pass it as a named input after the value (%q VALUE), or bind it with let %s = expression in ... around the part that reads it; ", bare, v.Name) +
			"the bindings of one let do not see each other, so nest a second let to use one in another",
	}
}

func errUnexpectedChar(off int) *Error {
	return &Error{Off: off, Msg: "unexpected character"}
}

func errStrayBinding(off int) *Error {
	return &Error{Off: off, Msg: "'=' binds a variable only in a let", Fix: "write let $name = expression in body, or compare with =="}
}

func errBadBinding(off int) *Error {
	return &Error{Off: off, Msg: "each binding of let is $name = expression", Fix: "write let $name = expression, $other = expression in body"}
}

// errPanic words an evaluation that the library could not complete.
func errPanic() *Error {
	return &Error{Off: -1, Msg: "the query cannot be evaluated", Fix: "simplify the expression around its let and function calls"}
}

// The errors of a query's limits (limits.go). They name the function, the
// argument and the limit, never the argument's value.

// limitName is where an operator changes the bound of a query.
const limitName = "limits.maxResultBytes"

// errNumberArg words numeric argument pos of fn, named what, that is not
// a whole number (from 0 up, when nonNegative); problem says why.
func errNumberArg(fn, what string, pos int, problem string, nonNegative bool) *Error {
	want := "a whole number"
	fix := "round it with floor() or ceil()"
	if nonNegative {
		want = "a whole number from 0 up"
		if problem == "is negative" {
			fix = "keep it at 0 or more, as in max([n, `0`])"
		}
	}
	if problem == "is not a finite number" {
		fix = "check the arithmetic that computes it (a division by zero gives an infinite number)"
	}
	return &Error{Off: -1, Msg: fmt.Sprintf("%s(): its %s (argument %d) must be %s, but it %s", fn, what, pos, want, problem), Fix: fix}
}

// overLimit words a result of fn that alone would be over the limit:
// why says which argument makes it so big.
func overLimit(fn, result, why string, limit int, fix string) *Error {
	return &Error{Off: -1,
		Msg: fmt.Sprintf("%s(): %s would be over the query limit of %d bytes (%s): %s", fn, result, limit, limitName, why),
		Fix: fix + ", or raise " + limitName + " in vmcp.yaml"}
}

func errPadOver(fn string, limit int) *Error {
	return overLimit(fn, "the padded string", "its width (argument 2) asks for that many bytes", limit, "pad to a smaller width")
}

func errReplaceOver(limit int) *Error {
	return overLimit("replace", "the result", "the replacement (argument 3) is put in at every match of argument 2", limit,
		"replace fewer matches with a count (argument 4), or use a shorter replacement")
}

func errJoinOver(limit int) *Error {
	return overLimit("join", "the joined string", "it holds every element of the array (argument 2) with the separator (argument 1) between them", limit,
		"join fewer elements, or use a shorter separator")
}

func errSplitOver(limit int) *Error {
	return overLimit("split", "the array of pieces", "each piece of the string (argument 1) is an element", limit,
		"split fewer times with a count (argument 3), or split a shorter string")
}

func errToStringOver(limit int) *Error {
	return overLimit("to_string", "the JSON text of its argument", "a value that holds the same part many times is written out in full each time", limit,
		"convert a smaller part of the value")
}

func errZipOver(limit int) *Error {
	return overLimit("zip", "the result", "it holds an array per element of the shortest argument", limit, "zip shorter arrays")
}

// errOverBudget words a call whose result, with what the evaluation
// built before it, is over the limit.
// what is a function's name with its parentheses, or an operator.
func errOverBudget(what string, limit int) *Error {
	return &Error{Off: -1,
		Msg: fmt.Sprintf("%s: with what the query built before it, the query would build more than its limit of %d bytes (%s)", what, limit, limitName),
		Fix: "select the part of the data you need first, or raise " + limitName + " in vmcp.yaml"}
}

func errResultOver(limit int) *Error {
	return &Error{Off: -1,
		Msg: fmt.Sprintf("the query's result is more than %d bytes as JSON, the most a value may hold (a part it holds many times counts each time)", limit),
		Fix: "select less, or raise " + limitName + " in vmcp.yaml"}
}
