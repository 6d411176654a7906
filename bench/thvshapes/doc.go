// Package thvshapes is the vmcp side of the ToolHive comparison
// (bench/toolhive): it runs the six shapes of bench/toolhive/shapes, each
// a vMCP config file that ToolHive's engine loads too, through vmcp's
// compiler and runtime.
//
// # What it measures
//
// BenchmarkVMCP/<shape> loads the shape's file with compiler.Load and
// compiler.Compile (no catalog), builds one runtime.Engine over the plan
// with a zero-latency in-process backend (every call answered at once with
// a fresh {"v": <the call's v>}, as runtime's BenchmarkRun's benchBackend
// answers), the input schemas of bench/toolhive/shapes/tools.json (the
// ones ToolHive's engine gets) and an in-memory store keeping the last 16
// runs, and runs the workflow b.N times. It reports ns/step (wall time
// over b.N times the backend calls of one run), allocs/step and
// cpu-ns/step (process CPU time, GC included), as BenchmarkRun and
// BenchmarkToolHive do. Before the timer it runs the shape once and checks
// the run completed, made the expected calls and passed the right values
// (every argument the integer 1; foreach100's 100 calls of svc.x got the
// items 0..99). TestShapes makes the same checks.
//
// The package lives in the main module because bench/toolhive is its own
// module (so that the main module never builds or fetches ToolHive); it
// reads the shapes from ../toolhive/shapes at run time. compare.sh in
// bench/toolhive runs it and BenchmarkToolHive in alternating rounds.
package thvshapes
