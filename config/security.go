package config

// The HTTP server's security settings: bearer tokens, which must not be
// empty or blank (an empty token once turned authentication off, and an
// empty ${VMCP_TOKEN} is the usual way to get one), and allowed Host names,
// whose syntax is httpsafe's.
//
// A server.auth.tokens entry is a string (the token, with every scope) or
// a mapping {token, scopes: [run, author, admin], name} that grants only
// the scopes listed. name is the owner of the runs the token starts
// (httpsafe.Token.Subject: "token:" and 8 hex digits of the token's
// SHA-256 when it has none); two tokens may not have the same owner, as
// each would see the other's runs.

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
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
	owners := map[string]string{} // subject -> the path of the entry that has it
	for i, v := range items {
		p := fmt.Sprintf("%s[%d]", path, i)
		tok, ok := httpsafe.Token{}, false
		if _, isMap := unwrap(v).(*ast.MappingNode); isMap {
			tok, ok = l.scopedToken(v, p)
		} else if tok.Value, ok = l.tokenValue(v, p); ok {
			tok.Scopes = httpsafe.Scopes
		}
		if !ok {
			continue
		}
		sub := tok.Subject()
		if first, dup := owners[sub]; dup {
			l.errorf(v, p, CodeDuplicateOwner, "%s has the owner %q, as %s has: each would see the other's runs; give one of them another name (or remove the duplicate token)", p, sub, first)
			continue
		}
		owners[sub] = p
		out = append(out, tok)
	}
	return out
}

// scopedToken reads a {token, scopes} entry.
func (l *loader) scopedToken(n ast.Node, path string) (httpsafe.Token, bool) {
	var tok httpsafe.Token
	var haveToken, haveScopes, ok = false, false, true
	l.fields(n, path, []string{"token", "scopes", "name"}, func(key string, k, v ast.Node) {
		switch key {
		case "name":
			var nameOK bool
			tok.Name, nameOK = l.tokenName(v, path+".name")
			ok = ok && nameOK
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

// maxTokenName bounds a token's name.
const maxTokenName = 64

// tokenName reads a token's name: 1 to maxTokenName ASCII letters, digits
// and "._@-". It has no ":", so it never looks like a name vmcp derives
// ("token:...").
func (l *loader) tokenName(n ast.Node, path string) (string, bool) {
	name, ok := l.str(n, path, path)
	if !ok {
		return "", false
	}
	bad := strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._@-", r))
	})
	switch {
	case name == "" || len(name) > maxTokenName:
		l.errorf(n, path, CodeBadValue, "%s must be 1 to %d characters long, not %d: it names the owner of the token's runs, such as ci-bot or alice@example.com", path, maxTokenName, len(name))
	case bad >= 0:
		r, _ := utf8.DecodeRuneInString(name[bad:])
		l.errorf(n, path, CodeBadValue, "%s: %q may hold ASCII letters, digits and . _ @ - only, not %q", path, name, string(r))
	default:
		return name, true
	}
	return "", false
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
