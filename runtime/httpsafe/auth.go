package httpsafe

// Bearer-token authentication. Both the presented token and every
// configured token are hashed with SHA-256 and the digests compared with
// crypto/subtle, so the comparison takes the same time whatever the
// lengths and contents; every configured token is compared, so the time
// does not depend on which one matched either. Tokens never appear in logs
// or error bodies. The matched token's scopes go into the request's context
// (scopes.go).
//
// A configured token that is empty or blank is never accepted: config.Load
// refuses such a token at startup, and should one get here anyway the
// server fails closed (every request gets 401) instead of dropping the
// token and with it authentication.

import (
	"crypto/sha256"
	"crypto/subtle"
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
	var digests [][sha256.Size]byte
	var scopes [][]Scope
	for _, t := range tokens {
		if strings.TrimSpace(t.Value) != "" {
			digests = append(digests, sha256.Sum256([]byte(t.Value)))
			scopes = append(scopes, t.Scopes)
		}
	}
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
		got := sha256.Sum256([]byte(strings.TrimSpace(token)))
		match, which := 0, 0
		for i := range digests {
			eq := subtle.ConstantTimeCompare(got[:], digests[i][:])
			match |= eq
			which = subtle.ConstantTimeSelect(eq, i, which)
		}
		if match != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="vmcp", error="invalid_token"`)
			httpError(w, http.StatusUnauthorized, "invalid bearer token")
			return
		}
		next.ServeHTTP(w, r.WithContext(WithScopes(r.Context(), scopes[which])))
	})
}
