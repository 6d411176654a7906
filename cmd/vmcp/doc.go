// Command vmcp serves compiled workflows as MCP tools (vmcp run) and runs
// one workflow from the shell (vmcp call).
//
// In: a vmcp.yaml config naming the backend MCP servers and the workflow
// sources (YAML, or plan.json from vmcpc compile). Both commands load the
// config, compile the workflows, connect to every backend, check every
// tool reference against the backends' live tool schemas (diagnostics and
// exit 1 on errors), and build the runtime engine.
//
//	vmcp run  --config vmcp.yaml [--transport stdio|http] [--listen ADDR] [--log-level LEVEL]
//	vmcp call --config vmcp.yaml TOOL [--arg k=v ...] [--args-json '{...}'] [--timeline]
//
// Out: run serves MCP on stdio or streamable HTTP (at /mcp) until SIGINT or
// SIGTERM; call prints the workflow's result JSON on stdout and its progress
// on stderr (redrawn in place on a terminal, one line per event otherwise),
// and asks elicitation steps on the terminal when there is one. Logs always
// go to stderr. Exit codes: 0 success, 1 failure
// (startup or workflow), 2 bad usage or arguments.
//
// Entry point: [main], which calls execute with the process's streams.
package main
