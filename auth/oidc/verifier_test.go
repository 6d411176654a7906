package oidc

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

const aud = "https://vmcp.test/mcp"

func TestVerifyAcceptsAGoodToken(t *testing.T) {
	k := newKey(t, "k1")
	iss := newIssuer(t, k)
	v := newTestVerifier(t, iss, nil)
	now := time.Now()
	c := iss.claimsFor(aud, now)
	c["scp"] = []string{"vmcp:run", "openid", "vmcp:admin"}
	p, err := v.Verify(context.Background(), sign(t, k, c))
	if err != nil {
		t.Fatal(err)
	}
	if p.Subject != "alice" || !slices.Equal(p.Scopes, []string{ScopeRun, ScopeAdmin}) {
		t.Errorf("Verify = %+v; want subject alice, scopes [run admin]", p)
	}
	if p.Expiry.Unix() != now.Add(time.Hour).Unix() {
		t.Errorf("Expiry = %v; want %v", p.Expiry, now.Add(time.Hour))
	}
}

func TestVerifyReadsScopeStringsAndMapsScopes(t *testing.T) {
	k := newKey(t, "k1")
	iss := newIssuer(t, k)
	v := newTestVerifier(t, iss, func(c *Config) {
		c.Scopes = ScopeMap{Run: "mcp.use", Author: "mcp.write"}
		c.SubjectClaim = "email"
	})
	c := iss.claimsFor(aud, time.Now())
	delete(c, "scp")
	c["scope"] = "openid mcp.write mcp.use vmcp:admin"
	c["email"] = "alice@example.com"
	p, err := v.Verify(context.Background(), sign(t, k, c))
	if err != nil {
		t.Fatal(err)
	}
	// vmcp:admin is the default admin scope, which this config keeps.
	if p.Subject != "alice@example.com" || !slices.Equal(p.Scopes, []string{ScopeRun, ScopeAuthor, ScopeAdmin}) {
		t.Errorf("Verify = %+v; want subject alice@example.com, scopes [run author admin]", p)
	}
	delete(c, "email")
	if _, err := v.Verify(context.Background(), sign(t, k, c)); err == nil || !strings.Contains(err.Error(), "no email claim") {
		t.Errorf("Verify without the subject claim = %v; want an error naming it", err)
	}
}

// TestVerifyRefuses is the attack table: each token is refused, with a
// reason that says why.
func TestVerifyRefuses(t *testing.T) {
	k, other := newKey(t, "k1"), newKey(t, "k2")
	iss := newIssuer(t, k)
	v := newTestVerifier(t, iss, nil)
	now := time.Now()
	with := func(mod func(map[string]any)) map[string]any {
		c := iss.claimsFor(aud, now)
		mod(c)
		return c
	}
	good := sign(t, k, iss.claimsFor(aud, now))
	parts := strings.Split(good, ".")
	b64 := base64.RawURLEncoding.EncodeToString
	pubDER, _ := x509.MarshalPKIXPublicKey(&k.priv.PublicKey)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	hmacWith := func(key []byte) string {
		h := b64([]byte(`{"alg":"HS256","kid":"k1","typ":"JWT"}`))
		m := hmac.New(sha256.New, key)
		m.Write([]byte(h + "." + parts[1]))
		return h + "." + parts[1] + "." + b64(m.Sum(nil))
	}
	for _, tc := range []struct {
		name, token, reason string
	}{
		{"another audience", sign(t, k, with(func(c map[string]any) { c["aud"] = []string{"https://other.test/mcp"} })), "audience"},
		{"no audience", sign(t, k, with(func(c map[string]any) { delete(c, "aud") })), "audience"},
		{"another issuer", sign(t, k, with(func(c map[string]any) { c["iss"] = "https://evil.test" })), "different provider"},
		{"expired beyond the leeway", sign(t, k, with(func(c map[string]any) { c["exp"] = now.Add(-61 * time.Second).Unix() })), "expired"},
		{"no exp", sign(t, k, with(func(c map[string]any) { delete(c, "exp") })), "no exp"},
		{"not yet valid", sign(t, k, with(func(c map[string]any) { c["nbf"] = now.Add(2 * time.Minute).Unix() })), "not valid before"},
		{"no subject", sign(t, k, with(func(c map[string]any) { delete(c, "sub") })), "no sub claim"},
		{"alg none", b64([]byte(`{"alg":"none","kid":"k1"}`)) + "." + parts[1] + ".", "malformed"},
		{"HS256 keyed with the public key (PEM)", hmacWith(pubPEM), "malformed"},
		{"HS256 keyed with the public key (DER)", hmacWith(pubDER), "malformed"},
		{"signed by an unknown key", sign(t, other, iss.claimsFor(aud, now)), `key id "k2"`},
		{"the known key's id, signed by another key", sign(t, other, iss.claimsFor(aud, now), "k1"), `key id "k1"`},
		{"no key id, signed by another key", sign(t, other, iss.claimsFor(aud, now), ""), "no key of the issuer's JWKS verifies"},
		{"a tampered payload", parts[0] + "." + b64([]byte(`{"iss":"`+iss.URL+`","sub":"root","aud":["`+aud+`"],"exp":9999999999,"scp":["vmcp:admin"]}`)) + "." + parts[2], "verify signature"},
		{"not a JWT", "opaque-token-value", "malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := v.Verify(context.Background(), tc.token)
			var ite *InvalidTokenError
			if !errors.As(err, &ite) {
				t.Fatalf("Verify = %+v, %v; want an *InvalidTokenError", p, err)
			}
			if !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("Verify error = %q; want it to say %q", err, tc.reason)
			}
		})
	}
}

