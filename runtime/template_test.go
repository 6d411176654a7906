package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
)

func TestComparisons(t *testing.T) {
	cases := []struct {
		fn      string
		a, b    any
		want    bool
		wantErr string
	}{
		{"eq", float64(100), int64(100), true, ""},
		{"eq", int(3), float32(3), true, ""},
		{"eq", json.Number("7"), uint8(7), true, ""},
		{"eq", "a", "a", true, ""},
		{"eq", true, false, false, ""},
		{"eq", nil, nil, true, ""},
		{"eq", "a", nil, false, ""},
		{"eq", "1", int64(1), false, "incompatible types"},
		{"ne", float64(1.5), int64(1), true, ""},
		{"lt", int64(99), float64(99.5), true, ""},
		{"lt", "abc", "abd", true, ""},
		{"le", float64(2), int64(2), true, ""},
		{"gt", float64(150), int64(100), true, ""},
		{"gt", uint64(1 << 63), int64(1), true, ""},
		{"ge", int64(-1), float64(0), false, ""},
		{"lt", true, false, false, "cannot be ordered"},
		{"gt", M{}, M{}, false, "incompatible types"},
	}
	fns := map[string]func(a, b any) (bool, error){
		"eq": func(a, b any) (bool, error) { return eqFunc(a, b) },
		"ne": neFunc, "lt": ltFunc, "le": leFunc, "gt": gtFunc, "ge": geFunc,
	}
	for _, c := range cases {
		got, err := fns[c.fn](c.a, c.b)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s(%#v, %#v) error = %v; want %q", c.fn, c.a, c.b, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s(%#v, %#v) = %v, %v; want %v", c.fn, c.a, c.b, got, err, c.want)
		}
	}
	if ok, err := eqFunc("b", "a", "b"); !ok || err != nil {
		t.Errorf("eq with several candidates = %v, %v; want true", ok, err)
	}
}

func TestTemplateValues(t *testing.T) {
	data := map[string]any{
		"params": M{"n": int64(3), "s": "x", "list": A{"a", "b"}, "obj": M{"k": float64(1.5)}, "nil": nil},
		"steps":  M{"a": M{"output": M{"total": float64(150)}, "status": "completed", "error": ""}},
	}
	checkValues(t, data, []valueCase{
		{"{{.params.n}}", int64(3)},
		{"{{.params.list}}", A{"a", "b"}},
		{"{{ .params.obj }}", M{"k": 1.5}},
		{"{{- .params.obj.k -}}", 1.5},
		{"{{len .params.list}}", int64(2)},
		{"{{gt .steps.a.output.total 100}}", true},
		{"{{index .params.list 1}}", "b"},
		{"{{json .params.list}}", `["a","b"]`},
		{"{{.params.s | printf \"%s-%s\" \"p\"}}", "p-x"},
		{"{{index .params \"absent\"}}", nil},
		{"n={{.params.n}}", "n=3"},
		{"[{{.params.nil}}]", "[]"},
		{"{{if .params.s}}yes{{end}}", "yes"},
		{"{{$x := .params.s}}{{$x}}", "x"},
	})
}

// valueCase is a template and the value it yields.
type valueCase struct {
	src  string
	want any
}

// checkValues parses each case's template and compares its value over data.
func checkValues(t *testing.T, data map[string]any, cases []valueCase) {
	t.Helper()
	funcs := templateFuncs()
	for _, c := range cases {
		tp, err := parseTemplate(tpl(c.src), funcs)
		if err != nil {
			t.Fatalf("parseTemplate(%q) = %v", c.src, err)
		}
		got, err := tp.value(data)
		if err != nil {
			t.Errorf("value(%q) error = %v", c.src, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("value(%q) mismatch (-want +got):\n%s", c.src, diff)
		}
	}
}

func TestVarsErrors(t *testing.T) {
	w := build("badvars", tool("a", "svc.x", M{"v": "{{.vars.x}}"}))
	w.Vars = []*ir.Var{{Name: "x", Value: val("{{.params.missing}}")}}
	w.Vars[0].Value.Template.Pos = at(4, 8)
	fb := newFake(nil)
	e := mustEngine(t, plan(w), Options{Backend: fb})
	run, err := e.Run(context.Background(), "badvars", nil, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != RunFailed || run.Error == nil || run.Error.Pos != at(4, 10) || !strings.Contains(run.Error.Msg, `var "x"`) {
		t.Errorf("run = %s, %v; want failed at the var's template (wf.yaml:4:10)", run.Status, run.Error)
	}
	if len(fb.Calls()) != 0 {
		t.Errorf("backend called %d times after vars failed; want 0", len(fb.Calls()))
	}
}

func TestNoBackend(t *testing.T) {
	e := mustEngine(t, plan(build("nb", tool("a", "svc.x", nil))), Options{})
	if _, err := e.Run(context.Background(), "nb", nil, RunOptions{}); err == nil || !strings.Contains(err.Error(), "no backend") {
		t.Errorf("Run without a backend = %v; want a clear error", err)
	}
	if got := e.Workflows(); len(got) != 1 || got[0].Name != "nb" {
		t.Errorf("Workflows() = %v; want [nb]", got)
	}
	if w, ok := e.Workflow("nb"); !ok || w.Name != "nb" {
		t.Errorf("Workflow(nb) = %v, %v", w, ok)
	}
}

func TestOutputTemplateError(t *testing.T) {
	w := build("outerr", tool("a", "svc.x", nil))
	w.Output = &ir.Output{Properties: []*ir.OutputProperty{{Name: "n", Type: "number", Pos: at(9, 3), Value: &ir.Template{Source: `{{gt .steps.a.output.args "x"}}`, Pos: at(9, 12), Single: true}}}}
	runCase{
		wf:     w,
		status: RunFailed,
		errHas: []string{`output property "n"`, "wf.yaml:9:", "incompatible types"},
	}.run(t)
}
