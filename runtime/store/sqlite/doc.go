// Package sqlite is a runtime.Store kept in one SQLite file on disk, using
// the pure-Go modernc.org/sqlite driver (no cgo).
//
// In: a file path and Options (retention, output size cap, logger). Out: a
// *Store that the engine writes runs into and the HTTP API and `vmcp runs`
// read from, which survives restarts. Entry point: Open; Close stops the
// background retention loop. The schema, durability, crash recovery and
// truncation rules are explained at the top of sqlite.go.
package sqlite
