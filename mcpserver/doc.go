// Package server serves the workflows of a compiled plan as MCP tools: it is
// the server half of the vmcp mediator (the client half is
// mcpclient).
//
// In: a [Runner] (a *runtime.Engine) whose workflows become tools, and
// optionally the backend manager, whose tools can be served as they are
// under <backend>_<tool> names. Out: an mcp-go MCP server, reachable over
// stdio ([Server.ServeStdio]; [ServeStdioEarly] answers initialize and
// server/discover while the server is still being built, early.go) or
// streamable HTTP ([Server.MCPHandler],
// an [Endpoint]; [HTTPHandler], [ServeHTTP]). Over HTTP the endpoint keeps
// its own session table (sessions.go: 404 for unknown ids, idle expiry, a
// cap) and writes each call's notifications on that call's response
// stream (stream.go).
//
// Each tools/call of a workflow runs it once: arguments are validated
// before the run (undeclared ones are refused), every finished step becomes a notifications/progress
// when the client asked for progress, a client's notifications/cancelled
// stops the run, and elicitation steps are forwarded to the client when it
// declared the capability: as elicitation/create requests to clients of
// protocol 2025-11-25 or earlier, and as input_required results (multi
// round-trip requests, mrtr.go) to 2026-07-28 clients, over stdio and
// HTTP alike. The result carries structuredContent, the same
// JSON as text, and the run id in _meta; a failed run is an isError result
// that names the step and its source position, never a protocol error.
//
// The served workflows may change while the server runs
// ([Server.PublishWorkflows], publish.go; clients get
// notifications/tools/list_changed with [Options.ListChanged]), and a tool
// may need a token scope beyond run ([Server.RequireScope], scopes.go:
// over HTTP a call the token may not make is answered 403).
//
// With [Options.Tasks], a workflow call may also become an MCP task
// (tasks.go; tasks_wire.go over streamable HTTP, tasks_stdio.go on stdio):
// MCP 2025-11-25 tasks/* and, over HTTP, the io.modelcontextprotocol/tasks
// extension, the task id being the run id and the task's state read from
// the run store.
//
// Every run a caller starts records the caller's subject
// (httpsafe.Caller) as its owner, which decides who sees it (package
// auth/access; tasks.go for tasks/*), and is admitted under the caps of
// [Options.RunLimits] first (runlimits.go).
//
// Entry point: [New].
package mcpserver
