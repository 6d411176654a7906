// Package temporalbench measures what executor: temporal costs against the
// local executor: 100 runs started at once of a five-step chain workflow,
// on the local engine, and on a Temporal dev server with one and with two
// workers. The backend is an in-process echo (no MCP round trip), so the
// numbers are the executors' own cost.
//
// In: a Temporal CLI (see internal/testenv; it starts a dev server on
// ports 17470-17489). Out: runs/s and µs per step of each executor
// (b.ReportMetric), and the per-step overhead Temporal adds is the
// difference. Entry point:
//
//	go test ./bench/temporal -run '^$' -bench . -benchtime 3x
package temporalbench
