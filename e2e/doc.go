// Package e2e holds vmcp's end-to-end tests: they build the vmcp binary
// (with -race), the test backend (e2e/testbackend) and the demo backends,
// and run them as real processes, with real MCP peers from the npm registry
// (the MCP Inspector CLI as a client; server-memory, server-everything and
// server-filesystem as backends, pinned in package.json and installed under
// node_modules) and an mcp-go client.
//
// In: nothing but the repository and `npm install` having run. Out: test
// results. Run with:
//
//	go test -race -count=1 ./e2e/
//
// Every external process runs under a deadline and is stopped when its
// test ends; the tests check that no backend process outlives vmcp.
package e2e
