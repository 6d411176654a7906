// Package toolhivebench measures ToolHive's composite-tool workflow engine
// (github.com/stacklok/toolhive/pkg/vmcp/composer: NewWorkflowEngine, then
// ExecuteWorkflow) on the shapes of vmcp's BenchmarkRun (runtime/bench_test.go),
// so that vmcp's cost per step can be set beside ToolHive's, measured the
// same way on the same machine.
//
// # What it measures
//
// BenchmarkToolHive/<shape> runs one workflow b.N times at zero backend
// latency and reports, as BenchmarkRun does, ns/step (wall time of the runs
// divided by b.N times the backend calls of one run), allocs/step and
// cpu-ns/step (process CPU time, GC included, over the same steps). Before
// the timer it validates the definition once (ToolHive's server does so at
// startup, not per call) and runs the shape once, checking that it
// completes, makes the expected number of backend calls and produces the
// right values (chain10's last v is the integer 1, each forEach iteration's
// v is its item, the joins received 1 from every branch). TestShapes makes
// the same checks.
//
// The shapes are read from shapes/<shape>.yaml (one vMCP config each,
// written by shapes/gen.sh) with ToolHive's config.NewYAMLLoader and
// server.ConvertConfigToWorkflowDefinitions; vmcp's side (BenchmarkVMCP in
// the main module's bench/thvshapes) compiles the same files, and both get
// the input schemas of shapes/tools.json. They are:
// chain10 and chain100 (s0 v=1; s_i v="{{.steps.s_{i-1}.output.v}}" and
// depends on s_{i-1}), wide100 (100 independent steps, v="{{.params.x}}",
// x an integer parameter with default 1), fanout3_fanin1 (root; a, b, c
// read root; join reads a, b and c), diamond (a; b and c read a; d reads b
// and c), foreach100 (a list step whose result holds 100 items, then a
// forEach step over them whose inner tool step reads the item: 101 calls).
// nested10x10 and subworkflow_chain10 have no ToolHive counterpart (a
// forEach's body is one tool step, so loops do not nest and bodies have no
// chains; there is no step that runs another workflow) and are left out.
//
// ToolHive's references are Go text/template strings over .params, .steps
// and .forEach, and always render to strings; the engine turns them back
// into typed values with the called tool's input schema, which is why the
// engine gets a tool list whose schemas declare v (and the joins' b and c)
// integers, as ToolHive's server passes each session's tool list. A forEach
// collection must render a JSON array: here "{{json .steps.list.output.v}}"
// (the json function is ToolHive's own), item variable n, maxIterations 100
// and ToolHive's default parallelism (10, like vmcp's default). Timeouts are
// ToolHive's defaults: 30 minutes for the workflow and 5 minutes for each
// step, each a real context timer.
//
// # How the engine is built
//
// As ToolHive's server builds one per composite-tool call (pkg/vmcp/core),
// with the cheapest choices it allows:
//   - router: ToolHive's own router.NewSessionRouter over a routing table
//     holding the two tools (svc.x, svc.list) under their exact names, so
//     every lookup is its map fast path;
//   - backend: a fake vmcp.BackendClient that answers every call at once
//     with a fresh structured result {"v": <the call's argument v>}, like
//     vmcp's benchBackend (it records calls only in the check run);
//   - elicitation handler, state store, auditor: nil, which
//     NewWorkflowEngine allows and which skips their work. The server passes
//     an in-memory state store, which makes the engine checkpoint the whole
//     workflow state after every tool step, and an auditor when auditing is
//     configured; both would only add cost.
//   - one engine for all runs of a shape; the server builds one per call,
//     which would also add cost.
//
// The engine logs with log/slog: three Info records per workflow and Debug
// records per step. The package sets slog's default to a handler that drops
// everything below Error (Error records, on failure paths only, go to
// stderr), so the benchmark measures the engine, not a log writer.
//
// # Version and module
//
// This directory is its own Go module, so the main module's go build, go
// vet, go test ./... and CI never build it or fetch ToolHive. It uses
// ToolHive v0.47.0, the newest release that builds here: every later one on
// the Go module proxy (v0.55.1 to v0.63.0) needs Go 1.27 and, in the
// composer's import graph, modules whose versions the proxy answers 403
// for (github.com/jwx-go/jwkfetch/v4 v4.0.4, golang.org/x/exp/jsonrpc2
// v0.0.0-20261014143641-f0251eb4aa3e, github.com/stacklok/toolhive-core/redisconn
// v0.0.4 to v0.0.58). Between v0.47.0 and v0.63.0 the composer package
// changes only in the elicitation skip_remaining path and its retry library
// (cenkalti/backoff v5 to v7); the template expander and its functions,
// schema coercion, the session router's tool routing, content conversion and
// parameter-header derivation these shapes run are the same code (other
// dependencies' versions and the Go release differ). v0.47.0 builds with
// Go 1.26, the toolchain vmcp's side uses, so both sides run on the same
// compiler and runtime. To
// move to a newer release once it builds: go get
// github.com/stacklok/toolhive@vX, add the toolchain line it needs (for
// example "toolchain go1.27.4"), go mod tidy; compare.sh builds with the
// go.mod's toolchain line as GOTOOLCHAIN.
//
// # Running it
//
// Side by side with vmcp (from anywhere; rounds default to 4, each
// benchmark -test.benchtime 0.5s, BENCHTIME overrides):
//
//	bench/toolhive/compare.sh [rounds]
//
// It builds the test binaries of vmcp's ./runtime and of this module once,
// runs the rounds alternating vmcp's BenchmarkRun and BenchmarkToolHive on
// the six shapes, and prints per shape the min and median ns/step of each
// and the ratio of the medians (ToolHive / vmcp). This module alone:
//
//	cd bench/toolhive && go test -run '^$' -bench . -benchtime 0.5s
package toolhivebench
