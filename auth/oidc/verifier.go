package oidc

// The token check (see doc.go for the rules, in order). go-oidc's
// IDTokenVerifier does the signature (through keySet), iss and aud; its
// expiry check is off, because it allows no leeway on exp and five
// minutes on nbf, and this file checks both with Config.Leeway.

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
)

// The vmcp scopes a token may carry (the names of httpsafe's scopes).
const (
	ScopeRun    = "run"
	ScopeAuthor = "author"
	ScopeAdmin  = "admin"
)

// ScopeMap names the IdP scope that grants each vmcp scope.
type ScopeMap struct {
	Run, Author, Admin string
}

// DefaultScopes are the IdP scope names when the config names none.
var DefaultScopes = ScopeMap{Run: "vmcp:run", Author: "vmcp:author", Admin: "vmcp:admin"}

// Of returns the IdP scope that grants the vmcp scope ("" for none).
func (m ScopeMap) Of(scope string) string {
	switch scope {
	case ScopeRun:
		return m.Run
	case ScopeAuthor:
		return m.Author
	case ScopeAdmin:
		return m.Admin
	}
	return ""
}

// Supported lists the IdP scopes, in vmcp's order (run, author, admin).
func (m ScopeMap) Supported() []string {
	var out []string
	for _, s := range []string{m.Run, m.Author, m.Admin} {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// vmcpScopes maps a token's IdP scopes to vmcp's.
func (m ScopeMap) vmcpScopes(granted []string) []string {
	var out []string
	for _, s := range []string{ScopeRun, ScopeAuthor, ScopeAdmin} {
		if idp := m.Of(s); idp != "" && slices.Contains(granted, idp) {
			out = append(out, s)
		}
	}
	return out
}

// Algorithms is the default allow-list: the asymmetric JWS algorithms.
// HMAC is never allowed (the key would be public), nor is none.
var Algorithms = []string{
	gooidc.RS256, gooidc.RS384, gooidc.RS512,
	gooidc.PS256, gooidc.PS384, gooidc.PS512,
	gooidc.ES256, gooidc.ES384, gooidc.ES512,
	gooidc.EdDSA,
}

// Config is server.auth.oidc.
type Config struct {
	// Issuer is the authorization server's issuer URL; its discovery
	// document is Issuer + "/.well-known/openid-configuration". https,
	// or http on a loopback host.
	Issuer string
	// Audience is vmcp's resource identifier (RFC 8707), usually its
	// public MCP URL: a token's aud must contain it. It is also the
	// resource of the protected resource metadata.
	Audience string
	// Scopes maps vmcp's scopes to the IdP's; zero fields take
	// DefaultScopes'.
	Scopes ScopeMap
	// SubjectClaim is the claim that names the caller ("sub" when empty).
	SubjectClaim string
	// Algorithms is the allow-list (Algorithms when empty); it may not
	// contain none or an HMAC algorithm.
	Algorithms []string
	// Leeway is the clock skew allowed on exp and nbf (60 s when zero).
	Leeway time.Duration
	// MinRefresh is the least time between two JWKS fetches (1 s when
	// zero); MaxAge how long a fetched JWKS is used (1 h when zero).
	MinRefresh, MaxAge time.Duration
	// HTTPClient makes the discovery and JWKS requests (one with a
	// 10 s timeout when nil).
	HTTPClient *http.Client
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Introspection, when set, checks opaque (non-JWT) tokens
	// (introspect.go).
	Introspection *Introspection
}

// Principal is who a valid token authenticates.
type Principal struct {
	// Subject is the subject claim: the owner of the runs it starts.
	Subject string
	// Scopes are the vmcp scopes (ScopeRun, ...) the token grants.
	Scopes []string
	// Expiry is the token's exp.
	Expiry time.Time
}

// InvalidTokenError is why a token was refused; its message says what
// failed and never holds the token.
type InvalidTokenError struct{ Reason string }

func (e *InvalidTokenError) Error() string { return "invalid token: " + e.Reason }

// Verifier checks access tokens of one issuer for one audience.
type Verifier struct {
	cfg      Config
	keys     *keySet
	verifier *gooidc.IDTokenVerifier
	metadata []byte // the RFC 9728 document
	cache    tokenCache
}

// New reads the issuer's discovery document and returns the verifier.
func New(ctx context.Context, cfg Config) (*Verifier, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	dctx := gooidc.ClientContext(ctx, cfg.HTTPClient)
	dctx, cancel := context.WithTimeout(dctx, discoveryTimeout)
	defer cancel()
	p, err := gooidc.NewProvider(dctx, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("server.auth.oidc.issuer %s: discovery: %v", cfg.Issuer, err)
	}
	var disc struct {
		JWKS string `json:"jwks_uri"`
	}
	if err := p.Claims(&disc); err != nil || disc.JWKS == "" {
		return nil, fmt.Errorf("server.auth.oidc.issuer %s: the discovery document has no jwks_uri", cfg.Issuer)
	}
	return newVerifier(cfg, disc.JWKS)
}

// newVerifier builds the verifier for a known JWKS URL; cfg is filled.
func newVerifier(cfg Config, jwksURL string) (*Verifier, error) {
	algs := make([]jose.SignatureAlgorithm, len(cfg.Algorithms))
	for i, a := range cfg.Algorithms {
		algs[i] = jose.SignatureAlgorithm(a)
	}
	ks := &keySet{url: jwksURL, client: cfg.HTTPClient, algs: algs,
		minRefresh: cfg.MinRefresh, maxAge: cfg.MaxAge, now: cfg.Now, sleep: sleepCtx}
	v := &Verifier{cfg: cfg, keys: ks}
	v.verifier = gooidc.NewVerifier(cfg.Issuer, ks, &gooidc.Config{
		ClientID:             cfg.Audience,
		SupportedSigningAlgs: cfg.Algorithms,
		SkipExpiryCheck:      true, // checked with Leeway below
		Now:                  cfg.Now,
	})
	md, err := json.Marshal(Metadata{
		Resource:               cfg.Audience,
		AuthorizationServers:   []string{cfg.Issuer},
		ScopesSupported:        cfg.Scopes.Supported(),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "vmcp",
	})
	if err != nil {
		return nil, err
	}
	v.metadata = md
	return v, nil
}

// fill checks cfg and sets its defaults.
func (c *Config) fill() error {
	if err := checkURL("issuer", c.Issuer); err != nil {
		return err
	}
	if c.Audience == "" {
		return errors.New("server.auth.oidc.audience is required: vmcp's resource identifier, such as https://vmcp.example.com/mcp (a token's aud must contain it)")
	}
	if c.Scopes.Run == "" {
		c.Scopes.Run = DefaultScopes.Run
	}
	if c.Scopes.Author == "" {
		c.Scopes.Author = DefaultScopes.Author
	}
	if c.Scopes.Admin == "" {
		c.Scopes.Admin = DefaultScopes.Admin
	}
	if c.SubjectClaim == "" {
		c.SubjectClaim = "sub"
	}
	if len(c.Algorithms) == 0 {
		c.Algorithms = Algorithms
	}
	for _, a := range c.Algorithms {
		if !slices.Contains(Algorithms, a) {
			return fmt.Errorf("server.auth.oidc.algorithms: %q is not allowed (only the asymmetric %s; never none or HMAC)", a, strings.Join(Algorithms, ", "))
		}
	}
	if c.Leeway == 0 {
		c.Leeway = 60 * time.Second
	}
	if c.MinRefresh == 0 {
		c.MinRefresh = time.Second
	}
	if c.MaxAge == 0 {
		c.MaxAge = time.Hour
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: discoveryTimeout}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Introspection != nil {
		in := *c.Introspection
		if err := checkURL("introspection.url", in.URL); err != nil {
			return err
		}
		if in.CacheTTL == 0 {
			in.CacheTTL = DefaultIntrospectionTTL
		}
		c.Introspection = &in
	}
	return nil
}

// checkURL requires an absolute https URL, or http on a loopback host
// (a local IdP in development and tests).
func checkURL(field, s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("server.auth.oidc.%s must be an absolute https URL, not %q", field, s)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return fmt.Errorf("server.auth.oidc.%s %q: only a loopback issuer may use http; use https", field, s)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// discoveryTimeout bounds reading the discovery document at startup.
const discoveryTimeout = 30 * time.Second

// claims are the fields Verify reads besides go-oidc's.
type claims struct {
	Expiry    *json.Number `json:"exp"`
	NotBefore *json.Number `json:"nbf"`
	Scope     stringList   `json:"scope"`
	Scp       stringList   `json:"scp"`
}

// stringList is a claim that is a space-separated string or a list of
// strings.
type stringList []string

func (l *stringList) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*l = strings.Fields(s)
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New("must be a string or a list of strings")
	}
	*l = list
	return nil
}

// Verify checks the bearer token raw and returns whom it authenticates.
// Any failure is an *InvalidTokenError.
func (v *Verifier) Verify(ctx context.Context, raw string) (Principal, error) {
	key := sha256.Sum256([]byte(raw))
	if v.cfg.Introspection != nil && !isJWS(raw) {
		// An opaque token (introspect.go); its entries have generation 0,
		// which no key set has.
		if p, ok := v.cache.get(key, 0, v.cfg.Now()); ok {
			return p, nil
		}
		p, until, err := v.introspect(ctx, raw)
		if err == nil {
			v.cache.put(key, p, 0, v.cfg.Now(), until)
		}
		return p, err
	}
	gen, fresh := v.keys.generation()
	if fresh {
		if p, ok := v.cache.get(key, gen, v.cfg.Now()); ok {
			return p, nil
		}
	}
	p, err := v.verify(ctx, raw)
	if err == nil {
		// Under the generation read before the check: if a fetch changed
		// the set meanwhile, the entry never matches and the next request
		// checks the token again.
		v.cache.put(key, p, gen, v.cfg.Now(), p.Expiry.Add(v.cfg.Leeway))
	}
	return p, err
}

// verify checks raw from scratch (doc.go has the rules).
func (v *Verifier) verify(ctx context.Context, raw string) (Principal, error) {
	t, err := v.verifier.Verify(ctx, raw)
	if err != nil {
		return Principal{}, &InvalidTokenError{Reason: reason(err)}
	}
	var c claims
	if err := t.Claims(&c); err != nil {
		return Principal{}, &InvalidTokenError{Reason: "claims: " + err.Error()}
	}
	now := v.cfg.Now()
	exp, ok := unixTime(c.Expiry)
	if !ok {
		return Principal{}, &InvalidTokenError{Reason: "the token has no exp"}
	}
	if now.Sub(exp) > v.cfg.Leeway {
		return Principal{}, &InvalidTokenError{Reason: "the token expired at " + exp.UTC().Format(time.RFC3339)}
	}
	if c.NotBefore != nil {
		nbf, ok := unixTime(c.NotBefore)
		if !ok {
			return Principal{}, &InvalidTokenError{Reason: "the token's nbf is not a time"}
		}
		if nbf.Sub(now) > v.cfg.Leeway {
			return Principal{}, &InvalidTokenError{Reason: "the token is not valid before " + nbf.UTC().Format(time.RFC3339)}
		}
	}
	sub := t.Subject
	if v.cfg.SubjectClaim != "sub" {
		var all map[string]any
		_ = t.Claims(&all)
		sub, _ = all[v.cfg.SubjectClaim].(string)
	}
	if strings.TrimSpace(sub) == "" {
		return Principal{}, &InvalidTokenError{Reason: "the token has no " + v.cfg.SubjectClaim + " claim (the subject: server.auth.oidc.subjectClaim)"}
	}
	return Principal{Subject: sub, Scopes: v.cfg.Scopes.vmcpScopes(append(c.Scope, c.Scp...)), Expiry: exp}, nil
}

// unixTime reads a NumericDate.
func unixTime(n *json.Number) (time.Time, bool) {
	if n == nil {
		return time.Time{}, false
	}
	f, err := n.Float64()
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(int64(f), 0), true
}

// reason shortens go-oidc's messages ("oidc: ...") to the part that says
// what failed.
func reason(err error) string {
	return strings.TrimPrefix(err.Error(), "oidc: ")
}

// Scopes is the scope map the verifier uses (defaults filled in).
func (v *Verifier) Scopes() ScopeMap { return v.cfg.Scopes }

// Audience is the resource identifier tokens must be minted for.
func (v *Verifier) Audience() string { return v.cfg.Audience }
