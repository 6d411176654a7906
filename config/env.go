package config

// ${VAR} expansion.
//
// Only the braced form is expanded, so a command line that contains a plain
// $ (a shell variable, a price, a regexp anchor) is left alone. The forms:
//
//	${VAR}           the variable's value; unset is an error
//	${VAR:-default}  the value, or default when VAR is unset or empty
//	$${              a literal "${"
//
// The variable name must be a shell identifier. An unterminated "${" or a
// bad name is an error: silently passing "${GITHUB_TOKEN" through as a
// token would fail much later and much less clearly.

import (
	"fmt"
	"strings"
)

// envRef is one ${VAR} reference that expand replaced.
type envRef struct {
	Var string
	// Offset is the reference's byte offset in the string, for positions.
	Offset int
	// Set reports whether the variable was set (else its :- default was
	// used).
	Set bool
}

// expandError is a problem with one ${...} reference; Offset is its byte
// offset in the string, for positions.
type expandError struct {
	Var    string // the variable, when the problem is that it is unset
	Offset int
	Msg    string
}

func (e *expandError) Error() string { return e.Msg }

// expand replaces the ${VAR} references in s using env, and returns the
// references it replaced, in order.
func expand(s string, env func(string) (string, bool)) (string, []envRef, error) {
	if !strings.Contains(s, "${") {
		return s, nil, nil
	}
	var refs []envRef
	var b strings.Builder
	i := 0
	for i < len(s) {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		j += i
		if j > 0 && s[j-1] == '$' {
			// "$${" is an escaped "${": drop one '$' (already written).
			b.WriteString(s[i : j-1])
			b.WriteString("${")
			i = j + 2
			continue
		}
		b.WriteString(s[i:j])
		end := strings.IndexByte(s[j:], '}')
		if end < 0 {
			return "", nil, &expandError{Offset: j, Msg: fmt.Sprintf("unterminated %q: want ${NAME}", s[j:])}
		}
		end += j
		ref := s[j+2 : end]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !isEnvName(name) {
			return "", nil, &expandError{Offset: j, Msg: fmt.Sprintf("bad environment variable reference %q: want ${NAME} where NAME is letters, digits and underscores", s[j:end+1])}
		}
		val, ok := env(name)
		switch {
		case hasDef && (!ok || val == ""):
			val = def
		case !ok:
			return "", nil, &expandError{Var: name, Offset: j, Msg: fmt.Sprintf("environment variable %s is not set", name)}
		}
		refs = append(refs, envRef{Var: name, Offset: j, Set: ok})
		b.WriteString(val)
		i = end + 1
	}
	return b.String(), refs, nil
}

func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
