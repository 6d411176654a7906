// Package layering holds no code: its test enforces the house's layout,
// who may import whom and how big a top-level folder may grow.
//
// The layers, from the bottom up (an import may only point down, or
// sideways along an edge the table in layering_test.go names):
//
//	leaves     ir, toolcall, diag, catalog, internal/*    shared types and helpers
//	           (internal/irbuild sits with the compiler: it plans)
//	compiler   parser, checker, planner, compiler,        source -> checked -> ir.Plan,
//	           plangraph, config, authoring/guide         and the config file
//	engine     runtime, runtime/semantictest              the run machine and its driver
//	adapters   mcpclient, mcpserver, store, temporalrun,  what connects the engine to
//	           httpapi, console, authoring, auth,         the world
//	           telemetry
//	programs   cmd/*, bench/*, e2e, examples               wiring, measuring, proving
//
// The test reads the real import graph with `go list` (non-test imports),
// so a new import that breaks a rule fails `go test ./...` with the edge
// named and the rule it breaks.
package layering
