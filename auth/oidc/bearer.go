package oidc

// The verifier as the HTTP listener's Bearer (internal/httpsafe): a valid
// token becomes an httpsafe.Identity whose subject owns the runs it starts
// and whose scopes are vmcp's, valid until the token's exp.

import (
	"context"
	"net/http"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
)

// Bearer returns the verifier as httpsafe's Bearer.
func (v *Verifier) Bearer() httpsafe.Bearer { return bearer{v} }

// Public are the metadata handlers by path, for httpsafe.Options.Public.
func (v *Verifier) Public() map[string]http.Handler {
	h := v.MetadataHandler()
	out := map[string]http.Handler{}
	for _, p := range v.MetadataPaths() {
		out[p] = h
	}
	return out
}

type bearer struct{ v *Verifier }

func (b bearer) Verify(ctx context.Context, token string) (httpsafe.Identity, error) {
	p, err := b.v.Verify(ctx, token)
	if err != nil {
		return httpsafe.Identity{}, err
	}
	id := httpsafe.Identity{Subject: p.Subject, Authenticated: true, Expires: p.Expiry}
	for _, s := range p.Scopes {
		id.Scopes = append(id.Scopes, httpsafe.Scope(s))
	}
	return id, nil
}

func (b bearer) Challenge(r *http.Request, errCode, description string) string {
	return b.v.Challenge(r, errCode, description)
}

func (b bearer) ScopeChallenge(r *http.Request, scope httpsafe.Scope) string {
	return b.v.ScopeChallenge(r, string(scope))
}
