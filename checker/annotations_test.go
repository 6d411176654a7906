package checker

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/parser"
)

// showAnnotations prints annotations as "title=T readOnlyHint=true ...
// derived=[...]", hints that are unset left out.
func showAnnotations(a *ir.Annotations) string {
	if a == nil {
		return "none"
	}
	var parts []string
	if a.Title != "" {
		parts = append(parts, "title="+a.Title)
	}
	for _, h := range []struct {
		name string
		v    *bool
	}{{"readOnlyHint", a.ReadOnlyHint}, {"destructiveHint", a.DestructiveHint}, {"idempotentHint", a.IdempotentHint}, {"openWorldHint", a.OpenWorldHint}} {
		if h.v != nil {
			parts = append(parts, fmt.Sprintf("%s=%v", h.name, *h.v))
		}
	}
	if len(a.Derived) > 0 {
		parts = append(parts, "derived="+strings.Join(a.Derived, ","))
	}
	return strings.Join(parts, " ")
}

// TestAnnotationFloorDerived checks the annotations a workflow gets from
// its steps' tools (testdata/tools.json), merged with the explicit ones.
func TestAnnotationFloorDerived(t *testing.T) {
	cat := loadTestCatalog(t)
	for _, tt := range []struct {
		name, annotations, steps, want string
	}{
		{"all read-only and closed", "", `[{id: a, tool: docs.search}, {id: b, tool: echo, arguments: {input: x}}]`,
			"readOnlyHint=true destructiveHint=false openWorldHint=false derived=destructiveHint,openWorldHint,readOnlyHint"},
		{"one open-world step", "", `[{id: a, tool: docs.search}, {id: b, tool: github.search}]`,
			"readOnlyHint=true destructiveHint=false openWorldHint=true derived=destructiveHint,openWorldHint,readOnlyHint"},
		{"a writer that is not destructive", "", `[{id: a, tool: github.create_issue, arguments: {owner: a, repo: b, title: c}}]`,
			"readOnlyHint=false destructiveHint=false openWorldHint=true derived=destructiveHint,openWorldHint,readOnlyHint"},
		{"unknown annotations are unsafe", "", `[{id: a, tool: docs.search}, {id: b, tool: docs.publish}]`,
			"readOnlyHint=false destructiveHint=true openWorldHint=true derived=destructiveHint,openWorldHint,readOnlyHint"},
		{"explicit hints merge over the floor", "{title: Look, idempotentHint: true, openWorldHint: true}", `[{id: a, tool: docs.search}]`,
			"title=Look readOnlyHint=true destructiveHint=false idempotentHint=true openWorldHint=true derived=destructiveHint,readOnlyHint"},
		{"more careful than the floor", "{readOnlyHint: false}", `[{id: a, tool: docs.search}]`,
			"readOnlyHint=false destructiveHint=false openWorldHint=false derived=destructiveHint,openWorldHint"},
		{"no tool steps, no floor", "{title: Ask}", `[{id: q, type: elicitation, message: m, schema: {type: object, properties: {ok: {type: boolean}}}}]`,
			"title=Ask"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := "name: w\ndescription: d\nsteps: " + tt.steps + "\n"
			if tt.annotations != "" {
				src += "annotations: " + tt.annotations + "\n"
			}
			f, pd := parser.Parse("w.yaml", []byte(src))
			wfs, diags := Check([]*parser.File{f}, Options{Tools: cat})
			if all := append(pd, diags...); len(all) > 0 || len(wfs) != 1 {
				t.Fatalf("Check = %d workflows, %v; want one and no diagnostics", len(wfs), all)
			}
			if got := showAnnotations(wfs[0].Annotations); got != tt.want {
				t.Errorf("annotations = %s\n                 want %s", got, tt.want)
			}
		})
	}
}

// TestAnnotationFloorWithoutCatalog checks that, with no catalog, the
// annotations stay as written: nothing can be derived yet.
func TestAnnotationFloorWithoutCatalog(t *testing.T) {
	src := "name: w\ndescription: d\nannotations: {readOnlyHint: true}\nsteps: [{id: a, tool: docs.publish}]\n"
	f, _ := parser.Parse("w.yaml", []byte(src))
	wfs, diags := Check([]*parser.File{f}, Options{})
	if len(diags) > 0 || len(wfs) != 1 {
		t.Fatalf("Check = %d workflows, %v; want one and no diagnostics", len(wfs), diags)
	}
	if diff := cmp.Diff("readOnlyHint=true", showAnnotations(wfs[0].Annotations)); diff != "" {
		t.Errorf("annotations differ (-want +got):\n%s", diff)
	}
}

// TestUnsafeAnnotationDetail checks that the error lists every offending
// step and says how to fix it.
func TestUnsafeAnnotationDetail(t *testing.T) {
	src := `name: w
description: d
annotations: {readOnlyHint: true}
steps:
  - {id: a, tool: docs.publish}
  - {id: b, tool: docs.search}
  - {id: c, tool: github.create_issue, arguments: {owner: a, repo: b, title: c}}
`
	f, _ := parser.Parse("w.yaml", []byte(src))
	_, diags := Check([]*parser.File{f}, Options{Tools: loadTestCatalog(t)})
	if len(diags) != 1 || diags[0].Code != CodeUnsafeAnnotation {
		t.Fatalf("Check = %v; want one unsafe_annotation", diags)
	}
	d := diags[0]
	if d.Pos.String() != "w.yaml:3:15" || d.Path != "annotations.readOnlyHint" {
		t.Errorf("position = %s %s; want w.yaml:3:15 annotations.readOnlyHint", d.Pos, d.Path)
	}
	want := []string{
		`step "a" is at w.yaml:5:19; a composite tool can be no safer than its steps, so remove readOnlyHint (vmcp derives it from the steps' tools) or set it to false`,
		`also: step "c" (w.yaml:7:19) calls github.create_issue, which is not read-only`,
	}
	if diff := cmp.Diff(want, d.Detail); diff != "" {
		t.Errorf("detail differs (-want +got):\n%s", diff)
	}
}
