package mediator

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/vmcp-dev/vmcp/auth/oidc"
	"github.com/vmcp-dev/vmcp/internal/httpsafe"
)

// BenchmarkPartTokenCheck is the cost of authenticating one request: the
// listener's Authenticator with a static token (SHA-256 and constant-time
// compares), and with an OAuth access token (server.auth.oidc), RS256
// with a 2048-bit key (what Hydra and most IdPs sign with) and ES256:
// "-new" is a token not seen before (parse, one signature check against
// the cached JWKS, the claims), the other an MCP client's next request
// with the same token (the verified-token cache). The JWKS is fetched
// once, before the timing. "opaque-introspected" is an opaque token
// (server.auth.oidc.introspection, RFC 7662) whose answer is cached: the
// introspection request itself (a round trip to the IdP) is made once.
func BenchmarkPartTokenCheck(b *testing.B) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	keys := []jose.JSONWebKey{
		{Key: &rsaKey.PublicKey, KeyID: "rsa", Algorithm: "RS256", Use: "sig"},
		{Key: &ecKey.PublicKey, KeyID: "ec", Algorithm: "ES256", Use: "sig"},
	}
	var issuer string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			_ = json.NewEncoder(w).Encode(map[string]any{"issuer": issuer, "jwks_uri": issuer + "/jwks",
				"authorization_endpoint": issuer + "/auth", "token_endpoint": issuer + "/token"})
		case "/jwks":
			_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: keys})
		case "/introspect": // RFC 7662, for the opaque token
			_ = json.NewEncoder(w).Encode(map[string]any{"active": true, "sub": "alice", "aud": []string{"https://vmcp.bench/mcp"},
				"exp": time.Now().Add(24 * time.Hour).Unix(), "scope": "vmcp:run", "iss": issuer})
		}
	}))
	defer srv.Close()
	issuer = srv.URL
	const aud = "https://vmcp.bench/mcp"
	v, err := oidc.New(context.Background(), oidc.Config{Issuer: issuer, Audience: aud,
		Introspection: &oidc.Introspection{URL: issuer + "/introspect", CacheTTL: time.Hour}})
	if err != nil {
		b.Fatal(err)
	}
	static := make([]httpsafe.Token, 10)
	for i := range static {
		static[i] = httpsafe.Token{Value: "static-token-" + string(rune('a'+i)), Scopes: httpsafe.Scopes, Name: "t" + string(rune('a'+i))}
	}
	a := httpsafe.NewAuthenticator(static, v.Bearer())
	now := time.Now()
	sign := func(alg jose.SignatureAlgorithm, key crypto.Signer, kid string, jti ...int) string {
		c := map[string]any{"iss": issuer, "sub": "alice", "aud": []string{aud},
			"iat": now.Unix(), "exp": now.Add(24 * time.Hour).Unix(), "scp": []string{"vmcp:run"}}
		if len(jti) > 0 {
			c["jti"] = jti[0]
		}
		claims, _ := json.Marshal(c)
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		jws, _ := s.Sign(claims)
		out, _ := jws.CompactSerialize()
		return out
	}
	for _, tc := range []struct{ name, token, subject string }{
		{"static", "static-token-j", "tj"}, // the last of ten: every one is compared anyway
		{"jwt-RS256", sign(jose.RS256, rsaKey, "rsa"), "alice"},
		{"jwt-ES256", sign(jose.ES256, ecKey, "ec"), "alice"},
		{"opaque-introspected", "ory_at_opaque-token.signature", "alice"}, // the answer cached after the first
	} {
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			p50(b, func(int) {
				id, err := a.Authenticate(ctx, tc.token)
				if err != nil || id.Subject != tc.subject {
					b.Fatalf("Authenticate = %+v, %v", id, err)
				}
			})
		})
	}
	for _, tc := range []struct {
		name string
		alg  jose.SignatureAlgorithm
		key  crypto.Signer
		kid  string
	}{{"jwt-RS256-new", jose.RS256, rsaKey, "rsa"}, {"jwt-ES256-new", jose.ES256, ecKey, "ec"}} {
		b.Run(tc.name, func(b *testing.B) {
			// p50 runs 50 warm-up operations (i < 0), then b.N.
			toks := make([]string, b.N+50)
			for i := range toks {
				toks[i] = sign(tc.alg, tc.key, tc.kid, i)
			}
			ctx := context.Background()
			b.ResetTimer()
			p50(b, func(i int) {
				if i < 0 {
					i = b.N - 1 - i
				}
				if _, err := a.Authenticate(ctx, toks[i]); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
