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
//
// Measured 2026-11-30 on the shared 2-core build VM (load average 10 to 14
// from other jobs), -benchtime 3000x -count 3, ranges over the 3 runs:
//
//	            direct p50   vmcp p50     added p50   added p90    own-est p50
//	HTTP        200-225µs    500-560µs    300-336µs   1.0-1.3ms    102-111µs
//	stdio       370-515µs    943-1373µs   566-857µs   1.1-2.0ms    190-342µs
//
// The target of under 100µs added at p50 over HTTP is not met: the second
// MCP round trip (vmcp to the backend, through mcp-go's client and server)
// costs about as much as the direct call itself. vmcp's own work is about
// 100µs at p50; a CPU profile puts 60µs of it in the tool handler and the
// engine (run record, templates, store) and the rest in mcp-go's request
// handling on vmcp's side.
package mediator
