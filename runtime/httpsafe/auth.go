package httpsafe

// Bearer-token authentication. Both the presented token and every
// configured token are hashed with SHA-256 and the digests compared with
// crypto/subtle, so the comparison takes the same time whatever the
// lengths and contents; every configured token is compared, so the time
// does not depend on which one matched either. Tokens never appear in logs
// or error bodies.

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// Auth requires "Authorization: Bearer <token>" with one of tokens on every
// request except those for which open returns true. With no tokens it
// returns next unchanged. Failures get 401 with a WWW-Authenticate header.
func Auth(tokens []string, open func(*http.Request) bool, next http.Handler) http.Handler {
	var digests [][sha256.Size]byte
	for _, t := range tokens {
		if t != "" {
			digests = append(digests, sha256.Sum256([]byte(t)))
		}
	}
	if len(digests) == 0 {
		return next
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
		match := 0
		for i := range digests {
			match |= subtle.ConstantTimeCompare(got[:], digests[i][:])
		}
		if match != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="vmcp", error="invalid_token"`)
			httpError(w, http.StatusUnauthorized, "invalid bearer token")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// httpError writes a small JSON error body.
func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	// msg is one of this package's fixed strings; no escaping needed
	// beyond quotes, which they do not contain.
	_, _ = w.Write([]byte(`{"error":"` + msg + `"}` + "\n"))
}
