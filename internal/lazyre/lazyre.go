package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr the first time it is called
// and returns that same Regexp on every call, from any goroutine. Like
// regexp.MustCompile it panics when expr is not a valid expression, at
// that first call: every expression given to New must have a test that
// reaches its use.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
