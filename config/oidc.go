package config

// server.auth.oidc: vmcp as an OAuth 2.1 resource server (package
// auth/oidc checks the tokens). issuer and audience are required; the
// issuer must be https, or http on a loopback host (a local IdP); scopes
// names the IdP scopes that grant run, author and admin (vmcp:run,
// vmcp:author and vmcp:admin when omitted); subjectClaim the claim that
// names the owner of a caller's runs (sub).

import (
	"net"
	"net/url"

	"github.com/goccy/go-yaml/ast"
)

// OIDC is server.auth.oidc.
type OIDC struct {
	Issuer, Audience string
	// Scopes are the IdP's scope names for vmcp's scopes; "" takes the
	// default (vmcp:run, vmcp:author, vmcp:admin).
	Scopes       OIDCScopes
	SubjectClaim string
}

// OIDCScopes maps vmcp's scopes to the IdP's.
type OIDCScopes struct{ Run, Author, Admin string }

func (l *loader) oidc(n ast.Node, path string) *OIDC {
	o := &OIDC{}
	have := map[string]bool{}
	l.fields(n, path, []string{"issuer", "audience", "scopes", "subjectClaim"}, func(key string, k, v ast.Node) {
		p := joinPath(path, key)
		have[key] = true
		switch key {
		case "issuer":
			if s, ok := l.str(v, p, p); ok {
				if msg := issuerProblem(s); msg != "" {
					l.errorf(v, p, CodeBadValue, "%s %q %s", p, s, msg)
				}
				o.Issuer = s
			}
		case "audience":
			if s, ok := l.str(v, p, p); ok {
				if s == "" {
					l.errorf(v, p, CodeBadValue, "%s is empty: write vmcp's resource identifier, such as https://vmcp.example.com/mcp", p)
				}
				o.Audience = s
			}
		case "scopes":
			l.fields(v, p, []string{"run", "author", "admin"}, func(key string, k, v ast.Node) {
				sp := joinPath(p, key)
				s, ok := l.str(v, sp, sp)
				if !ok {
					return
				}
				if s == "" {
					l.errorf(v, sp, CodeBadValue, "%s is empty: name the IdP scope that grants %s", sp, key)
					return
				}
				switch key {
				case "run":
					o.Scopes.Run = s
				case "author":
					o.Scopes.Author = s
				case "admin":
					o.Scopes.Admin = s
				}
			})
		case "subjectClaim":
			o.SubjectClaim, _ = l.str(v, p, p)
		}
	})
	if _, isMap := unwrap(n).(*ast.MappingNode); !isMap {
		return nil
	}
	if !have["issuer"] {
		l.errorf(n, path, CodeMissingField, "%s has no issuer: the authorization server's issuer URL, such as https://idp.example.com/", path)
	}
	if !have["audience"] {
		l.errorf(n, path, CodeMissingField, "%s has no audience: vmcp's resource identifier (RFC 8707), such as https://vmcp.example.com/mcp; a token's aud must contain it", path)
	}
	return o
}

// issuerProblem says what is wrong with an issuer URL ("" for nothing).
func issuerProblem(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "is not an absolute https URL"
	}
	if u.Scheme == "http" {
		h := u.Hostname()
		if ip := net.ParseIP(h); h != "localhost" && (ip == nil || !ip.IsLoopback()) {
			return "uses http: only a loopback host may (a local server); use https"
		}
	}
	return ""
}
