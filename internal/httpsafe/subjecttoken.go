package httpsafe

// The caller's OAuth access token, for backends that act on the caller's
// behalf (backends.<name>.auth kind token-exchange, package
// auth/credentials): AuthWith puts a token the Bearer verifier accepted
// into the request's context, and a run started by the request keeps it
// in its context, so the run's backend calls can exchange it (RFC 8693).
// Static tokens are not OAuth tokens and are never put there. The token
// lives only in memory: a run resumed after a restart, or started by a
// schedule, has none.

import "context"

type subjectTokenKey struct{}

// WithSubjectToken returns ctx carrying the caller's verified OAuth access
// token.
func WithSubjectToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, subjectTokenKey{}, token)
}

// SubjectToken is the caller's verified OAuth access token ("" for none).
func SubjectToken(ctx context.Context) string {
	s, _ := ctx.Value(subjectTokenKey{}).(string)
	return s
}
