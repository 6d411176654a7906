// Package fake holds what the CMDB example's two fake servers (k8s and
// graph) share: their artificial per-call latency and the way they serve
// MCP on stdio.
//
// Latency: Flag defines a -latency flag whose default comes from an
// environment variable, so a benchmark can set it for servers that vmcp
// starts; the *Delay's Wait sleeps for it before a call answers, or
// returns early when the call is cancelled.
//
// Serving: ServeStdio serves an mcp-go server on stdin and stdout with
// room for MaxConcurrentCalls tool calls at once. mcp-go's stdio server
// runs 5 at a time unless told otherwise, which would cap every caller,
// vmcp at parallelism 50 included, at 5 calls in flight.
//
// Call log: NewServer builds the server; when $CMDB_CALL_LOG names a
// file, every tool call appends a line to it (start and end in Unix
// nanoseconds, and the tool), from which bench/cmdb/firstwave/compare.sh
// counts the calls in flight.
package fake
