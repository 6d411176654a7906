package oidc

// RFC 9728 protected resource metadata, and the WWW-Authenticate
// challenges that point MCP clients at it (RFC 6750 §3, as the MCP
// authorization spec asks).
//
// The document is served at /.well-known/oauth-protected-resource and,
// when the resource (the audience) has a path such as /mcp, also at
// /.well-known/oauth-protected-resource/mcp, the URL RFC 9728 §3.1
// derives from the resource and the one MCP clients try first. The
// challenge's resource_metadata names the derived URL on the audience's
// origin; an audience that is not an http(s) URL (an "api://vmcp" name)
// gets the request's own origin.

import (
	"net/http"
	"net/url"
	"strings"
)

// WellKnown is the RFC 9728 metadata path.
const WellKnown = "/.well-known/oauth-protected-resource"

// Metadata is the RFC 9728 document.
type Metadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

// MetadataPaths are the paths MetadataHandler serves.
func (v *Verifier) MetadataPaths() []string {
	paths := []string{WellKnown}
	if u, ok := resourceURL(v.cfg.Audience); ok {
		if p := strings.TrimRight(u.Path, "/"); p != "" {
			paths = append(paths, WellKnown+p)
		}
	}
	return paths
}

// MetadataHandler serves the document (GET and HEAD); it needs no token.
func (v *Verifier) MetadataHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=300")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = w.Write(v.metadata)
	})
}

// MetadataURL is the document's URL for a challenge to r.
func (v *Verifier) MetadataURL(r *http.Request) string {
	if u, ok := resourceURL(v.cfg.Audience); ok {
		return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: WellKnown + strings.TrimRight(u.Path, "/")}).String()
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return (&url.URL{Scheme: scheme, Host: r.Host, Path: WellKnown}).String()
}

func resourceURL(s string) (*url.URL, bool) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, false
	}
	return u, true
}

// Challenge is the WWW-Authenticate value of a 401: errCode is "" when
// the request had no token, "invalid_token" when it had a bad one;
// description is a short reason (it must not hold the token).
func (v *Verifier) Challenge(r *http.Request, errCode, description string) string {
	var b strings.Builder
	b.WriteString(`Bearer resource_metadata=`)
	b.WriteString(quote(v.MetadataURL(r)))
	if errCode != "" {
		b.WriteString(`, error=`)
		b.WriteString(quote(errCode))
		if d := errorDescription(description); d != "" {
			b.WriteString(`, error_description="`)
			b.WriteString(d)
			b.WriteString(`"`)
		}
	}
	return b.String()
}

// ScopeChallenge is the WWW-Authenticate value of a 403 for a token that
// lacks the vmcp scope (RFC 6750 insufficient_scope, naming the IdP's
// scope to ask for).
func (v *Verifier) ScopeChallenge(r *http.Request, scope string) string {
	s := v.cfg.Scopes.Of(scope)
	if s == "" {
		s = scope
	}
	return `Bearer resource_metadata=` + quote(v.MetadataURL(r)) + `, error="insufficient_scope", scope=` + quote(s)
}

// errorDescription holds description to what RFC 6750 §3 allows in
// error_description (printable ASCII without " and \): a double quote
// becomes a single one, other characters are dropped.
func errorDescription(description string) string {
	var b strings.Builder
	for _, r := range description {
		switch {
		case r == '"':
			b.WriteByte('\'')
		case r == '\\' || r < 0x20 || r > 0x7e:
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// quote makes an RFC 9110 quoted-string; characters a quoted-string
// cannot hold (controls) are dropped.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
