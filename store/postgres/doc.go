// Package postgres is a runtime.Store, and the store of authored
// workflows, in a PostgreSQL database (jackc/pgx v5) that several vmcp
// processes share as one service.
//
// In: a postgres:// URL and Options (retention, output size cap, lease
// length, replica name, logger). Out: a *Store that the engine writes runs
// into and every replica's HTTP API, console and MCP tasks read from; it
// holds runs, their steps (a task is its run), and authored workflows and
// their versions. Entry point: Open; Close stops the heartbeat and the
// retention loop. The schema, migrations and write rules are explained at
// the top of postgres.go, the run leases (which replica runs which run,
// taking over a dead replica's runs exactly once, fencing) in lease.go,
// workflow versions in workflows.go.
//
// The column encodings and the recovery and truncation rules are the
// SQLite store's (store/sqlite), so the same conformance suite
// (storetest) holds both to one contract.
package postgres
