package checker

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/parser"
)

// benchWorkflow builds a 100-step workflow: each step depends on the two
// before it and reads their outputs in three templates.
func benchWorkflow() []byte {
	var b strings.Builder
	b.WriteString("compositeTools:\n  - name: bench\n    description: d\n    parameters:\n      p: {type: string}\n    steps:\n")
	for i := 0; i < maxSteps; i++ {
		fmt.Fprintf(&b, "      - id: s%d\n        tool: b.t%d\n", i, i)
		if i >= 2 {
			fmt.Fprintf(&b, "        dependsOn: [s%d, s%d]\n", i-1, i-2)
			fmt.Fprintf(&b, "        condition: \"{{ne .steps.s%d.status \\\"failed\\\"}}\"\n", i-1)
			b.WriteString("        defaultResults: {v: 0}\n")
		}
		b.WriteString("        arguments:\n")
		fmt.Fprintf(&b, "          a: \"{{.params.p}}\"\n")
		if i >= 2 {
			fmt.Fprintf(&b, "          b: \"x {{.steps.s%d.output.v}} {{index .steps.s%d.output \\\"w\\\"}}\"\n", i-2, i-1)
			fmt.Fprintf(&b, "          c: [\"{{json .steps.s0.output}}\", {d: \"{{.steps.s%d.error}}\"}]\n", i-1)
		}
	}
	return []byte(b.String())
}

func BenchmarkCheck100Steps(b *testing.B) {
	src := benchWorkflow()
	f, pd := parser.Parse("bench.yaml", src)
	if len(pd) > 0 {
		b.Fatalf("parse: %v", pd)
	}
	if _, d := Check([]*parser.File{f}, Options{}); len(d) > 0 {
		b.Fatalf("check: %v", d)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Check([]*parser.File{f}, Options{})
	}
}
