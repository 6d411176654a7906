// Package demo is the incident-investigation demo and the README's tour.
//
// In: run.sh (what `make demo` runs), its vmcp.yaml, and backends/, the
// demo backend MCP server (one binary, five roles). This package has no
// code of its own; its test, tour_test.go, runs the "A five-minute tour"
// section of README.md from the README's own text, in a copy of the
// repository, and checks each command's output against what the README
// shows. Entry point: go test ./examples/demo.
package demo
