// Package testenv finds what vmcp's end-to-end tests need on the machine:
// the repository root, the npm-installed MCP peers under
// node_modules/.bin, free TCP ports in a test's assigned range, a
// Temporal dev server (temporal.go) and a throwaway PostgreSQL cluster
// (postgres.go).
//
// In: a *testing.T. Out: paths and ports, or a failed test that says how to
// install what is missing (a missing peer is never a skip). Entry points:
// [RepoRoot], [NodeBin], [FreePort], [StartTemporal], [StartPostgres].
package testenv
