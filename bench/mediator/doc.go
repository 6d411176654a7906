// Package mediator measures what vmcp adds to a tool call: the same backend
// tool (echo) is called directly by an mcp-go client and through a one-step
// vmcp workflow, and the benchmarks report the latency of each and the
// difference at the median.
//
//   - BenchmarkMediatorHTTP: the backend and vmcp are in-process servers on
//     real loopback sockets, both over streamable HTTP; vmcp reaches the
//     backend through mcpclient like `vmcp run` does.
//   - BenchmarkMediatorStdio: the backend is the e2e test backend process and
//     vmcp is the real `vmcp run` binary, both over stdio.
//
// Direct and mediated calls alternate in one loop so both see the same
// machine load. Run:
//
//	go test -run '^$' -bench HTTP -benchtime 3000x ./bench/mediator/
//
// Metrics: direct-p50-µs, vmcp-p50-µs, added-p50-µs (the difference of the
// medians) and added-p90-µs.
//
// The Part benchmarks (parts_test.go; none matches -bench HTTP) break the
// added latency down: PartDirect and PartBackendHop time one MCP call of
// the echo tool by an mcp-go client and by vmcp's backend manager,
// PartEngine a run of the workflow against a backend that answers at once;
// PartServer and PartServerEngine compare vmcp's server (with a runner that
// completes at once, then with the engine) against the echo server;
// PartProxy and PartWithoutEngine are mediated calls without the workflow
// (the backend tool exposed as bk_echo) and without the engine.
//
// Measured 2026-11-30 on the shared 2-core VM (load average 1.5 to 1.8),
// -benchtime 3000x, ranges over 3 runs:
//
//	MediatorHTTP       added p50 137-152µs, p90 302-384µs (direct p50 150-165µs)
//	PartProxy          added p50 104-149µs (mostly about 105)
//	PartWithoutEngine  added p50 119-179µs (mostly about 120)
//	PartServerEngine   added p50  25-30µs
//	PartServer         added p50  12-20µs
//	PartBackendHop     p50 77-79µs   PartDirect p50 130-138µs   PartEngine p50 3.2-3.7µs
//
// Before vmcp's backend hop asked for the 2025-11-25 session protocol and
// kept mcp-go's decoding of results, the same tree measured added p50
// 236-246µs and p90 611-662µs. The target of under 100µs added at p50 is
// not met: the backend hop alone (an mcp-go client and server over
// loopback, where a bare net/http round trip takes about 34µs) is about
// 78µs, and PartProxy, which adds no vmcp work to it, about 105µs.
package mediator