func TestVerifyAllowsTheLeeway(t *testing.T) {
	k := newKey(t, "k1")
	iss := newIssuer(t, k)
	v := newTestVerifier(t, iss, nil)
	now := time.Now()
	c := iss.claimsFor(aud, now)
	c["exp"] = now.Add(-50 * time.Second).Unix()
	c["nbf"] = now.Add(50 * time.Second).Unix()
	if _, err := v.Verify(context.Background(), sign(t, k, c)); err != nil {
		t.Errorf("Verify of a token 50 s past exp and 50 s before nbf = %v; want it accepted (60 s leeway)", err)
	}
}

func TestConfigRefusesUnsafeSettings(t *testing.T) {
	iss := newIssuer(t, newKey(t, "k1"))
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"HMAC allowed", Config{Issuer: iss.URL, Audience: aud, Algorithms: []string{"HS256"}}, `"HS256" is not allowed`},
		{"none allowed", Config{Issuer: iss.URL, Audience: aud, Algorithms: []string{"none"}}, `"none" is not allowed`},
		{"no audience", Config{Issuer: iss.URL}, "audience is required"},
		{"http issuer off loopback", Config{Issuer: "http://idp.example.com", Audience: aud}, "only a loopback issuer may use http"},
		{"relative issuer", Config{Issuer: "idp", Audience: aud}, "absolute https URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(context.Background(), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v; want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestRotation: a key the issuer publishes after vmcp cached its JWKS
// verifies without a restart, one fetch later; tokens of a known key
// cost no fetch.
func TestRotation(t *testing.T) {
	k1, k2 := newKey(t, "k1"), newKey(t, "k2")
	iss := newIssuer(t, k1)
	v := newTestVerifier(t, iss, func(c *Config) { c.MinRefresh = time.Nanosecond })
	ctx := context.Background()
	now := time.Now()
	for range 3 {
		if _, err := v.Verify(ctx, sign(t, k1, iss.claimsFor(aud, now))); err != nil {
			t.Fatal(err)
		}
	}
	if n := iss.jwksHits.Load(); n != 1 {
		t.Errorf("JWKS fetched %d times for three tokens of one key; want 1", n)
	}
	iss.publish(k1, k2)
	if _, err := v.Verify(ctx, sign(t, k2, iss.claimsFor(aud, now))); err != nil {
		t.Fatalf("a token of the rotated-in key: %v", err)
	}
	if n := iss.jwksHits.Load(); n != 2 {
		t.Errorf("JWKS fetched %d times after the rotation; want 2", n)
	}
	// The issuer withdraws k1; once the cache is refetched (an unknown
	// key id makes it), k1's tokens stop working.
	iss.publish(k2)
	if _, err := v.Verify(ctx, sign(t, newKey(t, "k3"), iss.claimsFor(aud, now))); err == nil {
		t.Fatal("a token of an unknown key was accepted")
	}
	if _, err := v.Verify(ctx, sign(t, k1, iss.claimsFor(aud, now))); err == nil {
		t.Error("a token of a withdrawn key was accepted after the JWKS was refetched")
	}
}

// TestMaxAge: a cached JWKS older than MaxAge is fetched again before it
// is used.
func TestMaxAge(t *testing.T) {
	k1 := newKey(t, "k1")
	iss := newIssuer(t, k1)
	clock := time.Now()
	v := newTestVerifier(t, iss, func(c *Config) {
		c.MaxAge = time.Hour
		c.Leeway = 1000 * time.Hour
		c.Now = func() time.Time { return clock }
	})
	tok := sign(t, k1, iss.claimsFor(aud, clock))
	for _, step := range []time.Duration{0, 30 * time.Minute, 31 * time.Minute} {
		clock = clock.Add(step)
		if _, err := v.Verify(context.Background(), tok); err != nil {
			t.Fatal(err)
		}
	}
	if n := iss.jwksHits.Load(); n != 2 {
		t.Errorf("JWKS fetched %d times over 61 minutes with MaxAge 1h; want 2", n)
	}
}

// TestForgedKeyIDsAreRateLimited: tokens with made-up key ids start at
// most one JWKS fetch per MinRefresh; each waits for its slot instead of
// failing early (the clock and the waits are the test's).
func TestForgedKeyIDsAreRateLimited(t *testing.T) {
	k1 := newKey(t, "k1")
	iss := newIssuer(t, k1)
	clock := time.Now()
	var waits []time.Duration
	v := newTestVerifier(t, iss, func(c *Config) {
		c.MinRefresh = 10 * time.Second
		c.Now = func() time.Time { return clock }
	})
	v.keys.sleep = func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		clock = clock.Add(d)
		return nil
	}
	forger := newKey(t, "x")
	for i := range 5 {
		tok := sign(t, forger, iss.claimsFor(aud, clock), "forged-"+string(rune('a'+i)))
		if _, err := v.Verify(context.Background(), tok); err == nil {
			t.Fatal("a forged token was accepted")
		}
	}
	// The first token fetches the set (nothing is cached) and then waits
	// for the next slot; each later one waits for its slot.
	if n := iss.jwksHits.Load(); n != 6 {
		t.Errorf("JWKS fetched %d times for 5 forged tokens; want 6 (the first fetch and one per slot)", n)
	}
	if len(waits) != 5 || slices.ContainsFunc(waits, func(d time.Duration) bool { return d != 10*time.Second }) {
		t.Errorf("waits = %v; want five of 10s", waits)
	}
}

