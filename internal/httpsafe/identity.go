package httpsafe

// Caller identity: who made a request, and which runs it may see.
//
// Every way to a run (the MCP tools and tasks/*, the HTTP API, `vmcp
// runs` over it, the console and its event stream) asks Caller for the
// request's identity and applies the same rule (Identity.Sees): a caller
// sees the runs it owns, a caller with the admin scope sees all, and a
// request that went through no authentication (stdio, or an HTTP listener
// without server.auth.tokens) is the local operator, which has every scope
// and so sees all. Another owner's run is "not found", never "forbidden".
//
// The subject of a static token is its configured name, or, when it has
// none, "token:" and the first 8 hex digits of the token's SHA-256
// (TokenSubject): stable across restarts and not secret. config.Load
// refuses two tokens with the same subject. Other authenticators (OIDC)
// put their subject into the context with WithIdentity in the same way.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// Identity is the caller of a request.
type Identity struct {
	// Subject names the caller and is what a run records as its owner;
	// "" for the local operator (no authentication).
	Subject string
	// Scopes are what the caller may do; every scope for the local
	// operator.
	Scopes []Scope
	// Authenticated is set when the request presented a credential.
	Authenticated bool
}

// LocalOperator is the identity of a request that went through no
// authentication.
var LocalOperator = Identity{Scopes: Scopes}

type identityKey struct{}

// WithIdentity returns ctx carrying the identity of an authenticated
// request.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	id.Authenticated = true
	return context.WithValue(ctx, identityKey{}, id)
}

// Caller returns the identity of the request whose context is ctx:
// LocalOperator when it was not authenticated.
func Caller(ctx context.Context) Identity {
	if id, ok := ctx.Value(identityKey{}).(Identity); ok {
		return id
	}
	return LocalOperator
}

// Allowed reports whether the caller has scope.
func (id Identity) Allowed(scope Scope) bool {
	return !id.Authenticated || slices.Contains(id.Scopes, scope)
}

// SeesAll reports whether the caller sees every owner's runs (admin, or
// the local operator).
func (id Identity) SeesAll() bool { return id.Allowed(ScopeAdmin) }

// Sees reports whether the caller may see (read, answer, cancel) a run
// whose owner is owner.
func (id Identity) Sees(owner string) bool {
	return id.SeesAll() || (id.Subject != "" && owner == id.Subject)
}

// OwnerFilter is the owner to select runs by for the caller ("" for all).
// An authenticated caller without a subject sees nothing: it gets a
// subject no run has.
func (id Identity) OwnerFilter() string {
	switch {
	case id.SeesAll():
		return ""
	case id.Subject == "":
		return "\x00nobody"
	}
	return id.Subject
}

// TokenSubject is the subject of a static token without a name: "token:"
// and the first 8 hex digits of its SHA-256.
func TokenSubject(token string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return "token:" + hex.EncodeToString(sum[:4])
}
