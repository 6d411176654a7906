// Package httpapi serves vmcp's operations API over HTTP: the run history,
// run details, cancellation, health, readiness and metrics.
//
// In: interfaces for what it needs (Engine for status and cancel, Lister for
// the run history, a readiness function, a metrics handler), so tests and
// tools can serve it from a bare store. Out: an http.Handler with Go 1.22
// ServeMux patterns, and the JSON types it writes (RunSummary, RunDetail),
// which `vmcp runs` reads back. Entry point: New.
//
// Routes:
//
//	GET  /api/v1/runs?workflow=&status=&limit=   newest first, summaries
//	GET  /api/v1/runs/{id}                       steps with status, attempts, times, output, error
//	POST /api/v1/runs/{id}/cancel                cancels, waits briefly for the run to stop
//	GET  /healthz                                200 "ok" while the process serves
//	GET  /readyz                                 200 when every backend is connected, else 503
//	GET  /metrics                                Prometheus exposition
//
// Authentication, Origin checks and body limits are not here: internal/httpsafe
// wraps the whole listener. Who sees which run is: every route reads and
// cancels through package access, so a caller sees (and cancels) its own
// runs, admin all, and another owner's run is a 404 like an unknown id.
package httpapi
