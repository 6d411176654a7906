package main

import (
	"bytes"
	"testing"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/plangraph"
)

// TestPlanSVGIsPlangraph: `vmcpc plan --format svg` prints exactly the
// bytes plangraph.SVG draws (what the web console serves), for every
// workflow of every golden example, chosen with --tool.
func TestPlanSVGIsPlangraph(t *testing.T) {
	repoRoot(t)
	for _, ex := range goldenExamples {
		inputs, err := compiler.Load([]string{"examples/" + ex})
		if err != nil {
			t.Fatal(err)
		}
		plan, diags := compiler.Compile(inputs, compiler.Options{})
		if diags.HasErrors() {
			t.Fatalf("compile examples/%s: %v", ex, diags)
		}
		for _, wf := range plan.Workflows {
			var want bytes.Buffer
			if err := plangraph.SVG(&want, wf, plangraph.Options{}); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			args := []string{"plan", "--format", "svg", "--tool", wf.Name, "examples/" + ex}
			if code := run(args, &stdout, &stderr); code != exitOK || stderr.Len() != 0 {
				t.Fatalf("vmcpc %q = exit %d, stderr:\n%s", args, code, stderr.String())
			}
			if !bytes.Equal(stdout.Bytes(), want.Bytes()) {
				t.Errorf("vmcpc %q differs from plangraph.SVG of the same workflow", args)
			}
		}
	}
}
