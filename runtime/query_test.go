package runtime

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
)

// The checker parses templates against ir.TemplateFuncs; the runtime must
// implement exactly those names.
func TestWorkflowFuncsMatchIR(t *testing.T) {
	var got []string
	for name := range workflowFuncs(0) {
		got = append(got, name)
	}
	sort.Strings(got)
	if !slices.Equal(got, ir.TemplateFuncs) {
		t.Errorf("workflowFuncs() implements %v; ir.TemplateFuncs lists %v", got, ir.TemplateFuncs)
	}
	funcs := templateFuncs()
	for _, name := range ir.TemplateFuncs {
		if funcs[name] == nil {
			t.Errorf("templateFuncs() lacks %q", name)
		}
	}
}

func TestQueryValues(t *testing.T) {
	data := map[string]any{
		"params": M{"expr": "items[0].name", "n": int64(2)},
		"steps": M{"list": M{"output": M{"items": A{
			M{"name": "a", "size": int64(1), "owner": "x"},
			M{"name": "b", "size": int64(3), "owner": "y"},
			M{"name": "c", "size": float64(5.5), "owner": "x"},
		}}}},
	}
	checkValues(t, data, []valueCase{
		// Integers (int64 in plans) compare as numbers.
		{"{{query \"items[?size > `1`].name\" .steps.list.output}}", A{"b", "c"}},
		{"{{query \"items[].{n: name, s: size}\" .steps.list.output}}", A{M{"n": "a", "s": int64(1)}, M{"n": "b", "s": int64(3)}, M{"n": "c", "s": 5.5}}},
		{"{{query \"sum(items[].size)\" .steps.list.output}}", 9.5},
		{"{{query \"length(items)\" .steps.list.output}}", int64(3)},
		{"{{query \"let $o = 'x' in items[?owner == $o].name\" .steps.list.output}}", A{"a", "c"}},
		{"{{.steps.list.output | query \"items[-1].name\"}}", "c"},
		{"{{query .params.expr .steps.list.output}}", "a"},
		{"{{query \"@\" .params.n}}", int64(2)},
		{"{{query \"nothing\" .steps.list.output}}", nil},
		{"names: {{query \"join(', ', items[].name)\" .steps.list.output}}", "names: a, b, c"},
		{"{{len (query \"items[?owner == 'x']\" .steps.list.output)}}", int64(2)},
	})
}

// A computed expression that does not parse, and one that fails on the
// data, fail the step with its id and the template's file position, and
// never show the data.
func TestQueryRuntimeErrors(t *testing.T) {
	cases := []struct {
		name, expr string
		errHas     []string
	}{
		{"syntax", "items[", []string{"does not parse (at the end of the expression): expected '*' but the query ended"}},
		{"type", "abs(@)", []string{"the JMESPath expression failed", `abs(): an argument has the wrong type; it must be "number"`}},
		{"function", "nope(@)", []string{"unknown function nope()"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := build("q", tool("a", "svc.x", M{"v": "{{query .params.expr .params.secret}}"}))
			w.Steps[0].Arguments.Fields[0].Value.Template.Pos = at(12, 14)
			pos := at(12, 16)
			runCase{
				wf:     w,
				params: M{"expr": c.expr, "secret": "s3cr3t-value"},
				status: RunFailed,
				errPos: &pos,
				errHas: append([]string{`step "a"`, "arguments:", "query"}, c.errHas...),
				check: func(t *testing.T, run *Run, fb *fakeBackend) {
					if strings.Contains(run.Error.Error(), "s3cr3t") {
						t.Errorf("error %q shows a parameter value", run.Error)
					}
					if len(fb.Calls()) != 0 {
						t.Errorf("backend called %d times; want 0", len(fb.Calls()))
					}
				},
			}.run(t)
		})
	}
}

// BenchmarkQuery measures one typed query over a step output of n items:
// the cached compile, the float64 copy of the value and the search.
func BenchmarkQuery(b *testing.B) {
	for _, c := range []struct {
		n    int
		kind string
		num  func(i int) any
	}{
		{10, "int64", func(i int) any { return int64(i) }},
		{1000, "int64", func(i int) any { return int64(i) }},
		{1000, "float64", func(i int) any { return float64(i) }}, // as a backend's JSON output
	} {
		n := c.n
		items := make(A, n)
		for i := range items {
			items[i] = M{"name": "pod", "size": c.num(i), "owner": "x"}
		}
		data := map[string]any{"steps": M{"list": M{"output": M{"items": items}}}}
		src := "{{query \"items[?size > `5`].name\" .steps.list.output}}"
		tp, err := parseTemplate(&ir.Template{Source: src, Pos: at(1, 1), Single: true}, templateFuncs())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("items%d_%s", n, c.kind), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tp.value(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// jmespathValue leaves float64-only values alone and never changes its
// input.
func TestJMESPathValueCopiesOnlyWhatChanges(t *testing.T) {
	floats := M{"a": A{1.5, M{"b": 2.0}}, "s": "x"}
	if got := jmespathValue(floats, 0); !sameMap(got, floats) {
		t.Errorf("jmespathValue of a float64-only value made a copy")
	}
	ints := M{"a": A{int64(1), M{"b": 2.0}}, "s": "x"}
	got := jmespathValue(ints, 0)
	want := M{"a": A{1.0, M{"b": 2.0}}, "s": "x"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("jmespathValue mismatch (-want +got):\n%s", diff)
	}
	if ints["a"].(A)[0] != int64(1) {
		t.Errorf("jmespathValue changed its input: %v", ints)
	}
}

func sameMap(a any, b map[string]any) bool {
	m, ok := a.(map[string]any)
	return ok && reflect.ValueOf(m).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
