package httpsafe

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeBearer accepts "jwt-ok" as alice with the run scope.
type fakeBearer struct{}

func (fakeBearer) Verify(_ context.Context, token string) (Identity, error) {
	if token == "jwt-ok" {
		return Identity{Subject: "alice", Scopes: []Scope{ScopeRun}}, nil
	}
	return Identity{}, errors.New(`invalid token: the token "expired"`)
}

func (fakeBearer) Challenge(_ *http.Request, errCode, description string) string {
	return "Bearer resource_metadata=\"m\" code=" + errCode + " desc=" + description
}

func (fakeBearer) ScopeChallenge(_ *http.Request, scope Scope) string {
	return `Bearer error="insufficient_scope", scope="idp:` + string(scope) + `"`
}

// TestBearer: a token that is no static token goes to the Bearer; its
// identity reaches the handler; refusals get the Bearer's challenge; the
// public handlers need no token; a missing scope gets the Bearer's
// insufficient_scope challenge.
func TestBearer(t *testing.T) {
	var got Identity
	h := Protect(Options{
		Tokens: []Token{{Value: "static", Scopes: Scopes, Name: "ops"}},
		Bearer: fakeBearer{},
		Public: map[string]http.Handler{"/.well-known/oauth-protected-resource": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte("metadata"))
		})},
	}, RequireScope(ScopeRun, "reading", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = Caller(r.Context())
		if r.URL.Path == "/admin" && !Allowed(r.Context(), ScopeAdmin) {
			Forbidden(w, r, ScopeAdmin, "cancelling")
		}
	})))
	for _, tc := range []struct {
		name, path, auth string
		code             int
		challenge, who   string
	}{
		{"static token", "/api", "Bearer static", 200, "", "ops"},
		{"jwt", "/api", "Bearer jwt-ok", 200, "", "alice"},
		{"no token", "/api", "", 401, `Bearer resource_metadata="m" code= desc=`, ""},
		{"bad jwt", "/api", "Bearer jwt-bad", 401, `Bearer resource_metadata="m" code=invalid_token desc=invalid token: the token "expired"`, ""},
		{"metadata is public", "/.well-known/oauth-protected-resource", "", 200, "", ""},
		{"missing scope", "/admin", "Bearer jwt-ok", 403, `Bearer error="insufficient_scope", scope="idp:admin"`, "alice"},
	} {
		got = Identity{}
		req := httptest.NewRequest("GET", "http://localhost"+tc.path, nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.code || rec.Header().Get("WWW-Authenticate") != tc.challenge || got.Subject != tc.who {
			t.Errorf("%s: %d %q, caller %q; want %d %q, %q", tc.name, rec.Code, rec.Header().Get("WWW-Authenticate"), got.Subject, tc.code, tc.challenge, tc.who)
		}
	}
}

// TestStaticScopeChallenge: without a Bearer, a 403 names vmcp's scope.
func TestStaticScopeChallenge(t *testing.T) {
	h := Protect(Options{Tokens: []Token{{Value: "r", Scopes: []Scope{ScopeRun}}}}, RequireScope(ScopeAdmin, "re-running", http.NotFoundHandler()))
	req := httptest.NewRequest("POST", "http://localhost/api/v1/runs/x/rerun", nil)
	req.Header.Set("Authorization", "Bearer r")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if want := `Bearer realm="vmcp", error="insufficient_scope", scope="admin"`; rec.Code != 403 || rec.Header().Get("WWW-Authenticate") != want {
		t.Errorf("403 = %d %q; want %q", rec.Code, rec.Header().Get("WWW-Authenticate"), want)
	}
}

// TestOAuthSubjectCannotBeAStaticTokensName: an OAuth token whose subject
// is a static token's name would be that token's owner, seeing and
// cancelling its runs: it is refused (401 invalid_token), while the
// static token and other subjects go on. The subject token reaches the
// handler only for OAuth tokens.
func TestOAuthSubjectCannotBeAStaticTokensName(t *testing.T) {
	var got Identity
	var subjectToken string
	h := Protect(Options{
		Tokens: []Token{{Value: "static-alice", Scopes: Scopes, Name: "alice"}, {Value: "static-ops", Scopes: Scopes, Name: "ops"}},
		Bearer: fakeBearer{}, // jwt-ok is alice
	}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, subjectToken = Caller(r.Context()), SubjectToken(r.Context())
	}))
	serve := func(auth string) *httptest.ResponseRecorder {
		got, subjectToken = Identity{}, ""
		req := httptest.NewRequest("GET", "http://localhost/api", nil)
		req.Header.Set("Authorization", auth)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	rec := serve("Bearer jwt-ok")
	if ch := rec.Header().Get("WWW-Authenticate"); rec.Code != 401 || got.Subject != "" ||
		!strings.Contains(ch, `its subject "alice" is the name of a static token (server.auth.tokens)`) {
		t.Errorf("an OAuth token with subject alice beside a static token named alice = %d %q (caller %q); want 401 naming the clash", rec.Code, ch, got.Subject)
	}
	if rec := serve("Bearer static-alice"); rec.Code != 200 || got.Subject != "alice" || subjectToken != "" {
		t.Errorf("the static token = %d, caller %q, subject token %q; want 200 as alice, no subject token", rec.Code, got.Subject, subjectToken)
	}

	h = Protect(Options{Tokens: []Token{{Value: "static-ops", Scopes: Scopes, Name: "ops"}}, Bearer: fakeBearer{}},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got, subjectToken = Caller(r.Context()), SubjectToken(r.Context())
		}))
	if rec := serve("Bearer jwt-ok"); rec.Code != 200 || got.Subject != "alice" || subjectToken != "jwt-ok" {
		t.Errorf("an OAuth token without a clash = %d, caller %q, subject token %q; want 200 as alice with its token", rec.Code, got.Subject, subjectToken)
	}
}
