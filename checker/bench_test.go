package checker

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/ir"
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

// benchCatalog has 10 backends of 100 tools each (b holds t0..t99, the
// tools benchWorkflow calls), every tool read-only and closed-world.
func benchCatalog() *catalog.Catalog {
	yes, no := true, false
	cat := catalog.New()
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h", "i", "j", "k"} {
		be := &catalog.Backend{}
		for i := 0; i < 100; i++ {
			tool := fmt.Sprintf("t%d", i)
			if name != "b" {
				tool = fmt.Sprintf("%s_tool%d", name, i)
			}
			be.Tools = append(be.Tools, &catalog.Tool{Name: tool, InputSchema: map[string]any{"type": "object"},
				Annotations: &ir.Annotations{ReadOnlyHint: &yes, OpenWorldHint: &no}})
		}
		cat.Backends[name] = be
	}
	return cat
}

// BenchmarkCheck100StepsCatalog checks benchWorkflow against benchCatalog
// with backend.tool references (dotted) and with bare names that each
// resolve against all 1000 tools (bare); both derive the annotations.
func BenchmarkCheck100StepsCatalog(b *testing.B) {
	cat := benchCatalog()
	dotted := benchWorkflow()
	bare := []byte(strings.ReplaceAll(string(dotted), "tool: b.t", "tool: t"))
	for _, bc := range []struct {
		name string
		src  []byte
	}{{"dotted", dotted}, {"bare", bare}} {
		b.Run(bc.name, func(b *testing.B) {
			f, pd := parser.Parse("bench.yaml", bc.src)
			if len(pd) > 0 {
				b.Fatalf("parse: %v", pd)
			}
			if _, d := Check([]*parser.File{f}, Options{Tools: cat}); len(d) > 0 {
				b.Fatalf("check: %v", d)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				Check([]*parser.File{f}, Options{Tools: cat})
			}
		})
	}
}

// BenchmarkCheckPlan100Steps is vmcp run's startup check of a plan.json
// holding benchWorkflow with bare names, compiled without a catalog.
func BenchmarkCheckPlan100Steps(b *testing.B) {
	cat := benchCatalog()
	src := strings.ReplaceAll(string(benchWorkflow()), "tool: b.t", "tool: t")
	f, _ := parser.Parse("bench.yaml", []byte(src))
	wfs, _ := Check([]*parser.File{f}, Options{})
	data, err := ir.Encode(&ir.Plan{Version: ir.Version, Workflows: wfs})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p, err := ir.Decode(data) // CheckPlan resolves in place: a fresh plan each time
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if d := CheckPlan(p, Options{Tools: cat}); len(d) > 0 {
			b.Fatalf("CheckPlan: %v", d)
		}
	}
}
