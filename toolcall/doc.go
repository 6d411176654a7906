// Package toolcall holds the types of one backend tool call, which the
// engine (package runtime) and the MCP client (mcpclient) share:
// the Backend interface, a Call and its Result, and the context hooks that
// pass a backend's progress notifications on (WithProgress) and relay the
// questions a backend asks while its tool runs (WithAsker). It imports nothing of
// vmcp, so a program that only talks to backends (vmcpc tools pull) does
// not link the engine. Package runtime names these types ToolCall,
// ToolResult, Content, Backend and BackendProgress.
package toolcall
