package httpsafe

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
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
