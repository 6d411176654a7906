package httpsafe

// Bearer-token authentication. Both the presented token and every
// configured token are hashed with SHA-256 and the digests compared with
// crypto/subtle, so the comparison takes the same time whatever the
// lengths and contents; every configured token is compared, so the time
// does not depend on which one matched either. Tokens never appear in logs
// or error bodies. The matched token's identity (its subject and scopes)
// goes into the request's context (identity.go).
//
// A configured token that is empty or blank is never accepted: config.Load
// refuses such a token at startup, and should one get here anyway the
// server fails closed (every request gets 401) instead of dropping the
// token and with it authentication.

import (
	"net/http"
	"strings"
)

// Auth requires "Authorization: Bearer <token>" with one of tokens on every
// request except those for which open returns true, and passes the token's
// scopes on in the request's context. With no tokens it returns next
// unchanged; blank tokens match nothing. Failures get 401 with a
// WWW-Authenticate header.
func Auth(tokens []Token, open func(*http.Request) bool, next http.Handler) http.Handler {
	if len(tokens) == 0 {
		return next
	}
	set := NewTokenSet(tokens)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if open != nil && open(r) {
			next.ServeHTTP(w, r)
			return
		}
		h := r.Header.Get("Authorization")
		scheme, token, found := strings.Cut(h, " ")
		if h == "" || !found || !strings.EqualFold(scheme, "Bearer") {
			w.Header().Set("WWW-Authenticate", `Bearer realm="vmcp"`)
			httpError(w, http.StatusUnauthorized, "missing bearer token")
			return
		}
		id, ok := set.Lookup(token)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="vmcp", error="invalid_token"`)
			httpError(w, http.StatusUnauthorized, "invalid bearer token")
			return
		}
		next.ServeHTTP(w, r.WithContext(WithIdentity(r.Context(), id)))
	})
}
