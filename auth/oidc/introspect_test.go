package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// introspector answers RFC 7662 requests from a table of tokens, and
// counts them.
func introspector(t *testing.T, issuer string, answers map[string]map[string]any) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if id, secret, _ := r.BasicAuth(); id != "vmcp" || secret != "intro-secret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_ = r.ParseForm()
		a, ok := answers[r.PostForm.Get("token")]
		if !ok || r.PostForm.Get("token_type_hint") != "access_token" {
			a = map[string]any{"active": false}
		}
		_ = json.NewEncoder(w).Encode(a)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestIntrospection(t *testing.T) {
	iss := newIssuer(t, newKey(t, "k1"))
	exp := time.Now().Add(time.Hour).Unix()
	good := map[string]any{"active": true, "sub": "alice", "aud": []string{aud}, "exp": exp, "scope": "vmcp:run openid", "iss": iss.URL, "token_use": "access_token"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for k, v := range good {
			m[k] = v
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	srv, hits := introspector(t, iss.URL, map[string]map[string]any{
		"ory_at_good.x":   good,
		"ory_at_other.x":  with("aud", []string{"https://other.test/mcp"}),
		"ory_at_exp.x":    with("exp", time.Now().Add(-time.Hour).Unix()),
		"ory_at_noexp.x":  with("exp", nil),
		"ory_at_nosub.x":  with("sub", nil),
		"ory_at_iss.x":    with("iss", "https://evil.test/"),
		"ory_ref_fresh.x": with("token_use", "refresh_token"),
	})
	v := newTestVerifier(t, iss, func(c *Config) {
		c.Introspection = &Introspection{URL: srv.URL, ClientID: "vmcp", ClientSecret: "intro-secret"}
	})
	p, err := v.Verify(context.Background(), "ory_at_good.x")
	if err != nil || p.Subject != "alice" || !slices.Equal(p.Scopes, []string{ScopeRun}) || p.Expiry.Unix() != exp {
		t.Fatalf("Verify(good) = %+v, %v; want alice with run until %d", p, err, exp)
	}
	if _, err := v.Verify(context.Background(), "ory_at_good.x"); err != nil || hits.Load() != 1 {
		t.Errorf("second Verify(good) = %v after %d introspections; want the cached answer (1)", err, hits.Load())
	}
	for tok, want := range map[string]string{
		"ory_at_unknown.x": "the token is not active",
		"ory_at_other.x":   `expected audience "https://vmcp.test/mcp"`,
		"ory_at_exp.x":     "the token expired at",
		"ory_at_noexp.x":   "the token has no exp",
		"ory_at_nosub.x":   "the introspection answer has no sub",
		"ory_at_iss.x":     "issued by a different provider",
		"ory_ref_fresh.x":  "the token is a refresh_token, not an access token",
	} {
		_, err := v.Verify(context.Background(), tok)
		var ite *InvalidTokenError
		if err == nil || !strings.Contains(err.Error(), want) || !errors.As(err, &ite) {
			t.Errorf("Verify(%s) = %v; want an *InvalidTokenError saying %q", tok, err, want)
		}
		if err != nil && strings.Contains(err.Error(), tok) {
			t.Errorf("the error %q holds the token", err)
		}
	}
	// A refusal is not cached.
	before := hits.Load()
	v.Verify(context.Background(), "ory_at_other.x")
	if hits.Load() != before+1 {
		t.Error("a refused token's answer was cached")
	}
}

// TestIntrospectionAnswersExpire: an answer is used for CacheTTL, then
// asked again.
func TestIntrospectionAnswersExpire(t *testing.T) {
	iss := newIssuer(t, newKey(t, "k1"))
	now := time.Now()
	srv, hits := introspector(t, iss.URL, map[string]map[string]any{
		"opaque": {"active": true, "sub": "alice", "aud": aud, "exp": now.Add(time.Hour).Unix()},
	})
	v := newTestVerifier(t, iss, func(c *Config) {
		c.Introspection = &Introspection{URL: srv.URL, ClientID: "vmcp", ClientSecret: "intro-secret", CacheTTL: 10 * time.Second}
		c.Now = func() time.Time { return now }
	})
	for _, step := range []time.Duration{0, 9 * time.Second, 2 * time.Second} {
		now = now.Add(step)
		if _, err := v.Verify(context.Background(), "opaque"); err != nil {
			t.Fatal(err)
		}
	}
	if hits.Load() != 2 {
		t.Errorf("%d introspections at 0 s, 9 s and 11 s with a 10 s cache; want 2", hits.Load())
	}
}
