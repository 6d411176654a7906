package compiler

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/internal/fuzzkit"
	"github.com/vmcp-dev/vmcp/ir"
)

// FuzzCompile runs the whole pipeline on arbitrary input. It must never
// panic or hang, and its result must be consistent: errors and a plan
// never come together, a plan always survives Encode and Decode, and every
// diagnostic has a code and a message and prints.
//
// The seeds are the examples' and the corpus's workflows one at a time
// (see fuzzkit).
//
//	go test -run '^$' -fuzz '^FuzzCompile$' -fuzztime 30s -fuzzminimizetime 500x ./compiler
func FuzzCompile(f *testing.F) {
	for _, seed := range fuzzkit.Files(f, []string{
		"../examples/*.yaml", "../examples/*.json",
		"../testdata/corpus/toolhive/snippets/*.yaml",
		"../testdata/corpus/toolhive/upstream/*/*/*.yaml",
		"../testdata/corpus/toolhive/upstream/*/*/*/*.yaml",
	}) {
		f.Add(seed)
	}
	f.Add(genWorkflow(10))
	f.Add([]byte("compositeTools:\n  - name: x\n    description: d\n    steps:\n      - {id: a, tool: b.c, dependsOn: [a]}\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > fuzzkit.MaxInput {
			return
		}
		in := []Source{{Name: "fuzz.yaml", Src: src}}
		p, diags := compileWithin(t, in, hangLimit)
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
			if g := fuzzkit.GoText(d.Message+strings.Join(d.Detail, "\n"), string(src)); g != "" {
				t.Errorf("diagnostic renders Go's %q: %s", g, d)
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

// hangLimit is far above the milliseconds a fuzz input takes; an input
// that runs longer is a hang.
const hangLimit = 10 * time.Second

// compileWithin runs Compile and fails the test, keeping the input as a
// crasher, when it does not return within limit. (The stuck goroutine is
// abandoned; the fuzz worker exits after the failure.)
func compileWithin(t *testing.T, in []Source, limit time.Duration) (*ir.Plan, diag.List) {
	t.Helper()
	type result struct {
		p     *ir.Plan
		diags diag.List
	}
	done := make(chan result, 1)
	go func() {
		p, diags := Compile(in, Options{})
		done <- result{p, diags}
	}()
	select {
	case r := <-done:
		return r.p, r.diags
	case <-time.After(limit):
		t.Fatalf("Compile did not return within %v (a hang) on %d bytes of input", limit, len(in[0].Src))
		return nil, nil
	}
}
