// Package temporalbench measures what executor: temporal costs against the
// local executor, on a five-step chain of quick, idempotent echo calls
// (an in-process backend: no MCP round trip, so the numbers are the
// executors' own cost). Each Temporal mode runs with regular activities
// (LocalOptions.Off, every step a server round trip) or with local
// activities (quick.go in temporalrun), on 1, 2 or 4 workers; the modes
// run in interleaved rounds (each b.N iteration is one round over every
// mode), each on a dev server of its own started for it.
//
//   - BenchmarkBurst: 100 runs started at once. runs/s, µs/step (wall time
//     over steps), and the CPU the dev server and this process (workers
//     and runner) used per run, with the server's share in cores.
//   - BenchmarkStep: one run at a time, the chain and its first step
//     alone. The median latency of each, the latency Temporal adds per
//     step (ms_added/step, against the local engine) and the slope
//     (ms/extra_step: what one more step costs, without the run's fixed
//     cost).
//
// In: a Temporal CLI (see internal/testenv; dev servers on ports
// 17470-17489). Out: b.ReportMetric figures per mode. Entry point:
//
//	go test ./bench/temporal -run '^$' -bench . -benchtime 3x
package temporalbench
