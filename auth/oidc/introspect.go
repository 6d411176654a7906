package oidc

// Opaque access tokens (RFC 7662). An issuer may hand out tokens that are
// not JWTs (Ory Hydra with strategies.access_token=opaque: "ory_at_..."),
// which only the issuer can read. With Config.Introspection set, a token
// that is not a compact JWS (three dot-separated parts) is POSTed to the
// introspection endpoint (token=..., token_type_hint=access_token; HTTP
// Basic with the client when one is configured), and accepted when the
// answer says, in this order: active is true; token_use, when present,
// is access_token (never a refresh token); iss, when present, is the
// issuer; aud holds the audience (RFC 8707, as for JWTs); exp is present
// and not more than Leeway in the past; nbf, when present, not more than
// Leeway in the future; and the subject claim is a non-empty string.
// Scopes come from scope (space-separated), mapped as for JWTs.
//
// An accepted answer is remembered (the same cache as verified JWTs, by
// the token's SHA-256) for CacheTTL (30 s by default), never past the
// token's exp: a token the issuer revokes is refused at the latest
// CacheTTL later. A refusal is not remembered. An endpoint that cannot be
// reached, or answers with an error, refuses the token with that reason.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Introspection is the RFC 7662 endpoint that checks opaque tokens.
type Introspection struct {
	// URL is the endpoint (https, or http on a loopback host).
	URL string
	// ClientID and ClientSecret authenticate vmcp to it (HTTP Basic);
	// none when empty.
	ClientID, ClientSecret string
	// CacheTTL is how long an answer is used (30 s when zero).
	CacheTTL time.Duration
}

// DefaultIntrospectionTTL is how long an introspection answer is used.
const DefaultIntrospectionTTL = 30 * time.Second

// isJWS reports whether raw has the shape of a compact JWS.
func isJWS(raw string) bool { return strings.Count(raw, ".") == 2 }

// introspection is the endpoint's answer (RFC 7662 §2.2).
type introspection struct {
	Active   bool         `json:"active"`
	Scope    string       `json:"scope"`
	Iss      string       `json:"iss"`
	Aud      stringList   `json:"aud"`
	Exp      *json.Number `json:"exp"`
	Nbf      *json.Number `json:"nbf"`
	TokenUse string       `json:"token_use"`
}

// introspect asks the endpoint about raw and returns whom it
// authenticates and until when the answer may be used.
func (v *Verifier) introspect(ctx context.Context, raw string) (Principal, time.Time, error) {
	in := v.cfg.Introspection
	form := url.Values{"token": {raw}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.URL, strings.NewReader(form.Encode()))
	if err != nil {
		return Principal{}, time.Time{}, &InvalidTokenError{Reason: "introspection: " + err.Error()}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if in.ClientID != "" {
		req.SetBasicAuth(url.QueryEscape(in.ClientID), url.QueryEscape(in.ClientSecret))
	}
	resp, err := v.cfg.HTTPClient.Do(req)
	if err != nil {
		return Principal{}, time.Time{}, &InvalidTokenError{Reason: "introspection at " + in.URL + " failed: " + strings.ReplaceAll(err.Error(), raw, "[token]")}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		b := strings.TrimSpace(string(body))
		if len(b) > 200 {
			b = b[:200] + "..."
		}
		return Principal{}, time.Time{}, &InvalidTokenError{Reason: fmt.Sprintf("introspection at %s answered %s %s", in.URL, resp.Status, strings.ReplaceAll(b, raw, "[token]"))}
	}
	var a introspection
	var all map[string]any
	if err := json.Unmarshal(body, &a); err != nil {
		return Principal{}, time.Time{}, &InvalidTokenError{Reason: "introspection answer: " + err.Error()}
	}
	_ = json.Unmarshal(body, &all)
	now := v.cfg.Now()
	switch {
	case !a.Active:
		return Principal{}, time.Time{}, &InvalidTokenError{Reason: "the token is not active (introspection)"}
	case a.TokenUse != "" && a.TokenUse != "access_token":
		return Principal{}, time.Time{}, &InvalidTokenError{Reason: "the token is a " + a.TokenUse + ", not an access token"}
	case a.Iss != "" && a.Iss != v.cfg.Issuer:
		return Principal{}, time.Time{}, &InvalidTokenError{Reason: fmt.Sprintf("id token issued by a different provider, expected %q got %q", v.cfg.Issuer, a.Iss)}
	case !slices.Contains(a.Aud, v.cfg.Audience):
		return Principal{}, time.Time{}, &InvalidTokenError{Reason: fmt.Sprintf("expected audience %q got %q", v.cfg.Audience, []string(a.Aud))}
	}
	exp, ok := unixTime(a.Exp)
	if !ok {
		return Principal{}, time.Time{}, &InvalidTokenError{Reason: "the token has no exp"}
	}
	if now.Sub(exp) > v.cfg.Leeway {
		return Principal{}, time.Time{}, &InvalidTokenError{Reason: "the token expired at " + exp.UTC().Format(time.RFC3339)}
	}
	if a.Nbf != nil {
		nbf, ok := unixTime(a.Nbf)
		if !ok || nbf.Sub(now) > v.cfg.Leeway {
			return Principal{}, time.Time{}, &InvalidTokenError{Reason: "the token is not valid yet (nbf)"}
		}
	}
	sub, _ := all[v.cfg.SubjectClaim].(string)
	if strings.TrimSpace(sub) == "" {
		return Principal{}, time.Time{}, &InvalidTokenError{Reason: "the introspection answer has no " + v.cfg.SubjectClaim + " (the subject: server.auth.oidc.subjectClaim)"}
	}
	until := now.Add(in.CacheTTL)
	if e := exp.Add(v.cfg.Leeway); e.Before(until) {
		until = e
	}
	return Principal{Subject: sub, Scopes: v.cfg.Scopes.vmcpScopes(strings.Fields(a.Scope)), Expiry: exp}, until, nil
}
