// Package credentials authenticates vmcp to its HTTP backends: each
// backend says how (backends.<name>.auth), and every request to it carries
// that credential and nothing else. The caller's own token (a static
// token or an OAuth access token vmcp checked) is never sent to a
// backend: the backend's requests are vmcp's own, built from the
// backend's config.
//
// In: a backend's name and Spec (the kind and its fields) and the
// transport to wrap. Out: an http.RoundTripper that sets the credential on
// every request (Transport). Entry point: Transport.
//
// Kinds (ActsForCaller says which need the caller's token):
//   - bearer: "Authorization: Bearer <token>", a static token.
//   - header: one static header (name: value), such as an API key.
//   - client-credentials: an OAuth 2.0 client credentials grant (RFC 6749
//     §4.4) at tokenURL with clientID and clientSecret (HTTP Basic), the
//     scopes and, when set, the audience (RFC 8707 resource, sent as
//     "audience" and "resource"). golang.org/x/oauth2's clientcredentials
//     does the grant, and its ReuseTokenSource caches the token until
//     shortly (10 s) before it expires; the cache holds a lock while it
//     fetches, so concurrent calls that find the token stale wait for one
//     fetch and share it. A token that cannot be obtained fails the request
//     with an *Error naming the backend, the token endpoint and its answer
//     (never a secret).
//   - token-exchange: RFC 8693 (exchange.go). Each tool call carries a
//     token for the backend on behalf of the run's caller: the caller's
//     verified OAuth access token (httpsafe.SubjectToken, which the run's
//     context keeps) is exchanged at tokenURL for one whose audience is the
//     backend, cached per caller token; vmcp's own requests carry a client
//     credentials token of the same client. The caller's token goes to the
//     token endpoint only. CheckCaller refuses a call without one.
//
// The library: golang.org/x/oauth2 is Go's OAuth client (the Go team's,
// the one every Go OAuth client builds on); its caching and error type
// (RetrieveError, with the endpoint's error code) are what this needs.
package credentials
