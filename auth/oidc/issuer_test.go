package oidc

// A small OpenID Connect issuer for the unit tests: an HTTP server with
// the discovery document and a JWKS the test can change (rotate), and
// RSA keys to sign tokens with. The e2e tests use a real one (Ory Hydra).

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

type testIssuer struct {
	*httptest.Server
	mu        sync.Mutex
	published []jose.JSONWebKey
	jwksHits  atomic.Int64
	hold      chan struct{} // when set, the JWKS handler waits on it
	entered   chan struct{}
}

type testKey struct {
	kid  string
	priv *rsa.PrivateKey
}

func newKey(t testing.TB, kid string) testKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return testKey{kid: kid, priv: k}
}

func (k testKey) public() jose.JSONWebKey {
	return jose.JSONWebKey{Key: &k.priv.PublicKey, KeyID: k.kid, Algorithm: "RS256", Use: "sig"}
}

func newIssuer(t testing.TB, keys ...testKey) *testIssuer {
	t.Helper()
	iss := &testIssuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": iss.URL, "jwks_uri": iss.URL + "/jwks",
			"authorization_endpoint": iss.URL + "/auth", "token_endpoint": iss.URL + "/token",
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		iss.jwksHits.Add(1)
		iss.mu.Lock()
		hold, entered := iss.hold, iss.entered
		set := jose.JSONWebKeySet{Keys: append([]jose.JSONWebKey(nil), iss.published...)}
		iss.mu.Unlock()
		if hold != nil {
			entered <- struct{}{}
			<-hold
		}
		_ = json.NewEncoder(w).Encode(set)
	})
	iss.Server = httptest.NewServer(mux)
	t.Cleanup(iss.Close)
	iss.publish(keys...)
	return iss
}

// publish replaces the JWKS with the keys' public halves.
func (iss *testIssuer) publish(keys ...testKey) {
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.published = nil
	for _, k := range keys {
		iss.published = append(iss.published, k.public())
	}
}

// sign makes a JWT of claims signed by k, with k's kid (or kid when
// given).
func sign(t testing.TB, k testKey, claims map[string]any, kid ...string) string {
	t.Helper()
	id := k.kid
	if len(kid) > 0 {
		id = kid[0]
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: k.priv, KeyID: id}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// claimsFor are the claims of a good token for the verifier's audience.
func (iss *testIssuer) claimsFor(aud string, now time.Time) map[string]any {
	return map[string]any{
		"iss": iss.URL, "sub": "alice", "aud": []string{aud},
		"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "nbf": now.Unix(),
		"scp": []string{"vmcp:run"},
	}
}

func newTestVerifier(t testing.TB, iss *testIssuer, mod func(*Config)) *Verifier {
	t.Helper()
	cfg := Config{Issuer: iss.URL, Audience: "https://vmcp.test/mcp"}
	if mod != nil {
		mod(&cfg)
	}
	v, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
