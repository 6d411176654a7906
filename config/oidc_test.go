package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestOIDCAndBackendAuth(t *testing.T) {
	src := `backends:
  api:
    url: https://api.example/mcp
    headers: {X-Trace: "1"}
    auth:
      kind: client-credentials
      tokenURL: https://idp.example/oauth2/token
      clientID: vmcp
      clientSecret: "${SECRET}"
      scopes: ["api:call", "api:read"]
      audience: https://api.example/mcp
  keyed:
    url: https://keyed.example/mcp
    auth: {kind: header, name: X-Api-Key, value: k1}
  plain:
    url: https://plain.example/mcp
    auth: {kind: bearer, token: t1}
  forUser:
    url: https://user.example/mcp
    auth: {kind: token-exchange, tokenURL: https://sts.example/token, clientID: vmcp, clientSecret: s4, audience: https://user.example/mcp}
server:
  auth:
    oidc:
      issuer: https://idp.example/
      audience: https://vmcp.example/mcp
      scopes: {run: mcp.use, admin: mcp.admin}
      subjectClaim: email
      introspection: {url: https://idp.example/oauth2/introspect, clientID: vmcp, clientSecret: s5, cacheTTL: 10s}
`
	cfg, err := parse("vmcp.yaml", []byte(src), envOf(map[string]string{"SECRET": "s3"}))
	if err != nil {
		t.Fatal(err)
	}
	want := &OIDC{Issuer: "https://idp.example/", Audience: "https://vmcp.example/mcp", Scopes: OIDCScopes{Run: "mcp.use", Admin: "mcp.admin"}, SubjectClaim: "email",
		Introspection: &Introspection{URL: "https://idp.example/oauth2/introspect", ClientID: "vmcp", ClientSecret: "s5", CacheTTL: 10 * time.Second}}
	if d := cmp.Diff(want, cfg.Server.Auth.OIDC); d != "" {
		t.Errorf("server.auth.oidc (-want +got):\n%s", d)
	}
	if !cfg.Server.Auth.Enabled() {
		t.Error("Auth.Enabled() = false with oidc alone")
	}
	for name, want := range map[string]*BackendAuth{
		"api": {Kind: AuthClientCredentials, TokenURL: "https://idp.example/oauth2/token", ClientID: "vmcp", ClientSecret: "s3",
			Scopes: []string{"api:call", "api:read"}, Audience: "https://api.example/mcp"},
		"keyed": {Kind: AuthHeader, Header: "X-Api-Key", Value: "k1"},
		"plain": {Kind: AuthBearer, Token: "t1"},
		"forUser": {Kind: AuthTokenExchange, TokenURL: "https://sts.example/token", ClientID: "vmcp", ClientSecret: "s4",
			Audience: "https://user.example/mcp"},
	} {
		if d := cmp.Diff(want, cfg.Backends[name].Auth); d != "" {
			t.Errorf("backends.%s.auth (-want +got):\n%s", name, d)
		}
	}
	if s := cfg.Backends["api"].Auth.String(); strings.Contains(s, "s3") {
		t.Errorf("BackendAuth.String() = %q shows the secret", s)
	}
}

func TestOIDCAndBackendAuthErrors(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"no audience", "server:\n  auth:\n    oidc: {issuer: https://idp.example/}\n", "server.auth.oidc has no audience"},
		{"no issuer", "server:\n  auth:\n    oidc: {audience: https://vmcp.example/mcp}\n", "server.auth.oidc has no issuer"},
		{"http issuer", "server:\n  auth:\n    oidc: {issuer: http://idp.example/, audience: a}\n", `"http://idp.example/" uses http: only a loopback host may`},
		{"empty scope", "server:\n  auth:\n    oidc: {issuer: https://i/, audience: a, scopes: {run: \"\"}}\n", "server.auth.oidc.scopes.run is empty"},
		{"unknown field", "server:\n  auth:\n    oidc: {issuer: https://i/, audience: a, audiences: b}\n", `unknown key "audiences"`},
		{"auth on a command backend", "backends:\n  a: {command: x, auth: {kind: bearer, token: t}}\n", "headers, auth and continuousListening apply to url backends only"},
		{"no kind", "backends:\n  a: {url: https://a/mcp, auth: {token: t}}\n", "backends.a.auth has no kind"},
		{"unknown kind", "backends:\n  a: {url: https://a/mcp, auth: {kind: basic}}\n", `"basic" is not one of bearer, header, client-credentials, token-exchange`},
		{"token exchange without audience", "backends:\n  a: {url: https://a/mcp, auth: {kind: token-exchange, tokenURL: https://i/t, clientID: c, clientSecret: s}}\nserver:\n  auth:\n    oidc: {issuer: https://i/, audience: a}\n", "(kind token-exchange) has no audience"},
		{"token exchange without oidc", "backends:\n  a: {url: https://a/mcp, auth: {kind: token-exchange, tokenURL: https://i/t, clientID: c, clientSecret: s, audience: https://a/mcp}}\n", "backends.a.auth (kind token-exchange) exchanges the caller's OAuth access token, but server.auth.oidc is not set"},
		{"introspection without url", "server:\n  auth:\n    oidc: {issuer: https://i/, audience: a, introspection: {cacheTTL: 5s}}\n", "server.auth.oidc.introspection has no url"},
		{"introspection half a client", "server:\n  auth:\n    oidc: {issuer: https://i/, audience: a, introspection: {url: https://i/introspect, clientID: c}}\n", "needs both clientID and clientSecret"},
		{"introspection bad ttl", "server:\n  auth:\n    oidc: {issuer: https://i/, audience: a, introspection: {url: https://i/introspect, cacheTTL: soon}}\n", `"soon" is not a Go duration`},
		{"missing secret", "backends:\n  a: {url: https://a/mcp, auth: {kind: client-credentials, tokenURL: https://i/t, clientID: c}}\n", "(kind client-credentials) has no clientSecret"},
		{"field of another kind", "backends:\n  a: {url: https://a/mcp, auth: {kind: bearer, token: t, clientID: c}}\n", `unknown key "clientID"`},
		{"empty token", "backends:\n  a: {url: https://a/mcp, auth: {kind: bearer, token: \"${T}\"}}\n", "backends.a.auth.token is empty"},
		{"header twice", "backends:\n  a: {url: https://a/mcp, headers: {authorization: x}, auth: {kind: bearer, token: t}}\n", "headers.authorization and auth both set Authorization"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse("vmcp.yaml", []byte(tc.src), envOf(map[string]string{"T": ""}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("parse = %v; want an error saying %q", err, tc.want)
			}
		})
	}
}
