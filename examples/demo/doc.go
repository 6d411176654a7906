// Package demo is the incident-investigation demo, the README's tour and
// the tests of the documentation.
//
// In: run.sh (what `make demo` runs), its vmcp.yaml, and backends/, the
// demo backend MCP server (one binary, five roles). This package has no
// code of its own; its test, tour_test.go, runs the "A five-minute tour"
// section of README.md from the README's own text, in a copy of the
// repository, and checks each command's output against what the README
// shows; authoring_session_test.go runs the agent session of
// docs/authoring.md the same way; links_test.go checks every relative
// link and anchor of README.md and docs/*.md. Entry point:
// go test ./examples/demo.
package demo
