// Command load is vmcp's load test: many MCP clients calling a workflow
// over streamable HTTP against a real `vmcp run` process with the SQLite
// store and a fast backend, for a fixed time, all on loopback.
//
// In: flags (clients, duration, port, binaries; by default it builds vmcp
// and the e2e test backend itself). Out: a report on stdout: calls,
// throughput, latency percentiles, errors by kind, goroutines and memory of
// the vmcp process before, during and after the load (read from its own
// /metrics), and a check that every call was recorded in the store. It exits
// 1 when any call failed or the goroutines did not return to baseline.
// It is a program, not a test, so `make test` never runs it:
//
//	go run ./bench/load -clients 50 -duration 30s
package main