// TestConcurrentUnknownKeysShareOneFetch: callers that need a fetch while
// one is under way wait for it and use its answer.
func TestConcurrentUnknownKeysShareOneFetch(t *testing.T) {
	k1, k2 := newKey(t, "k1"), newKey(t, "k2")
	iss := newIssuer(t, k1)
	v := newTestVerifier(t, iss, func(c *Config) { c.MinRefresh = time.Nanosecond })
	now := time.Now()
	if _, err := v.Verify(context.Background(), sign(t, k1, iss.claimsFor(aud, now))); err != nil {
		t.Fatal(err)
	}
	iss.mu.Lock()
	iss.hold, iss.entered = make(chan struct{}), make(chan struct{}, 1)
	iss.mu.Unlock()
	iss.publish(k1, k2)
	tok := sign(t, k2, iss.claimsFor(aud, now))
	const n = 8
	errs := make(chan error, n)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _, err := v.Verify(context.Background(), tok); errs <- err }()
	<-iss.entered // the first caller's fetch is under way
	for range n - 1 {
		wg.Add(1)
		go func() { defer wg.Done(); _, err := v.Verify(context.Background(), tok); errs <- err }()
	}
	for {
		v.keys.mu.Lock()
		w := v.keys.waiting
		v.keys.mu.Unlock()
		if w == n-1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(iss.hold)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := iss.jwksHits.Load(); got != 2 {
		t.Errorf("JWKS fetched %d times; want 2 (the first, and one shared by %d callers)", got, n)
	}
}

