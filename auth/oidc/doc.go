// Package oidc makes vmcp an OAuth 2.1 resource server: it checks the JWT
// access tokens an authorization server (an OpenID Connect issuer) signs,
// and says where to get one (RFC 9728 protected resource metadata).
//
// In: a Config (server.auth.oidc: the issuer, the audience vmcp is, the
// IdP's scope names for run, author and admin, and the claim that names
// the subject). Out: a Verifier whose Verify turns a bearer token into a
// Principal (the subject, which owns the runs it starts, and vmcp's
// scopes) or an *InvalidTokenError, and a MetadataHandler for
// /.well-known/oauth-protected-resource. Entry point: New, which reads the
// issuer's discovery document once.
//
// A token is accepted when, in this order: it is a compact JWS with one
// signature whose algorithm is on the allow-list (asymmetric only: never
// none, never HMAC, whose key would be the issuer's public key); a key of
// the issuer's JWKS with the token's key id verifies it (keyset.go:
// cached, refetched on an unknown key id, so a rotated key works without
// a restart); iss is the issuer exactly; aud contains the audience (RFC
// 8707: a token minted for another resource is refused); exp is present
// and not more than Leeway (60 s) in the past; nbf, when present, not more
// than Leeway in the future; and the subject claim is a non-empty string.
// Scopes come from "scope" (RFC 9068: space-separated) or "scp" (a list,
// as Ory Hydra writes it); IdP scopes without a mapping are ignored.
//
// With Config.Introspection, a token that is not a compact JWS is an
// opaque token, checked by RFC 7662 introspection instead (introspect.go
// has the rules), its answer cached for Introspection.CacheTTL.
//
// A verified token is remembered (cache.go) until its exp plus Leeway, and
// only while the JWKS it passed with is the one in use, so an MCP client's
// next request with it costs a hash and a map lookup, not a signature.
//
// Libraries: github.com/coreos/go-oidc/v3 for discovery and the iss and
// aud checks (the checks every OIDC relying party in Go uses), over
// go-jose/v4 for the signature; the key set is this package's own, because
// go-oidc's refetches the JWKS on every token with an unknown key id,
// which lets anyone make vmcp hammer the IdP.
package oidc
