package httpsafe

// Bearer-token authentication: the static tokens (server.auth.tokens) and,
// when configured, a Bearer verifier for the tokens an authorization
// server issues (server.auth.oidc, package auth/oidc).
//
// A presented token is first looked up among the static tokens: both it
// and every configured token are hashed with SHA-256 and the digests
// compared with crypto/subtle, so the comparison takes the same time
// whatever the lengths and contents; every configured token is compared,
// so the time does not depend on which one matched either. A token that
// is none of them goes to the Bearer verifier. Tokens never appear in
// logs or error bodies. The matched token's identity (its subject and
// scopes) goes into the request's context (identity.go).
//
// Failures get 401 with a WWW-Authenticate challenge (RFC 6750 §3): with a
// Bearer verifier it is the verifier's (the MCP authorization spec's:
// resource_metadata points at the RFC 9728 document), otherwise
// `Bearer realm="vmcp"`; error="invalid_token" when a token was sent. A
// caller whose token lacks a scope gets 403 with error="insufficient_scope"
// and the scope to ask for (Forbidden, ScopeChallenge).
//
// A configured token that is empty or blank is never accepted: config.Load
// refuses such a token at startup, and should one get here anyway the
// server fails closed (every request gets 401) instead of dropping the
// token and with it authentication.
//
// An OAuth token whose subject is a static token's subject (its name) is
// refused: runs belong to subjects, and the two would be one owner.

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
)

// Bearer checks tokens that are not static tokens (OIDC access tokens).
type Bearer interface {
	// Verify returns whom token authenticates, or an error that says why
	// it is refused and never holds the token.
	Verify(ctx context.Context, token string) (Identity, error)
	// Challenge is the WWW-Authenticate value of a 401 to r: errCode is
	// "" without a token, "invalid_token" with a refused one.
	Challenge(r *http.Request, errCode, description string) string
	// ScopeChallenge is the WWW-Authenticate value of a 403 to r for a
	// token without scope.
	ScopeChallenge(r *http.Request, scope Scope) string
}

// Authenticator checks a listener's bearer tokens: the static ones, then
// the Bearer verifier.
type Authenticator struct {
	tokens *TokenSet
	bearer Bearer
	on     bool
}

// NewAuthenticator returns the authenticator of tokens and bearer (nil:
// static tokens only). With neither it is disabled.
func NewAuthenticator(tokens []Token, bearer Bearer) *Authenticator {
	return &Authenticator{tokens: NewTokenSet(tokens), bearer: bearer, on: len(tokens) > 0 || bearer != nil}
}

// Enabled reports whether requests must authenticate.
func (a *Authenticator) Enabled() bool { return a != nil && a.on }

// subjectTakenError refuses an OAuth token whose subject is a static
// token's name: runs are owned by subject, so the token would see and
// cancel the static token's runs.
type subjectTakenError struct{ subject string }

func (e *subjectTakenError) Error() string {
	return "invalid token: its subject " + strconv.Quote(e.subject) + " is the name of a static token (server.auth.tokens), which would make them one owner; rename the static token"
}

// errUnknownToken is the refusal of a token that is no static token when
// there is no Bearer verifier.
var errUnknownToken = errors.New("not one of server.auth.tokens")

// Authenticate returns whom token authenticates (surrounding spaces
// trimmed), or why it is refused.
func (a *Authenticator) Authenticate(ctx context.Context, token string) (Identity, error) {
	id, _, err := a.authenticate(ctx, token)
	return id, err
}

// authenticate is Authenticate that also says whether the Bearer verifier
// accepted the token (an OAuth access token, not a static token).
func (a *Authenticator) authenticate(ctx context.Context, token string) (Identity, bool, error) {
	token = strings.TrimSpace(token)
	if id, ok := a.tokens.Lookup(token); ok {
		return id, false, nil
	}
	if a.bearer == nil || token == "" {
		return Identity{}, false, errUnknownToken
	}
	id, err := a.bearer.Verify(ctx, token)
	if err != nil {
		return Identity{}, false, err
	}
	if a.tokens.HasSubject(id.Subject) {
		// The two would be one owner, each seeing the other's runs.
		return Identity{}, false, &subjectTakenError{subject: id.Subject}
	}
	id.Authenticated = true
	return id, true, nil
}

// challenge is the WWW-Authenticate value of a 401.
func (a *Authenticator) challenge(r *http.Request, errCode, description string) string {
	if a.bearer != nil {
		return a.bearer.Challenge(r, errCode, description)
	}
	if errCode != "" {
		return `Bearer realm="vmcp", error="` + errCode + `"`
	}
	return `Bearer realm="vmcp"`
}

// Auth requires "Authorization: Bearer <token>" with one of tokens on every
// request except those for which open returns true, and passes the token's
// scopes on in the request's context. With no tokens it returns next
// unchanged; blank tokens match nothing.
func Auth(tokens []Token, open func(*http.Request) bool, next http.Handler) http.Handler {
	return AuthWith(NewAuthenticator(tokens, nil), open, next)
}

// AuthWith is Auth with an Authenticator (static tokens and a Bearer
// verifier). Disabled, it returns next unchanged.
func AuthWith(a *Authenticator, open func(*http.Request) bool, next http.Handler) http.Handler {
	if !a.Enabled() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if open != nil && open(r) {
			next.ServeHTTP(w, r.WithContext(withAuthenticator(r.Context(), a)))
			return
		}
		h := r.Header.Get("Authorization")
		scheme, token, found := strings.Cut(h, " ")
		if h == "" || !found || !strings.EqualFold(scheme, "Bearer") {
			w.Header().Set("WWW-Authenticate", a.challenge(r, "", ""))
			httpError(w, http.StatusUnauthorized, "missing bearer token")
			return
		}
		id, oauth, err := a.authenticate(r.Context(), token)
		if err != nil {
			desc := ""
			if err != errUnknownToken {
				desc = err.Error()
			}
			w.Header().Set("WWW-Authenticate", a.challenge(r, "invalid_token", desc))
			httpError(w, http.StatusUnauthorized, "invalid bearer token")
			return
		}
		ctx := withAuthenticator(WithIdentity(r.Context(), id), a)
		if oauth {
			ctx = WithSubjectToken(ctx, strings.TrimSpace(token))
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

type authenticatorKey struct{}

func withAuthenticator(ctx context.Context, a *Authenticator) context.Context {
	return context.WithValue(ctx, authenticatorKey{}, a)
}

// ScopeChallenge sets the WWW-Authenticate header of a 403 for a request
// whose token lacks scope: error="insufficient_scope" and the scope to ask
// for (the IdP's name for it with OIDC, vmcp's otherwise). Requests that
// did not come through AuthWith get none.
func ScopeChallenge(w http.ResponseWriter, r *http.Request, scope Scope) {
	a, _ := r.Context().Value(authenticatorKey{}).(*Authenticator)
	if a == nil {
		return
	}
	if a.bearer != nil {
		w.Header().Set("WWW-Authenticate", a.bearer.ScopeChallenge(r, scope))
		return
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="vmcp", error="insufficient_scope", scope="`+string(scope)+`"`)
}
