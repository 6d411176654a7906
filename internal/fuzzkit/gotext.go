package fuzzkit

import "strings"

// goFragments are pieces of Go's rendering of values and failures: %v of
// a map, a pointer, a struct pointer or a nil, a bad format verb, an empty
// interface type, a runtime error or a panic's stack.
var goFragments = []string{"%!", "<nil>", "map[", "&{", "0xc0", "interface {}", "runtime error", "goroutine ", "panic:"}

// GoText returns the first fragment of Go's own rendering of values that
// msg holds and input does not (so it did not come from the caller's own
// text), or "". A message meant for a user that holds one is Go talking,
// not vmcp.
func GoText(msg, input string) string {
	for _, g := range goFragments {
		if strings.Contains(msg, g) && !strings.Contains(input, g) {
			return g
		}
	}
	return ""
}
