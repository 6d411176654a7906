package httpsafe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestTokenSetMatchesOnlyConfiguredTokens(t *testing.T) {
	s := NewTokenSet([]Token{{Value: "alpha", Scopes: []Scope{ScopeRun}}, {Value: "  "}, {Value: "beta", Scopes: Scopes}})
	for tok, want := range map[string]int{"alpha": 1, "beta": 3, " beta ": 3, "": -1, "  ": -1, "alph": -1, "alphaa": -1} {
		id, ok := s.Lookup(tok)
		scopes := id.Scopes
		if got := len(scopes); !ok {
			got = -1
		} else if got != want {
			t.Errorf("Lookup(%q) = %v; want %d scopes", tok, scopes, want)
		}
		if ok != (want > 0) {
			t.Errorf("Lookup(%q) found = %v", tok, ok)
		}
	}
}

// The console at /ui/ checks its own cookie: the bearer check lets it
// through, the Host and Origin checks do not.
func TestSelfAuthenticatedSkipsOnlyTheBearerCheck(t *testing.T) {
	h := Protect(Options{Tokens: AllScopes("tok"), SelfAuthenticated: func(r *http.Request) bool {
		return strings.HasPrefix(r.URL.Path, "/ui/")
	}}, echo)
	tests := []struct {
		name, host, path, origin string
		want                     int
	}{
		{"console without a bearer", "127.0.0.1:8080", "/ui/runs", "", 200},
		{"API without a bearer", "127.0.0.1:8080", "/api/v1/runs", "", 401},
		{"console from a rebound name", "attacker.example", "/ui/runs", "", 403},
		{"console from another site", "127.0.0.1:8080", "/ui/runs", "https://attacker.example", 403},
	}
	for _, tt := range tests {
		req := httptest.NewRequest("GET", "http://"+tt.host+tt.path, nil)
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("%s: %d; want %d", tt.name, rec.Code, tt.want)
		}
	}
}

// TestTokenIdentity: a token's subject is its name, or "token:" and 8 hex
// digits of its SHA-256 (sha256("alpha") starts 8ed3f6ad); the bearer
// check puts the identity into the request's context.
func TestTokenIdentity(t *testing.T) {
	s := NewTokenSet([]Token{{Value: "alpha", Scopes: []Scope{ScopeRun}}, {Value: "beta", Scopes: Scopes, Name: "ci-bot"}})
	for tok, want := range map[string]string{"alpha": "token:8ed3f6ad", "beta": "ci-bot"} {
		if id, ok := s.Lookup(tok); !ok || id.Subject != want || !id.Authenticated {
			t.Errorf("Lookup(%q) = %+v, %v; want subject %s", tok, id, ok, want)
		}
	}
	var got Identity
	h := Auth([]Token{{Value: "alpha", Scopes: []Scope{ScopeRun}}}, nil, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got = Caller(r.Context())
	}))
	req := httptest.NewRequest("GET", "/api/v1/runs", nil)
	req.Header.Set("Authorization", "Bearer alpha")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if got.Subject != "token:8ed3f6ad" || got.SeesAll() || !got.Sees("token:8ed3f6ad") || got.Sees("") {
		t.Errorf("Caller = %+v; want token:8ed3f6ad, seeing its own runs only", got)
	}
	if local := Caller(context.Background()); !local.SeesAll() || local.Subject != "" {
		t.Errorf("Caller without authentication = %+v; want the local operator, who sees all", local)
	}
}
