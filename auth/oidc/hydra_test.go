package oidc

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// TestHydraTokens checks the verifier against a real authorization
// server: Hydra's discovery, its JWT access tokens (scopes in scp), a
// token Hydra minted for another resource, and a key Hydra rotates in
// after the JWKS was cached.
func TestHydraTokens(t *testing.T) {
	h := testenv.StartHydra(t, 17200, 17299)
	const me, other = "https://vmcp.test/mcp", "https://other.test/mcp"
	h.CreateClient(t, testenv.HydraClient{ID: "alice", Secret: "alice-secret-0123456789",
		Scopes: []string{"vmcp:run", "vmcp:author"}, Audience: []string{me, other}})
	v, err := New(context.Background(), Config{Issuer: h.Issuer, Audience: me})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := v.Verify(ctx, h.Token(t, "alice", "alice-secret-0123456789", "vmcp:run vmcp:author", me))
	if err != nil {
		t.Fatal(err)
	}
	if p.Subject != "alice" || !slices.Equal(p.Scopes, []string{ScopeRun, ScopeAuthor}) {
		t.Errorf("Verify = %+v; want alice with run and author", p)
	}
	var ite *InvalidTokenError
	if _, err := v.Verify(ctx, h.Token(t, "alice", "alice-secret-0123456789", "vmcp:run", other)); !errors.As(err, &ite) {
		t.Errorf("a token for %s: %v; want it refused", other, err)
	}
	h.RotateKey(t, "rotated-in")
	if _, err := v.Verify(ctx, h.Token(t, "alice", "alice-secret-0123456789", "vmcp:run", me)); err != nil {
		t.Errorf("a token of the rotated-in key: %v", err)
	}
}
