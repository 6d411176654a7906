package parser

import (
	"fmt"
	"strings"
	"testing"
)

// benchWorkflow is a Kubernetes definition with n steps, each with a
// condition, arguments holding templates, dependencies and an onError.
func benchWorkflow(n int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: toolhive.stacklok.dev/v1beta1\nkind: VirtualMCPCompositeToolDefinition\n")
	b.WriteString("metadata:\n  name: bench\nspec:\n  name: bench\n  description: benchmark\n")
	b.WriteString("  parameters:\n    type: object\n    properties:\n      q: {type: string}\n  steps:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "    - id: step_%d\n      tool: backend.tool_%d\n", i, i%7)
		if i > 0 {
			fmt.Fprintf(&b, "      dependsOn: [step_%d]\n", i-1)
			fmt.Fprintf(&b, "      condition: \"{{ne .steps.step_%d.status \\\"failed\\\"}}\"\n", i-1)
		}
		fmt.Fprintf(&b, "      arguments:\n        query: \"{{.params.q}} #%d\"\n        body: |\n          step %d of the run\n          previous: {{.steps.step_%d.output}}\n", i, i, max(i-1, 0))
		b.WriteString("        options: {limit: 10, verbose: true, tags: [a, b]}\n")
		b.WriteString("      onError:\n        action: retry\n        maxRetries: 3\n        retryDelay: 1s\n")
	}
	return []byte(b.String())
}

func BenchmarkParse(b *testing.B) {
	src := benchWorkflow(100)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		f, diags := Parse("bench.yaml", src)
		if len(diags) > 0 || len(f.Workflows) != 1 || len(f.Workflows[0].Steps) != 100 {
			b.Fatalf("Parse(bench) = %d workflows, %v", len(f.Workflows), diags)
		}
	}
}

// BenchmarkParseMinifiedJSON parses a 1,000-step workflow written as one
// line of JSON, the case where position conversions walk long lines.
func BenchmarkParseMinifiedJSON(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"name":"big","steps":[`)
	for i := 0; i < 1000; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"id":"s%d","tool":"a.b","arguments":{"x":"é {{.params.q}}","n":%d,"l":[1,2,3]}}`, i, i)
	}
	sb.WriteString("]}")
	src := []byte(sb.String())
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if f, diags := Parse("big.json", src); len(diags) > 0 || len(f.Workflows[0].Steps) != 1000 {
			b.Fatalf("Parse(big.json): %v", diags)
		}
	}
}
