// Package mediator measures what vmcp adds to a tool call: the same backend
// tool (echo) is called directly by an mcp-go client and through a one-step
// vmcp workflow, and the benchmarks report the latency of each and the
// difference at the median.
//
//   - BenchmarkMediatorHTTP: the backend and vmcp are in-process servers on
//     real loopback sockets, both over streamable HTTP; vmcp reaches the
//     backend through runtime/mcpclient like `vmcp run` does.
//   - BenchmarkMediatorStdio: the backend is the e2e test backend process and
//     vmcp is the real `vmcp run` binary, both over stdio.
//
// Direct and mediated calls alternate in one loop so both see the same
// machine load. Run:
//
//	go test -run '^$' -bench . -benchtime 2000x ./bench/mediator/
//
// Metrics: direct-p50-µs, vmcp-p50-µs, added-p50-µs (and p90), and
// own-est-p50-µs: the mediated median minus two direct medians, an estimate
// of vmcp's own work, since a mediated call makes two MCP round trips.
package mediator