func TestJWKSSkipsKeysItCannotRead(t *testing.T) {
	k1 := newKey(t, "k1")
	pub, _ := json.Marshal(k1.public())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"keys":[{"kty":"future","kid":"f"},`+string(pub)+`]}`)
	}))
	defer srv.Close()
	ks := &keySet{url: srv.URL, client: srv.Client(), algs: []jose.SignatureAlgorithm{jose.RS256},
		minRefresh: time.Second, maxAge: time.Hour, now: time.Now, sleep: sleepCtx}
	keys, _, err := ks.fetch(context.Background())
	if err != nil || len(keys) != 1 || keys[0].KeyID != "k1" {
		t.Errorf("fetch = %v, %v; want k1 alone", keys, err)
	}
}

func TestMetadataAndChallenges(t *testing.T) {
	iss := newIssuer(t, newKey(t, "k1"))
	v := newTestVerifier(t, iss, nil)
	if got := v.MetadataPaths(); !slices.Equal(got, []string{WellKnown, WellKnown + "/mcp"}) {
		t.Errorf("MetadataPaths = %v", got)
	}
	rec := httptest.NewRecorder()
	v.MetadataHandler().ServeHTTP(rec, httptest.NewRequest("GET", WellKnown+"/mcp", nil))
	var md Metadata
	if err := json.Unmarshal(rec.Body.Bytes(), &md); err != nil {
		t.Fatal(err)
	}
	want := Metadata{Resource: aud, AuthorizationServers: []string{iss.URL},
		ScopesSupported: []string{"vmcp:run", "vmcp:author", "vmcp:admin"}, BearerMethodsSupported: []string{"header"}, ResourceName: "vmcp"}
	if !jsonEqual(md, want) {
		t.Errorf("metadata = %+v; want %+v", md, want)
	}
	r := httptest.NewRequest("POST", "/mcp", nil)
	if got, want := v.Challenge(r, "", ""), `Bearer resource_metadata="https://vmcp.test/.well-known/oauth-protected-resource/mcp"`; got != want {
		t.Errorf("Challenge = %s; want %s", got, want)
	}
	if got, want := v.Challenge(r, "invalid_token", `the token "expired"`), `Bearer resource_metadata="https://vmcp.test/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="the token 'expired'"`; got != want {
		t.Errorf("Challenge = %s; want %s", got, want)
	}
	if got, want := v.ScopeChallenge(r, ScopeAuthor), `Bearer resource_metadata="https://vmcp.test/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="vmcp:author"`; got != want {
		t.Errorf("ScopeChallenge = %s; want %s", got, want)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestCachedTokensExpire: a verified token is remembered (no second
// signature check, no JWKS fetch) but never beyond its exp plus the
// leeway.
func TestCachedTokensExpire(t *testing.T) {
	k := newKey(t, "k1")
	iss := newIssuer(t, k)
	clock := time.Now()
	v := newTestVerifier(t, iss, func(c *Config) { c.Now = func() time.Time { return clock } })
	tok := sign(t, k, iss.claimsFor(aud, clock)) // exp: clock + 1h
	for range 3 {
		if _, err := v.Verify(context.Background(), tok); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(v.cache.m); n != 1 {
		t.Errorf("cache holds %d tokens; want 1", n)
	}
	clock = clock.Add(time.Hour + 59*time.Second)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Errorf("a cached token 59 s past exp: %v; want it accepted (60 s leeway)", err)
	}
	clock = clock.Add(2 * time.Second)
	if _, err := v.Verify(context.Background(), tok); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("a cached token 61 s past exp: %v; want it refused as expired", err)
	}
}
