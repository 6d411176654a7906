// Package metrics measures vmcp for Prometheus, on a registry of its own
// (never the global default registry).
//
// In: the engine's progress events (Metrics.Observe, given to
// runtime.RunOptions.OnEvent) and every backend call (WrapBackend, a
// runtime.Backend decorator that times CallTool). Out: counters, gauges and
// histograms served by Handler at /metrics, plus the Go runtime and process
// collectors. Nothing in the engine changes: the metrics come from the
// events it already emits and from the decorator. Entry point: New.
package metrics
