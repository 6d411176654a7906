package checker

import (
	"testing"

	"github.com/vmcp-dev/vmcp/parser"
)

// TestWorkflowStepAnnotationFloor: a caller's derived hints come from its
// callees' final annotations, callees first whatever the source order.
func TestWorkflowStepAnnotationFloor(t *testing.T) {
	src := `compositeTools:
  - name: outer
    description: runs middle
    steps: [{id: sub, type: workflow, workflow: middle}]
  - name: middle
    description: runs reader
    steps: [{id: sub, type: workflow, workflow: reader}]
  - name: reader
    description: only searches
    steps: [{id: look, tool: docs.search}]
  - name: mixed
    description: a reader and a writer
    steps:
      - {id: r, type: workflow, workflow: reader}
      - {id: w, tool: github.create_issue, arguments: {owner: a, repo: b, title: c}}
`
	f, pd := parser.Parse("wf.yaml", []byte(src))
	wfs, diags := Check([]*parser.File{f}, Options{Tools: loadTestCatalog(t)})
	if pd.HasErrors() || diags.HasErrors() || len(wfs) != 4 {
		t.Fatalf("Check = %d workflows, %v %v; want 4 and no errors", len(wfs), pd, diags)
	}
	for _, wf := range wfs {
		a := wf.Annotations
		if a == nil || a.ReadOnlyHint == nil {
			t.Fatalf("%s has no derived readOnlyHint: %+v", wf.Name, a)
		}
		if want := wf.Name != "mixed"; *a.ReadOnlyHint != want {
			t.Errorf("%s readOnlyHint = %v; want %v (from its callees)", wf.Name, *a.ReadOnlyHint, want)
		}
	}
}
