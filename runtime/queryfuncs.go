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
	"unicode/utf8"

	"github.com/vmcp-dev/vmcp/internal/jmes"
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
	return fmt.Errorf("the JMESPath expression %s (%s): %v", what, queryWhere(expr, e.Off), e)
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
