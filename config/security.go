package config

// The HTTP server's security settings: bearer tokens, which must not be
// empty or blank (an empty token once turned authentication off, and an
// empty ${VMCP_TOKEN} is the usual way to get one), and allowed Host names,
// whose syntax is httpsafe's.
//
// A server.auth.tokens entry is a string (the token, with every scope) or
// a mapping {token, scopes: [run, author, admin]} that grants only the
// scopes listed.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/vmcp-dev/vmcp/runtime/httpsafe"
)

// tokens reads server.auth.tokens: a list (or one entry), each entry a
// string or a {token, scopes} mapping; every token is expanded and
// required to hold a token.
func (l *loader) tokens(n ast.Node, path string) []httpsafe.Token {
	n = unwrap(n)
	var items []ast.Node
	switch t := n.(type) {
	case *ast.NullNode:
		return nil
	case *ast.SequenceNode:
		items = t.Values
	case *ast.MappingNode:
		items = []ast.Node{n}
	default:
		if _, ok := scalarString(n); !ok {
			l.errorf(n, path, CodeBadType, "%s must be a list of tokens (strings, or {token, scopes} mappings), not %s", path, kind(n))
			return nil
		}
		items = []ast.Node{n}
	}
	var out []httpsafe.Token
	for i, v := range items {
		p := fmt.Sprintf("%s[%d]", path, i)
		if _, isMap := unwrap(v).(*ast.MappingNode); isMap {
			if tok, ok := l.scopedToken(v, p); ok {
				out = append(out, tok)
			}
			continue
		}
		if tok, ok := l.tokenValue(v, p); ok {
			out = append(out, httpsafe.Token{Value: tok, Scopes: httpsafe.Scopes})
		}
	}
	return out
}

// scopedToken reads a {token, scopes} entry.
func (l *loader) scopedToken(n ast.Node, path string) (httpsafe.Token, bool) {
	var tok httpsafe.Token
	var haveToken, haveScopes, ok = false, false, true
	l.fields(n, path, []string{"token", "scopes"}, func(key string, k, v ast.Node) {
		switch key {
		case "token":
			haveToken = true
			tok.Value, ok = l.tokenValue(v, path+".token")
		case "scopes":
			haveScopes = true
			tok.Scopes = l.scopes(v, path+".scopes")
			if tok.Scopes == nil {
				ok = false
			}
		}
	})
	if !haveToken {
		l.errorf(n, path, CodeMissingField, "%s has no token: write {token: \"${VMCP_TOKEN}\", scopes: [run]}", path)
		return tok, false
	}
	if !haveScopes {
		l.errorf(n, path, CodeMissingField, "%s has no scopes: list the ones it grants, scopes: [%s], or write the token as a plain string for every scope", path, scopeList())
		return tok, false
	}
	return tok, ok
}

// scopes reads a token's scopes list; nil when it has a problem
// (reported).
func (l *loader) scopes(n ast.Node, path string) []httpsafe.Scope {
	seq, isSeq := unwrap(n).(*ast.SequenceNode)
	if !isSeq {
		l.errorf(n, path, CodeBadType, "%s must be a list of scopes such as [run, author], not %s", path, kind(unwrap(n)))
		return nil
	}
	if len(seq.Values) == 0 {
		l.errorf(n, path, CodeBadValue, "%s is empty: a token needs at least one scope (%s), or remove the entry", path, scopeList())
		return nil
	}
	known := make([]string, len(httpsafe.Scopes))
	for i, s := range httpsafe.Scopes {
		known[i] = string(s)
	}
	out := []httpsafe.Scope{}
	bad := false
	for i, v := range seq.Values {
		p := fmt.Sprintf("%s[%d]", path, i)
		s, ok := l.str(v, p, p)
		if !ok {
			bad = true
			continue
		}
		if !contains(known, s) {
			msg := fmt.Sprintf("%s: unknown scope %q", p, s)
			if hint := suggest(s, known); hint != "" {
				msg += fmt.Sprintf("; did you mean %s?", hint)
			} else {
				msg += fmt.Sprintf(" (the scopes are %s)", scopeList())
			}
			l.errorf(v, p, CodeUnknownScope, "%s", msg)
			bad = true
			continue
		}
		if !slices.Contains(out, httpsafe.Scope(s)) {
			out = append(out, httpsafe.Scope(s))
		}
	}
	if bad {
		return nil
	}
	return out
}

func scopeList() string {
	names := make([]string, len(httpsafe.Scopes))
	for i, s := range httpsafe.Scopes {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// tokenValue reads one token string, expanded, and refuses an empty or
// blank one.
func (l *loader) tokenValue(v ast.Node, p string) (string, bool) {
	tok, refs, ok := l.strRefs(v, p, p)
	if !ok {
		return "", false
	}
	if msg := tokenProblem(p, tok, refs); msg != "" {
		pos := l.pos(v)
		if len(refs) == 1 {
			raw, _ := scalarString(unwrap(v))
			pos = l.refPos(v, raw, refs[0].Offset)
		}
		l.diags.Errorf(pos, p, CodeEmptyToken, "%s", msg)
		return "", false
	}
	return tok, true
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
			l.errorf(n, path, CodeBadType, "%s must be a list of host names such as [\"vmcp.example.com\"], not %s", path, kind(n))
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
			l.errorf(v, p, CodeBadValue, "%s %q is not a host: %v (write host or host:port, for example vmcp.example.com or vmcp.example.com:8443)", p, s, err)
			continue
		}
		out = append(out, h)
	}
	return out
}

// console reads server.console; nodes gets maxEventStreams' node for
// serverCaps.
func (l *loader) console(n ast.Node, path string, nodes map[string]ast.Node) {
	c := &l.cfg.Server.Console
	known := []string{"maxEventStreams", "maxEventStreamsPerSession", "sessionTTL", "signinFailures", "signinLockout"}
	l.fields(n, path, known, func(key string, k, v ast.Node) {
		p := path + "." + key
		switch key {
		case "maxEventStreams":
			nodes["console.maxEventStreams"] = v
			c.MaxEventStreams = l.integer(v, p, p, 1)
		case "maxEventStreamsPerSession":
			c.MaxEventStreamsPerSession = l.integer(v, p, p, 1)
		case "sessionTTL":
			c.SessionTTL = l.duration(v, p, p)
		case "signinFailures":
			c.SigninFailures = l.integer(v, p, p, 1)
		case "signinLockout":
			c.SigninLockout = l.duration(v, p, p)
		}
	})
}

// serverCaps checks the server's connection caps against each other: one
// client, and the console's event streams, must leave connections for the
// others (health checks, MCP calls).
func (l *loader) serverCaps(nodes map[string]ast.Node) {
	s := l.cfg.Server
	maxConn := s.MaxConnections
	if maxConn <= 0 {
		maxConn = httpsafe.DefaultMaxConnections
	}
	if n := nodes["maxConnectionsPerClient"]; n != nil && s.MaxConnectionsPerClient > maxConn {
		l.errorf(n, "server.maxConnectionsPerClient", CodeBadValue,
			"server.maxConnectionsPerClient (%d) must be at most server.maxConnections (%d); raise maxConnections or lower maxConnectionsPerClient", s.MaxConnectionsPerClient, maxConn)
	}
	if n := nodes["console.maxEventStreams"]; n != nil && s.Console.MaxEventStreams >= maxConn {
		l.errorf(n, "server.console.maxEventStreams", CodeBadValue,
			"server.console.maxEventStreams (%d) must be less than server.maxConnections (%d), so that connections are left for health checks and MCP calls; a quarter of it is the default", s.Console.MaxEventStreams, maxConn)
	}
}
