package runtime

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// literalForEach is a forEach whose collection is the literal list items.
func literalForEach(id string, items []any, inner step, after ...string) step {
	s := forEach(id, "", "kind", inner, after...)
	s.ForEach.Collection = nil
	s.ForEach.Items = val(items)
	return s
}

// A literal collection's strings are templates (typed when they are one
// action), other items are literals; each iteration sees its item.
func TestLiteralCollection(t *testing.T) {
	w := build("lit",
		tool("ns", "svc.ns", nil),
		literalForEach("per_kind", A{"ConfigMap", "{{.params.extra}}", "{{.steps.ns.output.args}}", M{"kind": "Service", "n": 3}},
			tool("", "svc.list", M{"kind": "{{.forEach.kind}}", "i": "{{.forEach.index}}"}), "ns"),
	)
	runCase{
		wf:     w,
		params: M{"extra": "Secret"},
		status: RunCompleted,
		check: func(t *testing.T, run *Run, fb *fakeBackend) {
			out, _ := run.Output.(map[string]any)
			iters, _ := out["iterations"].([]any)
			var got []any
			for _, it := range iters {
				got = append(got, it.(map[string]any)["output"].(map[string]any)["args"].(map[string]any)["kind"])
			}
			want := []any{"ConfigMap", "Secret", M{}, M{"kind": "Service", "n": int64(3)}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("iteration kinds, in order (-want +got):\n%s", diff)
			}
			if len(fb.CallsTo("per_kind")) != 4 {
				t.Errorf("%d calls; want 4", len(fb.CallsTo("per_kind")))
			}
		},
	}.run(t)
}

// A template inside a literal collection that fails names the step and
// the template's position.
func TestLiteralCollectionError(t *testing.T) {
	s := literalForEach("loop", A{"a", "{{.steps.first.output.missing}}"}, tool("", "svc.x", nil), "first")
	s.ForEach.Items.Items[1].Template.Pos = at(7, 11)
	pos := at(7, 13)
	runCase{
		wf:     build("lit", tool("first", "svc.x", nil), s),
		status: RunFailed,
		errPos: &pos,
		errHas: []string{`step "loop"`, "collection:", `has no field "missing"`},
	}.run(t)
}
