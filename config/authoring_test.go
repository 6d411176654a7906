package config

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
)

// TestScopedTokens: a string token has every scope, a {token, scopes}
// entry only the listed ones.
func TestScopedTokens(t *testing.T) {
	src := `server:
  auth:
    tokens:
      - "${ADMIN}"
      - {token: runner-token, scopes: [run], name: ci-bot}
      - token: "${AUTHOR}"
        scopes: [run, author, author]
`
	cfg, err := parse("vmcp.yaml", []byte(src), envOf(map[string]string{"ADMIN": "adm", "AUTHOR": "aut"}))
	if err != nil {
		t.Fatal(err)
	}
	want := []httpsafe.Token{
		{Value: "adm", Scopes: httpsafe.Scopes},
		{Value: "runner-token", Scopes: []httpsafe.Scope{httpsafe.ScopeRun}, Name: "ci-bot"},
		{Value: "aut", Scopes: []httpsafe.Scope{httpsafe.ScopeRun, httpsafe.ScopeAuthor}},
	}
	if diff := cmp.Diff(want, cfg.Server.Auth.Tokens); diff != "" {
		t.Errorf("tokens (-want +got):\n%s", diff)
	}
	// The owners: the name, else "token:" and 8 hex digits of the SHA-256
	// of the token (sha256("adm") starts 86f65e28).
	var owners []string
	for _, tok := range cfg.Server.Auth.Tokens {
		owners = append(owners, tok.Subject())
	}
	if diff := cmp.Diff([]string{"token:86f65e28", "ci-bot", "token:" + httpsafe.TokenSubject("aut")[6:]}, owners); diff != "" {
		t.Errorf("owners (-want +got):\n%s", diff)
	}
}

// TestTokenAndAuthoringErrors: each bad entry is an error at its position
// that says how to fix it.
func TestTokenAndAuthoringErrors(t *testing.T) {
	tests := []struct {
		name, src string
		env       map[string]string
		want      []string
	}{
		{
			name: "unknown scope gets a did-you-mean",
			src:  "server:\n  auth:\n    tokens:\n      - {token: t, scopes: [run, autor]}\n",
			want: []string{`vmcp.yaml:4:34: error: server.auth.tokens[0].scopes[1]: unknown scope "autor"; did you mean author?`},
		},
		{
			name: "unknown scope far from any",
			src:  "server:\n  auth:\n    tokens:\n      - {token: t, scopes: [everything]}\n",
			want: []string{`unknown scope "everything" (the scopes are run, author, admin)`},
		},
		{
			name: "empty scopes, missing token, missing scopes, unknown key",
			src:  "server:\n  auth:\n    tokens:\n      - {token: t, scopes: []}\n      - {scopes: [run]}\n      - {token: u}\n      - {token: v, scope: [run]}\n",
			want: []string{
				`vmcp.yaml:4:28: error: server.auth.tokens[0].scopes is empty: a token needs at least one scope`,
				`vmcp.yaml:5:9: error: server.auth.tokens[1] has no token`,
				`vmcp.yaml:6:9: error: server.auth.tokens[2] has no scopes: list the ones it grants`,
				`vmcp.yaml:7:20: error: unknown key "scope" in server.auth.tokens[3]; did you mean scopes?`,
			},
		},
		{
			name: "empty scoped token from the environment",
			src:  "server:\n  auth:\n    tokens:\n      - {token: \"${T}\", scopes: [run]}\n",
			env:  map[string]string{"T": ""},
			want: []string{`server.auth.tokens[0].token is empty: environment variable T is set but empty`},
		},
		{
			name: "bad and duplicate names",
			src:  "server:\n  auth:\n    tokens:\n      - {token: a, scopes: [run], name: \"\"}\n      - {token: b, scopes: [run], name: \"al ice\"}\n      - {token: c, scopes: [run], name: ci}\n      - {token: d, scopes: [run], name: ci}\n      - x\n      - x\n",
			want: []string{
				`vmcp.yaml:4:41: error: server.auth.tokens[0].name must be 1 to 64 characters long, not 0`,
				`vmcp.yaml:5:41: error: server.auth.tokens[1].name: "al ice" may hold ASCII letters, digits and . _ @ - only, not " "`,
				`vmcp.yaml:7:9: error: server.auth.tokens[3] has the owner "ci", as server.auth.tokens[2] has: each would see the other's runs`,
				`vmcp.yaml:9:9: error: server.auth.tokens[5] has the owner "token:2d711642", as server.auth.tokens[4] has`,
			},
		},
		{
			name: "authoring backend that is not configured",
			src:  "backends:\n  github: {command: gh}\nauthoring:\n  enabled: true\n  backends: [githb]\n",
			want: []string{`vmcp.yaml:5:14: error: authoring.backends[0]: no backend is named "githb"; did you mean github?`},
		},
		{
			name: "authoring unknown key",
			src:  "authoring:\n  enabld: true\n",
			want: []string{`vmcp.yaml:2:3: error: unknown key "enabld" in authoring; did you mean enabled?`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse("vmcp.yaml", []byte(tt.src), envOf(tt.env))
			var cerr *Error
			if !errors.As(err, &cerr) {
				t.Fatalf("parse = %v; want a config error", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error:\n%s\nwant it to contain:\n%s", err, w)
				}
			}
		})
	}
}

// TestAuthoringSection: the fields are read and the dir is resolved
// against the config's directory.
func TestAuthoringSection(t *testing.T) {
	src := "backends:\n  a: {command: x}\n  b: {command: y}\nauthoring: {enabled: true, dir: authored, backends: [b]}\n"
	cfg, err := parse("conf/vmcp.yaml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Authoring
	if !a.Enabled || !strings.HasSuffix(a.Dir, "conf/authored") || !slices.Equal(a.Backends, []string{"b"}) {
		t.Errorf("Authoring = %+v; want enabled, dir conf/authored, backends [b]", a)
	}
}

// TestAuthoringLimits: authoring.limits is read, and a bad value is an
// error at its position naming the rule.
func TestAuthoringLimits(t *testing.T) {
	cfg, err := parse("vmcp.yaml", []byte("authoring:\n  enabled: true\n  limits: {workflows: 5, versions: 3, bytes: 4096}\n"), envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if a := cfg.Authoring; a.MaxWorkflows != 5 || a.MaxVersions != 3 || a.MaxBytes != 4096 {
		t.Errorf("authoring.limits = %d, %d, %d; want 5, 3, 4096", a.MaxWorkflows, a.MaxVersions, a.MaxBytes)
	}
	_, err = parse("vmcp.yaml", []byte("authoring:\n  limits: {workflows: 0, bytes: 10, version: 2}\n"), envOf(nil))
	for _, want := range []string{
		"vmcp.yaml:2:23: error: authoring.limits.workflows must be at least 1, not 0",
		"vmcp.yaml:2:33: error: authoring.limits.bytes must be at least 1024, not 10",
		`vmcp.yaml:2:37: error: unknown key "version" in authoring.limits; did you mean versions?`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("errors = %v; want %q", err, want)
		}
	}
}
