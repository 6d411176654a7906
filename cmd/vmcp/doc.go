// Command vmcp serves compiled workflows as MCP tools (vmcp run), runs one
// workflow from the shell (vmcp call), and lists, shows and cancels runs
// (vmcp runs).
//
// In: a vmcp.yaml config (--config, or ./vmcp.yaml) naming the backend MCP
// servers and the workflow sources (YAML, or plan.json from vmcpc compile).
// Both commands load the config (its mistakes are diagnostics with the
// source line and a caret, as the workflows' are), compile the workflows, connect to every backend, check every
// tool reference against the backends' live tool schemas (diagnostics and
// exit 1 on errors), and build the runtime engine. The checks are the same
// for YAML and plan.json: bare and aggregated tool names are resolved
// against the live catalog, and each workflow's annotations are derived
// from its steps' tools (an explicit hint safer than they allow stops
// startup).
//
//	vmcp run  [--config vmcp.yaml] [--transport stdio|http] [--listen ADDR] [--insecure] [--admin-listen ADDR] [--shutdown-grace 10s] [--log-level LEVEL]
//	vmcp call [--config vmcp.yaml] TOOL [--arg k=v ...] [--args-json '{...}'] [--timeline]
//	vmcp runs list|show ID|cancel ID [--url URL --token T | --db vmcp-state.db] [--json]
//
// Out: run serves MCP on stdio or streamable HTTP (at /mcp) until SIGINT or
// SIGTERM, then shuts down gracefully (shutdown.go: the runs in flight get
// a grace period, then are cancelled; a second signal exits at once with
// 130); call prints the workflow's result JSON on stdout and its progress
// on stderr (redrawn in place on a terminal, one line per event otherwise),
// and asks elicitation steps on the terminal when there is one. Logs always
// go to stderr. Exit codes: 0 success, 1 failure
// (startup or workflow), 2 bad usage or arguments.
//
// With state.store: sqlite, vmcp run resumes the runs the previous process
// left running, under their ids, once the backends are up (resume.go).
//
// Under --transport http the same listener serves the run API
// (/api/v1/runs), /healthz, /readyz and /metrics (ops.go wires the store,
// metrics, run logs, authentication and request limits).
//
// Entry point: [main], which calls execute with the process's streams.
package main
