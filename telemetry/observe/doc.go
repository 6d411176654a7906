// Package observe connects the engine's progress events to the things that
// watch runs: structured logs and metrics.
//
// In: runtime.Event values (through runtime.RunOptions.OnEvent). Out: one
// slog line per event that always carries run_id and workflow, and step_id
// for step events (Logger); a fan-out of several event handlers (Tee); and
// a Runner decorator that adds handlers to every run started by the MCP
// server without changing the server or the engine (WithEvents). Entry
// points: Logger, WithEvents.
package observe
