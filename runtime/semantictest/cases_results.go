package semantictest

import (
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// The composite result, forEach loops and argument coercion.

func resultCases() []Case {
	withOutput := func(w *ir.Workflow, required []string, props ...*ir.OutputProperty) *ir.Workflow {
		w.Output = &ir.Output{Properties: props, Required: required}
		return w
	}
	prop := func(name, typ, value string) *ir.OutputProperty {
		p := &ir.OutputProperty{Name: name, Type: typ, Pos: at(40, 3)}
		if value != "" {
			p.Value = tpl(value)
		}
		return p
	}
	withDefault := func(p *ir.OutputProperty, d any) *ir.OutputProperty {
		p.Default, p.HasDefault = d, true
		return p
	}
	data := map[string]*fakeTool{"svc.x": {Result: structured(M{"total": float64(12), "name": "n1", "items": A{"x"}})}}
	cases := []Case{
		{
			name:    "single sink output",
			wf:      build("one", tool("a", "svc.x", nil), tool("b", "svc.x", nil, "a")),
			tools:   data,
			status:  runtime.RunCompleted,
			wantOut: true,
			output:  M{"total": float64(12), "name": "n1", "items": A{"x"}},
		},
		{
			name:    "several sinks keyed by id",
			wf:      build("two", tool("a", "svc.x", nil), tool("b", "svc.txt", nil)),
			tools:   map[string]*fakeTool{"svc.x": data["svc.x"], "svc.txt": {Text: []string{"t"}}},
			status:  runtime.RunCompleted,
			wantOut: true,
			output:  M{"a": M{"total": float64(12), "name": "n1", "items": A{"x"}}, "b": M{"text": "t"}},
		},
		{
			name: "typed properties, nesting and defaults",
			wf: withOutput(build("typed", tool("a", "svc.x", nil)), []string{"total"},
				prop("total", "integer", "{{.steps.a.output.total}}"),
				prop("label", "string", "{{.steps.a.output.name}}-{{.steps.a.output.total}}"),
				prop("count", "integer", "{{len .steps.a.output.items}}"),
				prop("flag", "boolean", "{{gt .steps.a.output.total 10}}"),
				withDefault(prop("missing", "string", "{{.steps.a.output.nope}}"), "none"),
				prop("omitted", "string", "{{.steps.a.output.nope}}"),
				&ir.OutputProperty{Name: "nested", Type: "object", Properties: []*ir.OutputProperty{
					prop("items", "array", "{{.steps.a.output.items}}"),
					prop("n", "number", "{{.steps.a.output.total}}"),
				}},
			),
			tools:   data,
			status:  runtime.RunCompleted,
			wantOut: true,
			output: M{"total": int64(12), "label": "n1-12", "count": int64(1), "flag": true, "missing": "none",
				"nested": M{"items": A{"x"}, "n": float64(12)}},
		},
		{
			name: "required property missing is an error with its position",
			wf: withOutput(build("req", tool("a", "svc.x", nil)), []string{"must"},
				prop("must", "string", "{{.steps.a.output.nope}}"),
			),
			tools:  data,
			status: runtime.RunFailed,
			errHas: []string{`output property "must" is required`},
			errPos: &ir.Pos{File: "wf.yaml", Line: 40, Col: 3},
		},
		{
			name: "value that cannot take its type fails",
			wf: withOutput(build("badtype", tool("a", "svc.x", nil)), nil,
				prop("n", "integer", "{{.steps.a.output.name}}"),
			),
			tools:  data,
			status: runtime.RunFailed,
			errHas: []string{`output property "n"`, "integer"},
		},
	}
	return cases
}

func forEachCases() []Case {
	pkgs := A{M{"name": "a"}, M{"name": "b"}, M{"name": "c"}}
	lister := &fakeTool{Result: structured(M{"pkgs": pkgs, "json": `[{"name":"a"},{"name":"b"}]`, "notarray": M{}})}
	scan := func(args M) any { return M{"pkg": args["name"], "i": args["i"]} }
	iter := func(i int64, item any, status string, out any, err string) M {
		return M{"index": i, "item": item, "status": status, "output": out, "error": err}
	}
	cases := []Case{
		{
			name: "iterates a typed array with item and index",
			wf: build("fe",
				tool("list", "svc.list", nil),
				forEach("scan", "{{.steps.list.output.pkgs}}", "pkg", tool("", "svc.scan", M{"name": "{{.forEach.pkg.name}}", "i": "{{.forEach.index}}"}), "list"),
			),
			tools:   map[string]*fakeTool{"svc.list": lister, "svc.scan": {Result: scan}},
			status:  runtime.RunCompleted,
			wantOut: true,
			output: M{"count": int64(3), "completed": int64(3), "failed": int64(0), "skipped": int64(0), "iterations": A{
				iter(0, pkgs[0], "completed", M{"pkg": "a", "i": int64(0)}, ""),
				iter(1, pkgs[1], "completed", M{"pkg": "b", "i": int64(1)}, ""),
				iter(2, pkgs[2], "completed", M{"pkg": "c", "i": int64(2)}, ""),
			}},
		},
		{
			name: "a JSON string collection is parsed",
			wf: build("fejson",
				tool("list", "svc.list", nil),
				forEach("scan", "{{.steps.list.output.json}}", "item", tool("", "svc.scan", M{"name": "{{.forEach.item.name}}"}), "list"),
			),
			tools:  map[string]*fakeTool{"svc.list": lister, "svc.scan": {Result: scan}},
			status: runtime.RunCompleted,
			check: func(t *testing.T, run *runtime.Run, fb *fakeBackend) {
				out := run.Output.(M)
				if !isNumber(out["count"], 2) {
					t.Errorf("forEach over a JSON string: count = %v; want 2", out["count"])
				}
			},
		},
		{
			name: "collection that is not an array fails naming its type",
			wf: build("fenot",
				tool("list", "svc.list", nil),
				forEach("scan", "{{.steps.list.output.notarray}}", "item", tool("", "svc.scan", nil), "list"),
			),
			tools:  map[string]*fakeTool{"svc.list": lister},
			status: runtime.RunFailed,
			errHas: []string{`step "scan"`, "collection must be an array; it is an object"},
		},
		{
			name: "more items than maxIterations fails before any call",
			wf: build("fecap",
				tool("list", "svc.list", nil),
				forEach("scan", "{{.steps.list.output.pkgs}}", "item", tool("", "svc.scan", nil), "list").With(func(s *ir.Step) { s.ForEach.MaxIterations = 2 }),
			),
			tools:  map[string]*fakeTool{"svc.list": lister},
			status: runtime.RunFailed,
			errHas: []string{"collection has 3 items, more than maxIterations (2)"},
			check: func(t *testing.T, run *runtime.Run, fb *fakeBackend) {
				if n := len(fb.CallsTo("scan")); n != 0 {
					t.Errorf("backend calls for scan = %d; want 0", n)
				}
			},
		},
		{
			name: "onError continue with failing iterations",
			wf: build("fecont2",
				tool("list", "svc.list", nil),
				forEach("scan", "{{.steps.list.output.pkgs}}", "item", tool("", "svc.bad", M{"name": "{{.forEach.item.name}}"}), "list").With(onError(ir.ActionContinue, 0)),
			),
			tools:  map[string]*fakeTool{"svc.list": lister, "svc.bad": {IsError: true}},
			status: runtime.RunCompleted,
			steps:  map[string]runtime.StepStatus{"scan": runtime.StepCompleted},
			check: func(t *testing.T, run *runtime.Run, fb *fakeBackend) {
				out := run.Output.(M)
				if !isNumber(out["completed"], 0) || !isNumber(out["failed"], 3) || !isNumber(out["count"], 3) {
					t.Errorf("forEach counts = completed %v failed %v; want 0 and 3", out["completed"], out["failed"])
				}
				first := out["iterations"].(A)[0].(M)
				if first["status"] != "failed" || !strings.Contains(first["error"].(string), "quota exceeded") {
					t.Errorf("iteration 0 = %v; want failed with the tool's text", first)
				}
				if n := len(fb.CallsTo("scan")); n != 3 {
					t.Errorf("calls = %d; want 3 (every iteration runs)", n)
				}
			},
		},
		{
			name: "abort: the first failure fails the step",
			wf: build("feabort",
				tool("list", "svc.list", nil),
				forEach("scan", "{{.steps.list.output.pkgs}}", "item", tool("", "svc.bad", nil), "list").With(func(s *ir.Step) { s.ForEach.MaxParallel = 1 }),
			),
			tools:  map[string]*fakeTool{"svc.list": lister, "svc.bad": {IsError: true}},
			status: runtime.RunFailed,
			errHas: []string{`step "scan"`, `iteration 0 (name "a"): `, "quota exceeded"},
			check: func(t *testing.T, run *runtime.Run, fb *fakeBackend) {
				if n := len(fb.CallsTo("scan")); n != 1 {
					t.Errorf("calls after the first failure = %d; want 1 (maxParallel 1, abort)", n)
				}
			},
		},
		{
			name: "the inner step's timeout bounds each iteration",
			wf: build("fetimeout",
				tool("list", "svc.list", nil),
				forEach("scan", "{{.steps.list.output.pkgs}}", "item", tool("", "svc.hang", nil).With(timeout(20*time.Millisecond)), "list").With(onError(ir.ActionContinue, 0)),
			),
			tools:  map[string]*fakeTool{"svc.list": lister, "svc.hang": {Hang: true}},
			status: runtime.RunCompleted,
			check: func(t *testing.T, run *runtime.Run, fb *fakeBackend) {
				out := run.Output.(M)
				if !isNumber(out["failed"], 3) {
					t.Errorf("failed iterations = %v; want 3", out["failed"])
				}
				for _, it := range out["iterations"].(A) {
					if e := it.(M)["error"].(string); !strings.Contains(e, "timed out after 20ms") {
						t.Errorf("iteration error = %q; want the inner timeout", e)
					}
				}
			},
		},
		{
			name: "inner retry applies per iteration",
			wf: build("feretry",
				tool("list", "svc.list", nil),
				forEach("scan", "{{.steps.list.output.pkgs}}", "item", tool("", "svc.flaky", nil).With(onError(ir.ActionRetry, 3)), "list").With(func(s *ir.Step) { s.ForEach.MaxParallel = 1 }),
			),
			tools:  map[string]*fakeTool{"svc.list": lister, "svc.flaky": {FailFirst: 2}},
			status: runtime.RunCompleted,
			check: func(t *testing.T, run *runtime.Run, fb *fakeBackend) {
				// attempts are counted per step id: the first iteration
				// fails twice, the rest succeed at once.
				if n := len(fb.CallsTo("scan")); n != 5 {
					t.Errorf("calls = %d; want 5", n)
				}
			},
		},
	}
	return cases
}

func coercionCases() []Case {
	schemas := schemaMap{"svc.typed": M{"type": "object", "properties": M{
		"n": M{"type": "integer"}, "f": M{"type": "number"}, "b": M{"type": "boolean"},
		"o": M{"type": "object"}, "a": M{"type": "array", "items": M{"type": "integer"}}, "s": M{"type": "string"},
	}}}
	cases := []Case{
		{
			name: "strings become the declared types",
			wf: build("coerce", tool("a", "svc.typed", M{
				"n": "{{.params.n}}", "f": "{{.params.f}}", "b": "{{.params.b}}", "o": `{"k": {{.params.n}}}`, "a": `[{{.params.n}}, 2]`, "s": "{{.params.n}}",
			})),
			params:  M{"n": "5", "f": "2.5", "b": "TRUE"},
			schemas: schemas,
			status:  runtime.RunCompleted,
			wantOut: true,
			output:  M{"args": M{"n": int64(5), "f": 2.5, "b": true, "o": M{"k": int64(5)}, "a": A{int64(5), int64(2)}, "s": "5"}},
		},
		{
			name:    "a string that is not an integer fails without echoing it",
			wf:      build("coercebad", tool("a", "svc.typed", M{"n": "{{.params.n}}"})),
			params:  M{"n": "secret-token"},
			schemas: schemas,
			status:  runtime.RunFailed,
			errHas:  []string{`argument "n"`, "integer"},
			check: func(t *testing.T, run *runtime.Run, _ *fakeBackend) {
				if strings.Contains(run.Error.Error(), "secret-token") {
					t.Errorf("error %q echoes the parameter value", run.Error)
				}
			},
		},
	}
	return cases
}

// TestElicitation checks ToolHive's elicitation output: {action, content}
// on accept; {action} plus defaultResults.content when decline, cancel or
// timeout continue; {action, skipped: true} with skip_remaining, which
// completes the step and skips every step that has not started.
