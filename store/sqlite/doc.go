// Package sqlite is a runtime.Store kept in one SQLite file on disk, using
// the pure-Go modernc.org/sqlite driver (no cgo).
//
// In: a file path and Options (retention, output size cap, logger). Out: a
// *Store that the engine writes runs into and the HTTP API and `vmcp runs`
// read from, which survives restarts. Entry point: Open; Close stops the
// background retention loop. With Options.KeepUnfinished, Open leaves the
// runs a killed process left running for the caller to resume (Unfinished;
// each run's params, plan digest and step content maps are kept for
// runtime.Engine.Resume) or to end with Interrupt. The schema, durability,
// crash recovery and truncation rules are explained at the top of
// sqlite.go.
package sqlite
