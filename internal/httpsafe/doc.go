// Package httpsafe hardens vmcp's HTTP listener: bearer-token
// authentication, Host and Origin validation against DNS rebinding, request
// body limits, a cap on open connections, server timeouts, and the check
// that refuses to expose an unauthenticated server beyond loopback.
//
// In: the config's tokens, allowed hosts and origins, and limits, and the
// handler to protect. Out: http.Handler middleware (BoundBody, CheckHost, CheckOrigin,
// Auth, LimitBody, or all of them at once with Protect), a listener with a
// connection cap (Listen), an *http.Server with safe timeouts (NewServer),
// and CheckListen for `vmcp run`. Entry point: Protect. The identity a
// request authenticated as (its subject, the owner of the runs it starts,
// and its scopes) is Caller(ctx), the one place every way to a run asks
// (identity.go).
//
// Decisions:
//   - The Host check covers every endpoint, /healthz included: on a loopback
//     connection a foreign Host name is a rebinding attack whatever the path.
//   - GET /healthz stays open (no token, any Origin) so that load balancers
//     and orchestrators can probe liveness; it reveals nothing but "ok".
//     /readyz, /metrics, the run API and /mcp all need the token when
//     tokens are configured, because they reveal backend names and errors,
//     workflow names and run contents.
//   - With no tokens configured, Auth lets every request through; CheckListen
//     is what stops that setup from listening beyond loopback.
//   - Requests without an Origin header (curl, MCP SDK clients, servers)
//     pass the Origin check; browsers always send one on cross-origin
//     requests, and those are what it blocks. A rebound page is same-origin
//     in its own browser, which is why the Host check exists as well.
package httpsafe
