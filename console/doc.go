// Package console is vmcp's web console: server-rendered HTML pages at
// /ui/ for the runs and the workflows of a running `vmcp run`.
//
// In: the engine (run status and cancel, the served workflows), the run
// store, the workflows' source files, the configured tokens with their
// scopes, the authoring catalog of versions (catalog.go; optional), and
// the engine's events (Observe, teed into the runner). Out: an http.Handler
// for /ui/ (New, then Console.ServeHTTP), mounted next to /mcp and the run
// API, behind the listener's Host and Origin checks. Entry point: New.
//
// Pages (design.md "Web console"):
//   - /ui/runs: the runs, newest first, filterable by workflow and status;
//     rows update live from server-sent events (/ui/events).
//   - /ui/runs/{id}: one run as a timeline on a shared time axis (see
//     timeline.go), with status, attempts, outputs (truncated visibly),
//     errors with their file:line:col, loop iterations and child runs that
//     open in place, and a cancel button while it runs.
//   - /ui/workflows and /ui/workflows/{name}: the workflows with their
//     versions (a plan hash for those from files, a number for authored
//     ones, whose every version's source can be read), and one workflow's
//     plan graph (plangraph's SVG), parameters and source.
//
// Decisions:
//   - Pages are html/template, readable without JavaScript; console.js only
//     subscribes to /ui/events and swaps in fragments that the server
//     renders with the same templates, so there is one way to draw a row.
//   - No step output is ever HTML: outputs are JSON text escaped by
//     html/template, and the Content-Security-Policy allows scripts from
//     /ui/assets/ only, so even an escaping bug could not run one.
//   - Auth (auth.go): with tokens configured, /ui/signin takes a token once
//     and sets an HttpOnly, SameSite=Strict cookie signed with a key made
//     when the process starts (so a restart signs everyone out). Every
//     POST carries a CSRF token that is an HMAC of the browser's cookies.
//     Token scopes apply as in the API: the pages need run, cancel admin.
//   - Every asset is embedded (go:embed); nothing is fetched from a CDN.
package console
