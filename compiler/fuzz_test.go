package compiler

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
)

// FuzzCompile runs the whole pipeline on arbitrary input. It must never
// panic or hang, and its result must be consistent: errors and a plan
// never come together, a plan always survives Encode and Decode, and every
// diagnostic has a code and a message and prints.
//
//	go test -run '^$' -fuzz FuzzCompile -fuzztime 60s ./compiler
func FuzzCompile(f *testing.F) {
	for _, pattern := range []string{
		"../examples/*.yaml", "../examples/*.json",
		"../testdata/corpus/toolhive/snippets/*.yaml",
		"../testdata/corpus/toolhive/upstream/*/*/*.yaml",
		"../testdata/corpus/toolhive/upstream/*/*/*/*.yaml",
	} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			src, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
		}
	}
	f.Add(genWorkflow(10))
	f.Add([]byte("compositeTools:\n  - name: x\n    description: d\n    steps:\n      - {id: a, tool: b.c, dependsOn: [a]}\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		in := []Source{{Name: "fuzz.yaml", Src: src}}
		p, diags := Compile(in, Options{})
		if diags.HasErrors() && p != nil {
			t.Fatalf("Compile returned a plan and errors: %v", diags)
		}
		if !diags.HasErrors() && p == nil {
			t.Fatalf("Compile returned neither a plan nor errors")
		}
		for _, d := range diags {
			if d.Code == "" || d.Message == "" {
				t.Errorf("diagnostic without code or message: %+v", d)
			}
			if strings.Contains(d.Message, "<no value>") {
				t.Errorf("diagnostic renders <no value>: %s", d)
			}
		}
		for _, format := range []diag.Format{diag.Text, diag.JSON, diag.GitHub} {
			if err := diag.Print(io.Discard, diags, format, Sources(in)); err != nil {
				t.Errorf("diag.Print(%s): %v", format, err)
			}
		}
		if p == nil {
			return
		}
		data, err := ir.Encode(p)
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		if _, err := ir.Decode(data); err != nil {
			t.Fatalf("Decode(Encode(plan)) = %v", err)
		}
		for _, w := range p.Workflows {
			if len(w.CriticalPath) != w.Stats.TotalLevels {
				t.Errorf("workflow %q: critical path of %d steps but %d levels", w.Name, len(w.CriticalPath), w.Stats.TotalLevels)
			}
		}
	})
}
