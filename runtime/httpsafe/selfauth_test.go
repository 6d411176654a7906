package httpsafe

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestTokenSetMatchesOnlyConfiguredTokens(t *testing.T) {
	s := NewTokenSet([]string{"alpha", "  ", "beta"})
	for tok, want := range map[string]bool{"alpha": true, "beta": true, " beta ": true, "": false, "  ": false, "alph": false, "alphaa": false} {
		if got := s.Match(tok); got != want {
			t.Errorf("Match(%q) = %v; want %v", tok, got, want)
		}
	}
}

// The console at /ui/ checks its own cookie: the bearer check lets it
// through, the Host and Origin checks do not.
func TestSelfAuthenticatedSkipsOnlyTheBearerCheck(t *testing.T) {
	h := Protect(Options{Tokens: []string{"tok"}, SelfAuthenticated: func(r *http.Request) bool {
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
