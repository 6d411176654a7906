package spell

// The two spellings of a field name. vmcp's own names are camelCase
// (maxRetries); ToolHive's documents also write snake_case (max_retries),
// so the parser, the checker, the config loader and the guide's schema
// convert between them, all with these two functions.

import (
	"strings"
	"unicode"
)

// Snake turns camelCase into snake_case: maxRetries becomes max_retries.
// An upper-case letter becomes "_" and its lower case, except at the
// start (MaxRetries is max_retries too, never _max_retries).
func Snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Camel turns snake_case into camelCase: max_retries becomes maxRetries. A
// name without "_" is returned as it is; empty parts (a doubled or a
// trailing "_") are dropped.
func Camel(s string) string {
	if !strings.Contains(s, "_") {
		return s
	}
	parts := strings.Split(s, "_")
	var b strings.Builder
	b.WriteString(parts[0])
	for _, p := range parts[1:] {
		if p == "" {
			continue
		}
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	return b.String()
}
