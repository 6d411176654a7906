package config

// server.auth.oidc: vmcp as an OAuth 2.1 resource server (package
// auth/oidc checks the tokens). issuer and audience are required; the
// issuer must be https, or http on a loopback host (a local IdP); scopes
// names the IdP scopes that grant run, author and admin (vmcp:run,
// vmcp:author and vmcp:admin when omitted); subjectClaim the claim that
// names the owner of a caller's runs (sub); introspection, when set, the
// RFC 7662 endpoint that checks opaque (non-JWT) access tokens:
// {url, clientID, clientSecret, cacheTTL}.

import (
	"net"
	"net/url"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// OIDC is server.auth.oidc.
type OIDC struct {
	Issuer, Audience string
	// Scopes are the IdP's scope names for vmcp's scopes; "" takes the
	// default (vmcp:run, vmcp:author, vmcp:admin).
	Scopes       OIDCScopes
	SubjectClaim string
	// Introspection checks opaque tokens (nil: JWTs only).
	Introspection *Introspection
}

// Introspection is server.auth.oidc.introspection: the RFC 7662 endpoint,
// the client vmcp authenticates to it as (HTTP Basic; none when empty),
// and how long an answer is used (0: the default, 30 s).
type Introspection struct {
	URL, ClientID, ClientSecret string
	CacheTTL                    time.Duration
}

// OIDCScopes maps vmcp's scopes to the IdP's.
type OIDCScopes struct{ Run, Author, Admin string }

func (l *loader) oidc(n ast.Node, path string) *OIDC {
	o := &OIDC{}
	have := map[string]bool{}
	l.fields(n, path, []string{"issuer", "audience", "scopes", "subjectClaim", "introspection"}, func(key string, k, v ast.Node) {
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
		case "introspection":
			o.Introspection = l.introspection(v, p)
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

func (l *loader) introspection(n ast.Node, path string) *Introspection {
	in := &Introspection{}
	have := map[string]bool{}
	l.fields(n, path, []string{"url", "clientID", "clientSecret", "cacheTTL"}, func(key string, k, v ast.Node) {
		p := joinPath(path, key)
		have[key] = true
		if key == "cacheTTL" {
			in.CacheTTL = l.duration(v, p, p)
			return
		}
		s, ok := l.str(v, p, p)
		if !ok {
			return
		}
		if s == "" {
			l.errorf(v, p, CodeBadValue, "%s is empty (an unset ${VAR}?)", p)
			return
		}
		switch key {
		case "url":
			if msg := issuerProblem(s); msg != "" {
				l.errorf(v, p, CodeBadValue, "%s %q %s", p, s, msg)
			}
			in.URL = s
		case "clientID":
			in.ClientID = s
		case "clientSecret":
			in.ClientSecret = s
		}
	})
	if _, isMap := unwrap(n).(*ast.MappingNode); !isMap {
		return nil
	}
	if !have["url"] {
		l.errorf(n, path, CodeMissingField, "%s has no url: the RFC 7662 introspection endpoint, such as https://idp.example.com/oauth2/introspect", path)
	}
	if have["clientID"] != have["clientSecret"] {
		l.errorf(n, path, CodeMissingField, "%s needs both clientID and clientSecret (the client vmcp authenticates to the endpoint as), or neither", path)
	}
	return in
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
