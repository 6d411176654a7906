// Package cmdb measures the CMDB sync example (examples/cmdb) against its
// ideal makespan: the wall time of a run next to the time the same run
// would take on an engine that costs nothing, with the same per-call
// latencies and the same parallelism limits.
//
// BenchmarkCMDBSync runs examples/cmdb/cmdb_sync.yaml (nested loops with
// bodies) and BenchmarkCMDBSyncFlat cmdb_sync_flat.yaml (the same sync
// with single-step loops), and BenchmarkCMDBSyncFirstWave
// firstwave/cmdb_sync_firstwave.yaml (the sync as the first wave's dialect
// writes it: a loop per kind, JSON written by templates), each at
// parallelism 1, 10 and 50: the
// workflow's maxParallel, every loop's maxParallel, server.maxParallel
// and each backend's maxParallel all set to that number. The engine is
// built the way `vmcp run` builds it (config, backend manager, compile
// against the live catalog, call limits); the two fake servers are real
// stdio processes with an artificial latency per call (100ms for a
// Kubernetes list, 50ms for a graph write; CMDB_K8S_LATENCY and
// CMDB_GRAPH_LATENCY change them). Every run's graph counts are checked
// against the cluster generator's.
//
// The ideal (ideal.go, explained at its top) is computed from the
// compiled plan, the known latencies and the iteration counts the run
// recorded: a discrete-event simulation of a zero-overhead scheduler
// under the same limits. Metrics: wall-ms (mean per run), ideal-ms,
// bound-ms (max of critical path and work per slot, which no schedule
// beats), x-ideal (wall / ideal), calls (backend calls per run) and in-flight
// (the calls' latencies summed over the wall time: the mean number of
// calls in flight, to set against the parallelism limit).
// Run:
//
//	go test -run '^$' -bench CMDBSync -benchtime 1x ./bench/cmdb/
//
// firstwave/compare.sh runs the first-wave sync with `vmcp call` from
// this tree and from another revision (325f719 by default), alternated
// in the same rounds, and compares their wall time and calls in flight.
//
// The results are in the "CMDB sync" section of docs/performance.md.
package cmdb
