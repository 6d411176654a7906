// Package e2e holds vmcp's end-to-end tests: they build the vmcp binary
// (with -race), the test backend (e2e/testbackend) and the demo backends,
// and run them as real processes, with real MCP peers from the npm registry
// (pinned in package.json and installed under node_modules): the MCP
// Inspector CLI and the official TypeScript SDK client (e2e/sdkclient) as
// clients, the MCP conformance suite against `vmcp run --transport http`
// (fixtures in testdata/conformance), server-memory, server-everything and
// server-filesystem as backends, and an mcp-go client.
//
// The npm peers run on the Node.js that package.json pins
// (node_modules/.bin/node, Node 22): TestMain puts node_modules/.bin first
// on PATH, as `make test` does.
//
// In: nothing but the repository and `npm install` having run. Out: test
// results. Run with:
//
//	go test -race -count=1 ./e2e/
//
// Every external process runs under a deadline and is stopped when its
// test ends; the tests check that no backend process outlives vmcp.
package e2e
