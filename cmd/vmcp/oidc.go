package main

// server.auth.oidc on the HTTP listener: the verifier (package auth/oidc)
// is built once, when vmcp run starts serving HTTP or --admin-listen,
// from the issuer's discovery document (an issuer that does not answer
// fails the start, naming it). It checks every bearer token that is not a
// static one, and its RFC 9728 metadata is served without a token.

import (
	"context"
	"fmt"
	"net/http"

	"github.com/vmcp-dev/vmcp/auth/oidc"
	"github.com/vmcp-dev/vmcp/internal/httpsafe"
)

// openOIDC builds the verifier when the config asks for one.
func (o *ops) openOIDC(ctx context.Context) error {
	c := o.cfg.Server.Auth.OIDC
	if c == nil || o.oidc != nil {
		return nil
	}
	cfg := oidc.Config{
		Issuer: c.Issuer, Audience: c.Audience, SubjectClaim: c.SubjectClaim,
		Scopes: oidc.ScopeMap{Run: c.Scopes.Run, Author: c.Scopes.Author, Admin: c.Scopes.Admin},
	}
	if in := c.Introspection; in != nil {
		cfg.Introspection = &oidc.Introspection{URL: in.URL, ClientID: in.ClientID, ClientSecret: in.ClientSecret, CacheTTL: in.CacheTTL}
	}
	v, err := oidc.New(ctx, cfg)
	if err != nil {
		return fmt.Errorf("%v", err)
	}
	o.oidc = v
	o.log.Info("accepting OAuth access tokens", "issuer", c.Issuer, "audience", c.Audience)
	return nil
}

// bearer is the verifier as the listener's Bearer (nil without OIDC).
func (o *ops) bearer() httpsafe.Bearer {
	if o.oidc == nil {
		return nil
	}
	return o.oidc.Bearer()
}

// public are the handlers served without a token (the RFC 9728 metadata).
func (o *ops) public() map[string]http.Handler {
	if o.oidc == nil {
		return nil
	}
	return o.oidc.Public()
}
