// Package mcpclient is vmcp's MCP client side: it connects to the backend
// MCP servers named in vmcp.yaml and calls their tools on behalf of
// workflow steps.
//
// In: the config's backends (stdio commands, streamable HTTP and SSE URLs).
// Out: a [Manager] that implements runtime.Backend (CallTool routes
// backend.tool to the right server), serves the raw tool lists and a
// catalog.Catalog for the checker, and reports per-backend health.
// Entry point: [Connect], or [Start] to start the backends in the
// background and [Manager.Wait] for the ones needed (start.go); always
// [Manager.Close] it.
//
// Every call has a deadline (the backend's timeout unless the caller's is
// earlier). Cancelling the caller's context cancels the request on the
// wire: notifications/cancelled over stdio (sent by mcp-go) and over SSE
// and pre-2026 streamable HTTP (sent here, see cancel.go). A stdio backend
// whose process exits fails the call in flight with an error naming the
// backend (*ExitError, with its exit status and stderr tail) and is
// restarted (initialized and listed again) on the next call; an exit while
// idle is noticed at once, so the next call does not fail. An HTTP backend
// whose connection fails is dialed again on the next call, and one that
// lost the session (it restarted) gets a new session and the call again.
// A stdio backend that stops reading its stdin does not hold calls up:
// each returns when its context ends, Ready reports the blocked write, and
// a write blocked for 5s gets the process killed (*StuckError) and
// restarted by the next call (see stdio.go). An answer over
// Options.MaxResultBytes (limits.maxResultBytes) fails its call with a
// *ResultTooLargeError without being read whole (stdio.go, bodylimit.go).
// A backend's tool list is refreshed when it sends
// notifications/tools/list_changed. Streamable HTTP backends are asked for
// the 2025-11-25 session handshake first, because its calls cost about half
// of 2026-07-28 ones against mcp-go servers; a backend that refuses it gets
// mcp-go's protocol negotiation (see conn.start). A backend that asks its
// caller a question while a call runs (elicitation/create, or an
// input_required result) is answered by the call context's
// toolcall.Asker, and its sampling requests are refused (relay.go).
package mcpclient
