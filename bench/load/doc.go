// Command load is vmcp's load test: many MCP clients calling a workflow
// over streamable HTTP against a real `vmcp run` process with the SQLite
// store, a stdio backend and the server's caps on (server.maxConnections,
// maxConnectionsPerClient, bodyTimeout, server.limits with onLimit: wait),
// for a fixed time, all on loopback. A share of the calls (-tasks, 30% by
// default) are MCP 2025-11-25 tasks: tools/call with params.task, tasks/get
// until the task ends, tasks/result.
//
// In: flags (clients, duration, task share, port, binaries; by default it
// builds vmcp and the e2e test backend itself). Out: a report on stdout:
// calls, throughput, latency percentiles of plain calls, tasks and task
// creation, errors by kind, and the vmcp process's goroutines, RSS, heap and
// open sockets at baseline, at the peak and after the load (read from its
// own /metrics and /proc), and a check that every call was recorded in the
// store. It exits 1 when any call failed or the server did not return to
// baseline (load.go says how that is judged):
//
//	bench/load/run.sh                      # 200 clients x 30s, 30% tasks
//	go run ./bench/load -clients 50 -duration 10s -tasks 0
//
// TestLoad runs it with 200 clients for 10 seconds (about 20 s with the
// binaries built), without waiting for vmcp's next garbage collection.
//
// With -replicas N (replicas.go) it is the load of docs/replicas.md:
// N `vmcp run` replicas on one PostgreSQL (a throwaway cluster it starts
// with initdb and pg_ctl, durable unless -pg-durable=false), the clients
// spread over them, the second replica SIGKILLed at half time and started
// again -restart-after later; then the same load on one SQLite process.
// It checks that every run ended exactly once under the resume rules, in
// the store, the backends' call record and the replicas' logs, and that
// no call or task was lost, and prints the throughput and latencies of
// both side by side. Ports: the SQLite process on -port, the replicas on
// the next N, PostgreSQL on the one after:
//
//	go run ./bench/load -replicas 3 -clients 100 -duration 60s -port 17770
//
// TestLoadReplicas runs it with 100 clients for 10 seconds a leg (about
// 30 s), judging the invariants, never the timings.
package main
