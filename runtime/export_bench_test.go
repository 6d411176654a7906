package runtime

import "testing"

// RunBenchmark is BenchmarkRun with the engine's options changed by tune,
// for the benchmarks of packages that import the engine (the tracing
// benchmark in trace_bench_test.go, package runtime_test).
func RunBenchmark(b *testing.B, tune func(*Options)) { benchmarkRunWith(b, 16, tune) }
