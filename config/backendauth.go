package config

// backends.<name>.auth: how vmcp authenticates to an HTTP backend
// (package auth/credentials does it). One of
//
//	auth: {kind: bearer, token: "${API_TOKEN}"}
//	auth: {kind: header, name: X-Api-Key, value: "${API_KEY}"}
//	auth: {kind: client-credentials, tokenURL: https://idp/oauth2/token,
//	       clientID: vmcp, clientSecret: "${SECRET}", scopes: [a, b], audience: https://api/mcp}
//	auth: {kind: token-exchange, tokenURL: https://idp/oauth2/token,
//	       clientID: vmcp, clientSecret: "${SECRET}", audience: https://api/mcp}
//
// token-exchange (RFC 8693) exchanges the run's caller's OAuth token for
// one for the backend, so its audience is required. The credential
// replaces any Authorization (or the header's name) the headers map sets,
// so both may not name the same header.

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// The kinds of backend credential.
const (
	AuthBearer            = "bearer"
	AuthHeader            = "header"
	AuthClientCredentials = "client-credentials"
	AuthTokenExchange     = "token-exchange"
)

// BackendAuth is backends.<name>.auth.
type BackendAuth struct {
	Kind string
	// Token is bearer's.
	Token string
	// Header and Value are header's (name and value in the file).
	Header, Value string
	// TokenURL, ClientID, ClientSecret, Scopes and Audience are
	// client-credentials' and token-exchange's.
	TokenURL, ClientID, ClientSecret string
	Scopes                           []string
	Audience                         string
}

// authFields are each kind's fields besides kind; the first ones listed
// in required are required.
var authFields = map[string]struct{ known, required []string }{
	AuthBearer:            {[]string{"token"}, []string{"token"}},
	AuthHeader:            {[]string{"name", "value"}, []string{"name", "value"}},
	AuthClientCredentials: {[]string{"tokenURL", "clientID", "clientSecret", "scopes", "audience"}, []string{"tokenURL", "clientID", "clientSecret"}},
	AuthTokenExchange:     {[]string{"tokenURL", "clientID", "clientSecret", "scopes", "audience"}, []string{"tokenURL", "clientID", "clientSecret", "audience"}},
}

func (l *loader) backendAuth(n ast.Node, path string) *BackendAuth {
	m, isMap := unwrap(n).(*ast.MappingNode)
	if !isMap {
		l.errorf(n, path, CodeBadType, "%s must be a mapping such as {kind: bearer, token: \"${API_TOKEN}\"}, not %s", path, kind(unwrap(n)))
		return nil
	}
	a := &BackendAuth{}
	for _, mv := range m.Values {
		if k, _ := scalarString(unwrap(mv.Key)); k == "kind" {
			a.Kind, _ = l.oneOf(mv.Value, path+".kind", path+".kind", AuthBearer, AuthHeader, AuthClientCredentials, AuthTokenExchange)
		}
	}
	switch a.Kind {
	case "":
		if !l.hasKey(n, "kind") {
			l.errorf(n, path, CodeMissingField, "%s has no kind: bearer, header, client-credentials or token-exchange", path)
		}
		return nil
	}
	if a.Kind == AuthTokenExchange {
		l.exchanges = append(l.exchanges, positioned{n, path})
	}
	fields := authFields[a.Kind]
	have := map[string]bool{}
	l.fields(n, path, append([]string{"kind"}, fields.known...), func(key string, k, v ast.Node) {
		p := joinPath(path, key)
		have[key] = true
		var dst *string
		switch key {
		case "kind":
			return
		case "scopes":
			a.Scopes = l.strList(v, p, p)
			return
		case "token":
			dst = &a.Token
		case "name":
			dst = &a.Header
		case "value":
			dst = &a.Value
		case "tokenURL":
			dst = &a.TokenURL
		case "clientID":
			dst = &a.ClientID
		case "clientSecret":
			dst = &a.ClientSecret
		case "audience":
			dst = &a.Audience
		}
		s, ok := l.str(v, p, p)
		if !ok {
			return
		}
		if strings.TrimSpace(s) == "" {
			l.errorf(v, p, CodeBadValue, "%s is empty (an unset ${VAR}?)", p)
			return
		}
		if key == "tokenURL" {
			if msg := issuerProblem(s); msg != "" {
				l.errorf(v, p, CodeBadValue, "%s %q %s", p, s, msg)
			}
		}
		*dst = s
	})
	for _, f := range fields.required {
		if !have[f] {
			l.errorf(n, path, CodeMissingField, "%s (kind %s) has no %s", path, a.Kind, f)
		}
	}
	return a
}

// positioned is a node and its YAML path.
type positioned struct {
	node ast.Node
	path string
}

// checkTokenExchange refuses a token-exchange backend without
// server.auth.oidc: no caller would have an OAuth token to exchange.
func (l *loader) checkTokenExchange() {
	if l.cfg.Server.Auth.OIDC != nil {
		return
	}
	for _, e := range l.exchanges {
		l.errorf(e.node, e.path, CodeBadValue, "%s (kind token-exchange) exchanges the caller's OAuth access token, but server.auth.oidc is not set, so no caller has one; configure server.auth.oidc, or use client-credentials", e.path)
	}
}

// checkAuthHeader refuses a headers entry that the credential would
// replace.
func (l *loader) checkAuthHeader(keyNode ast.Node, b *Backend) {
	if b.Auth == nil {
		return
	}
	h := "Authorization"
	if b.Auth.Kind == AuthHeader {
		h = b.Auth.Header
	}
	for k := range b.Headers {
		if http.CanonicalHeaderKey(k) == http.CanonicalHeaderKey(h) {
			l.errorf(keyNode, "backends."+b.Name+".headers", CodeBadValue, "backend %q: headers.%s and auth both set %s; keep one (auth: {kind: header, name: %s, value: ...})", b.Name, k, h, h)
		}
	}
}

// String never shows the secrets.
func (a *BackendAuth) String() string {
	if a == nil {
		return "none"
	}
	return fmt.Sprintf("%s auth", a.Kind)
}
