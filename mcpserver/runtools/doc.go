// Package runtools offers run status and cancellation to agents as MCP
// tools, for `server.exposeRunTools: true`.
//
// In: the engine (status, cancel) and the run store (history). Out: two
// mcp-go server tools, vmcp_run_status and vmcp_run_cancel, which the MCP
// server registers next to the workflow tools. Their results are the same
// JSON as the HTTP API's (httpapi.RunDetail, httpapi.RunList). Entry point:
// Tools.
package runtools
