// Command tokens measures the paper's token claim (its Tables 3 to 5) on
// two workflows: the README tour's incident investigation (examples/demo) and
// the CMDB sync (examples/cmdb). It counts the bytes, and tokens at 4
// bytes a token, that pass through an agent's context
//
//   - with the agent in the loop: every backend's tool list, each
//     tools/call request it writes and each result it reads;
//   - through one composite call: the composite tool's definition, the
//     call and its result;
//   - in the design loop, once: the guide, the schema, the
//     vmcp_backend_tools answer, the draft checked, the check's answer and
//     the save;
//
// and prints the totals and the amortised comparison for 1, 10 and 365
// runs as markdown tables. measure.go explains how the bytes are taken
// from the wire: a real `vmcp run` over stdio, its backends the real
// example servers started through a recording proxy (proxy.go, this same
// binary). Nothing is estimated except the rule of 4 bytes per token.
//
// Run it from the repository:
//
//	go run ./bench/tokens
//
// Its test (go test ./bench/tokens) runs the same measurement and fails
// when the table differs from testdata/tokens.golden or docs/performance.md
// lacks it; go test ./bench/tokens -update rewrites the golden file.
package main
