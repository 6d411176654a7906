// Package httpsafe hardens vmcp's HTTP listener: bearer-token
// authentication, Origin validation against DNS rebinding, request body
// limits, server timeouts, and the check that refuses to expose an
// unauthenticated server beyond loopback.
//
// In: the config's tokens and allowed origins, and the handler to protect.
// Out: http.Handler middleware (Auth, CheckOrigin, LimitBody, or all of them
// at once with Protect), an *http.Server with safe timeouts (NewServer), and
// CheckListen for `vmcp run`. Entry point: Protect.
//
// Decisions:
//   - GET /healthz stays open (no token, any Origin) so that load balancers
//     and orchestrators can probe liveness; it reveals nothing but "ok".
//     /readyz, /metrics, the run API and /mcp all need the token when
//     tokens are configured, because they reveal backend names and errors,
//     workflow names and run contents.
//   - With no tokens configured, Auth lets every request through; CheckListen
//     is what stops that setup from listening beyond loopback.
//   - Requests without an Origin header (curl, MCP SDK clients, servers)
//     pass the Origin check; browsers always send one on cross-origin
//     requests, and that is the DNS-rebinding attack the check blocks.
package httpsafe
