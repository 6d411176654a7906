package checker

import (
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/parser"
)

const loopSource = `compositeTools:
  - name: loop
    description: a loop
    steps:
      - id: each
        type: forEach
        collection: [a, b]
        maxIterations: 1500
        step: {tool: b.c}
      - id: implicit
        type: forEach
        collection: [a, b]
        step: {tool: b.c}
`

// Options.MaxIterations (limits.maxIterations) replaces the default cap of
// 1000 on a forEach's maxIterations, up or down; a loop that sets none
// gets min(100, the cap).
func TestIterationLimitOption(t *testing.T) {
	f, pd := parser.Parse("loop.yaml", []byte(loopSource))
	if len(pd) > 0 {
		t.Fatal(pd)
	}
	_, diags := Check([]*parser.File{f}, Options{})
	if len(diags) != 1 || !strings.Contains(diags[0].String(), "loop.yaml:8:24: error: maxIterations is 1500; it must be between 1 and 1000") {
		t.Errorf("Check with the default limit = %v; want one error at maxIterations: 1500", diags)
	}
	wfs, diags := Check([]*parser.File{f}, Options{MaxIterations: 2000})
	if len(diags) != 0 || len(wfs) != 1 {
		t.Fatalf("Check with limit 2000 = %v; want no diagnostics", diags)
	}
	if got := wfs[0].Steps[0].ForEach.MaxIterations; got != 1500 {
		t.Errorf("maxIterations = %d; want 1500", got)
	}
	if got := wfs[0].Steps[1].ForEach.MaxIterations; got != 100 {
		t.Errorf("default maxIterations under limit 2000 = %d; want 100", got)
	}
	_, diags = Check([]*parser.File{f}, Options{MaxIterations: 50})
	if len(diags) != 1 || !strings.Contains(diags[0].String(), "it must be between 1 and 50") || !strings.Contains(strings.Join(diags[0].Detail, " "), "limits.maxIterations") {
		t.Errorf("Check with limit 50 = %v; want one error naming limits.maxIterations", diags)
	}
	implicit, _ := parser.Parse("implicit.yaml", []byte(strings.Replace(loopSource, "        maxIterations: 1500\n", "", 1)))
	wfs, diags = Check([]*parser.File{implicit}, Options{MaxIterations: 50})
	if len(diags) != 0 || len(wfs) != 1 {
		t.Fatalf("Check of loops without maxIterations under limit 50 = %v; want no diagnostics", diags)
	}
	if got := wfs[0].Steps[1].ForEach.MaxIterations; got != 50 {
		t.Errorf("default maxIterations under limit 50 = %d; want 50", got)
	}
}
