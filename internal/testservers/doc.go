// Package testservers holds small MCP servers, written with mcp-go, that
// misbehave on request: they hang, crash, exit at startup, or record the
// cancellations they receive. Tests use them for the failure cases that
// the real npm MCP servers cannot produce on demand.
//
// In: environment variables (see [Main]). Out: an MCP server on stdio, or
// an *server.MCPServer to serve over HTTP in-process. Entry points:
// [NewFake] and [Main]; a test binary re-executes itself as the server by
// calling Main from TestMain.
package testservers
