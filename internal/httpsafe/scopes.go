package httpsafe

// Token scopes. A configured token carries the scopes it grants: run
// (call workflow tools, read runs), author (save and delete workflows,
// check and run drafts) and admin (cancel any run). Auth puts the scopes
// of the token a request presented into the request's context; handlers
// ask Allowed. A request that went through no authentication (no tokens
// configured: a loopback listener or stdio) has every scope.

import (
	"context"
	"encoding/json"
	"net/http"
)

// Scope is one permission a token grants.
type Scope string

// The scopes, in the order they are listed.
const (
	ScopeRun    Scope = "run"
	ScopeAuthor Scope = "author"
	ScopeAdmin  Scope = "admin"
)

// Scopes lists every scope.
var Scopes = []Scope{ScopeRun, ScopeAuthor, ScopeAdmin}

// Token is a bearer token, the scopes it grants and its name, the
// subject that owns the runs it starts ("" for TokenSubject's).
type Token struct {
	Value  string
	Scopes []Scope
	Name   string
}

// Subject is the identity the token authenticates (identity.go).
func (t Token) Subject() string {
	if t.Name != "" {
		return t.Name
	}
	return TokenSubject(t.Value)
}

// AllScopes returns tokens that grant every scope (a token written as a
// plain string in server.auth.tokens).
func AllScopes(values ...string) []Token {
	out := make([]Token, len(values))
	for i, v := range values {
		out[i] = Token{Value: v, Scopes: Scopes}
	}
	return out
}

// Allowed reports whether the request whose context is ctx may do what
// needs scope: always when it was not authenticated with a token.
func Allowed(ctx context.Context, scope Scope) bool {
	return Caller(ctx).Allowed(scope)
}

// Forbidden answers 403 with a JSON body naming the missing scope:
// {"error": "...", "missingScope": "author"}.
func Forbidden(w http.ResponseWriter, scope Scope, what string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusForbidden)
	body, _ := json.Marshal(map[string]string{
		"error":        ForbiddenMessage(scope, what),
		"missingScope": string(scope),
	})
	_, _ = w.Write(append(body, '\n'))
}

// ForbiddenMessage says that what needs scope, which the token lacks.
func ForbiddenMessage(scope Scope, what string) string {
	return what + " needs the " + string(scope) + " scope, which this token does not have (give the token scopes: [..., " + string(scope) + "] in server.auth.tokens)"
}

// RequireScope serves next only to requests allowed scope; others get 403.
func RequireScope(scope Scope, what string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !Allowed(r.Context(), scope) {
			Forbidden(w, scope, what)
			return
		}
		next.ServeHTTP(w, r)
	})
}
