package parser

import "testing"

// TestFinallySteps extracts finally steps like steps, with paths under
// finally[i], in both spellings of their fields.
func TestFinallySteps(t *testing.T) {
	src := "name: w\nsteps:\n  - {id: a, tool: b.c}\nfinally:\n  - id: clean\n    tool: b.d\n    depends_on: [other]\n  - {id: other, tool: b.e}\n"
	f, diags := Parse("wf.yaml", []byte(src))
	if len(diags) != 0 || len(f.Workflows) != 1 || len(f.Unknown) != 0 {
		t.Fatalf("Parse = %d workflows, %v, unknown %v; want one clean workflow", len(f.Workflows), diags, f.Unknown)
	}
	w := f.Workflows[0]
	if len(w.Steps) != 1 || len(w.Finally) != 2 || w.FinallyNode == nil {
		t.Fatalf("steps %d, finally %d; want 1 and 2", len(w.Steps), len(w.Finally))
	}
	clean := w.Finally[0]
	if id, _ := clean.ID.Str(); id != "clean" || clean.DependsOn == nil {
		t.Fatalf("finally[0] = %q, dependsOn %v; want clean with dependsOn", id, clean.DependsOn)
	}
	if got, want := clean.DependsOn.Path, "finally[0].depends_on"; got != want {
		t.Errorf("dependsOn path = %q; want %q", got, want)
	}
	if got := clean.DependsOn.Pos; got.Line != 7 || got.Col != 17 {
		t.Errorf("dependsOn pos = %v; want line 7 col 17", got)
	}
}
