package config

// The HTTP server's security settings: bearer tokens, which must not be
// empty or blank (an empty token once turned authentication off, and an
// empty ${VMCP_TOKEN} is the usual way to get one), and allowed Host names,
// whose syntax is httpsafe's.

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/vmcp-dev/vmcp/runtime/httpsafe"
)

// tokens reads server.auth.tokens: a list of strings (or one string), each
// expanded and required to hold a token.
func (l *loader) tokens(n ast.Node, path string) []string {
	n = unwrap(n)
	var items []ast.Node
	switch t := n.(type) {
	case *ast.NullNode:
		return nil
	case *ast.SequenceNode:
		items = t.Values
	default:
		if _, ok := scalarString(n); !ok {
			l.errorf(n, path, "bad_type", "%s must be a list of strings, not %s", path, kind(n))
			return nil
		}
		items = []ast.Node{n}
	}
	var out []string
	for i, v := range items {
		p := fmt.Sprintf("%s[%d]", path, i)
		tok, refs, ok := l.strRefs(v, p, p)
		if !ok {
			continue
		}
		if msg := tokenProblem(p, tok, refs); msg != "" {
			pos := l.pos(v)
			if len(refs) == 1 {
				raw, _ := scalarString(unwrap(v))
				pos = l.refPos(v, raw, refs[0].Offset)
			}
			l.diags.Errorf(pos, p, "empty_token", "%s", msg)
			continue
		}
		out = append(out, tok)
	}
	return out
}

// tokenProblem says what is wrong with the token tok at path, expanded from
// refs, or "". The message names the variables but never the value.
func tokenProblem(path, tok string, refs []envRef) string {
	var what string
	switch {
	case tok == "":
		what = "empty"
	case strings.TrimSpace(tok) == "":
		what = "blank (only whitespace)"
	case strings.TrimSpace(tok) != tok:
		return fmt.Sprintf("%s has leading or trailing whitespace, which a client's bearer token never has; remove it", path)
	default:
		return ""
	}
	switch len(refs) {
	case 0:
		return fmt.Sprintf("%s is %s: write the token, or \"${VMCP_TOKEN}\" to read it from the environment, or remove the entry", path, what)
	case 1:
		r := refs[0]
		state := "is set but " + what
		if !r.Set {
			state = "is not set and its default is " + what
		}
		return fmt.Sprintf("%s is %s: environment variable %s %s; set %s to the token, or remove the entry", path, what, r.Var, state, r.Var)
	}
	var names []string
	for _, r := range refs {
		names = append(names, r.Var)
	}
	return fmt.Sprintf("%s is %s: environment variables %s expand to nothing; set them, or remove the entry", path, what, strings.Join(names, ", "))
}

// hosts reads server.allowedHosts, a list of Host header values such as
// vmcp.example.com or vmcp.example.com:8443.
func (l *loader) hosts(n ast.Node, path string) []httpsafe.AllowedHost {
	n = unwrap(n)
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		if _, null := n.(*ast.NullNode); !null {
			l.errorf(n, path, "bad_type", "%s must be a list of host names such as [\"vmcp.example.com\"], not %s", path, kind(n))
		}
		return nil
	}
	var out []httpsafe.AllowedHost
	for i, v := range seq.Values {
		p := fmt.Sprintf("%s[%d]", path, i)
		s, ok := l.str(v, p, p)
		if !ok {
			continue
		}
		h, err := httpsafe.ParseAllowedHost(s)
		if err != nil {
			l.errorf(v, p, "bad_value", "%s %q is not a host: %v (write host or host:port, for example vmcp.example.com or vmcp.example.com:8443)", p, s, err)
			continue
		}
		out = append(out, h)
	}
	return out
}
