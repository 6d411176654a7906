package runtime

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
)

// runCase is one workflow run against the fake backend with its expected
// result.
type runCase struct {
	name    string
	wf      *ir.Workflow
	tools   map[string]*fakeTool
	params  M
	schemas SchemaSource
	elicit  Elicitor

	status   RunStatus
	output   any // compared with cmp when wantOut is true
	wantOut  bool
	steps    map[string]StepStatus // only the listed steps are checked
	errHas   []string              // substrings of Run.Error
	errPos   *ir.Pos
	attempts map[string]int
	check    func(t *testing.T, run *Run, fb *fakeBackend)
}

func (c runCase) run(t *testing.T) {
	t.Helper()
	fb := newFake(c.tools)
	e := mustEngine(t, plan(c.wf), Options{Backend: fb, Schemas: c.schemas})
	run, err := e.Run(context.Background(), c.wf.Name, c.params, RunOptions{Elicitor: c.elicit})
	if err != nil {
		t.Fatalf("Run(%q) error = %v; want a run record", c.wf.Name, err)
	}
	if run.Status != c.status {
		t.Fatalf("Run(%q).Status = %s (error %v); want %s", c.wf.Name, run.Status, run.Error, c.status)
	}
	if c.wantOut {
		if diff := cmp.Diff(c.output, run.Output); diff != "" {
			t.Errorf("Run(%q).Output mismatch (-want +got):\n%s", c.wf.Name, diff)
		}
	}
	got := stepStatuses(run)
	for id, want := range c.steps {
		if got[id] != want {
			t.Errorf("step %q status = %s; want %s", id, got[id], want)
		}
	}
	for id, want := range c.attempts {
		for _, s := range run.Steps {
			if s.ID == id && s.Attempts != want {
				t.Errorf("step %q attempts = %d; want %d", id, s.Attempts, want)
			}
		}
	}
	if len(c.errHas) > 0 {
		if run.Error == nil {
			t.Fatalf("Run(%q).Error = nil; want an error containing %q", c.wf.Name, c.errHas)
		}
		msg := run.Error.Error()
		for _, s := range c.errHas {
			if !strings.Contains(msg, s) {
				t.Errorf("Run(%q).Error = %q; want it to contain %q", c.wf.Name, msg, s)
			}
		}
		if strings.Contains(msg, "<no value>") {
			t.Errorf("Run(%q).Error = %q; must never mention <no value>", c.wf.Name, msg)
		}
	} else if c.status == RunCompleted && run.Error != nil {
		t.Errorf("Run(%q).Error = %v; want nil", c.wf.Name, run.Error)
	}
	if c.errPos != nil && (run.Error == nil || run.Error.Pos != *c.errPos) {
		t.Errorf("Run(%q).Error position = %v; want %v", c.wf.Name, run.Error, *c.errPos)
	}
	if c.check != nil {
		c.check(t, run, fb)
	}
	checkReplay(t, e, run)
}

func structured(v any) func(M) any { return func(M) any { return v } }

func TestRunSemantics(t *testing.T) {
	items := A{int64(1), int64(2), int64(3)}
	cases := []runCase{
		{
			name: "typed values flow between steps",
			wf: build("typed",
				tool("a", "svc.list", nil),
				tool("b", "svc.use", M{"items": "{{.steps.a.output.items}}", "n": "{{len .steps.a.output.items}}", "label": "got {{len .steps.a.output.items}} items", "first": "{{index .steps.a.output.items 0}}"}, "a"),
			),
			tools:   map[string]*fakeTool{"svc.list": {result: structured(M{"items": items})}},
			status:  RunCompleted,
			wantOut: true,
			output:  M{"args": M{"items": items, "n": int64(3), "label": "got 3 items", "first": int64(1)}},
		},
		{
			name: "number-aware comparison in a condition",
			wf: build("numbers",
				tool("count", "svc.count", nil),
				tool("big", "svc.alert", nil, "count").with(when("{{gt .steps.count.output.total 100}}")),
				tool("small", "svc.alert", nil, "count").with(when("{{lt .steps.count.output.total 100.5}}")),
				tool("eq", "svc.alert", nil, "count").with(when("{{eq .steps.count.output.total 150}}")),
			),
			tools:  map[string]*fakeTool{"svc.count": {result: structured(M{"total": float64(150)})}},
			status: RunCompleted,
			steps:  map[string]StepStatus{"big": StepCompleted, "small": StepSkipped, "eq": StepCompleted},
		},
		{
			name: "condition strings true and false in any case",
			wf: build("condstr",
				tool("yes", "svc.x", nil).with(when("{{.params.a}}")),
				tool("no", "svc.x", nil).with(when("{{.params.b}}")),
			),
			params: M{"a": "TRUE", "b": "False"},
			status: RunCompleted,
			steps:  map[string]StepStatus{"yes": StepCompleted, "no": StepSkipped},
		},
		{
			name: "condition that is not a boolean names the type, not the value",
			wf: build("condbad",
				tool("x", "svc.x", nil).with(when("{{.params.secret}}")),
			),
			params: M{"secret": "hunter2"},
			status: RunFailed,
			errHas: []string{`step "x"`, "condition must yield a boolean", "a string"},
			check: func(t *testing.T, run *Run, _ *fakeBackend) {
				if strings.Contains(run.Error.Error(), "hunter2") {
					t.Errorf("Run.Error = %q; must not echo the parameter value", run.Error)
				}
			},
		},
		{
			name: "skipped step gives its defaultResults to dependents",
			wf: build("skip",
				tool("opt", "svc.x", nil).with(when("{{.params.enabled}}")).with(defaults(M{"count": int64(7)})),
				tool("use", "svc.y", M{"n": "{{.steps.opt.output.count}}", "st": "{{.steps.opt.status}}"}, "opt"),
			),
			params:  M{"enabled": false},
			status:  RunCompleted,
			wantOut: true,
			output:  M{"args": M{"n": int64(7), "st": "skipped"}},
			steps:   map[string]StepStatus{"opt": StepSkipped, "use": StepCompleted},
		},
		{
			name: "missing output field is an error naming step, field and position",
			wf: build("missing",
				tool("a", "svc.x", nil),
				tool("b", "svc.y", M{"v": "{{.steps.a.output.nope}}"}, "a"),
			),
			tools:  map[string]*fakeTool{"svc.x": {result: structured(M{"yes": int64(1)})}},
			status: RunFailed,
			errHas: []string{`step "b" (wf.yaml:1:3)`, `output of step "a"`, `no field "nope"`},
		},
		{
			name: "missing field inside text template is an error, not <no value>",
			wf: build("missingtext",
				tool("a", "svc.x", nil),
				tool("b", "svc.y", M{"v": "value: {{.steps.a.output.deep.nope}}"}, "a"),
			),
			tools:  map[string]*fakeTool{"svc.x": {result: structured(M{"deep": M{}})}},
			status: RunFailed,
			errHas: []string{`step "b"`, `no field "nope"`, "wf.yaml:1:10"},
		},
		{
			name: "reading a field of a skipped step without defaults says it is null",
			wf: build("skipnull",
				tool("a", "svc.x", nil).with(when("{{false}}")),
				tool("b", "svc.y", M{"v": "{{.steps.a.output.total}}"}, "a"),
			),
			status: RunFailed,
			errHas: []string{`step "b"`, `cannot read field "total" of the output of step "a": it is null`},
		},
		{
			name: "null value inside text renders empty",
			wf: build("nulltext",
				tool("a", "svc.x", nil),
				tool("b", "svc.y", M{"v": "owner=[{{.steps.a.output.owner}}]", "typed": "{{.steps.a.output.owner}}"}, "a"),
			),
			tools:   map[string]*fakeTool{"svc.x": {result: structured(M{"owner": nil})}},
			status:  RunCompleted,
			wantOut: true,
			output:  M{"args": M{"v": "owner=[]", "typed": nil}},
		},
		{
			name: "onError continue: failed step, dependents see defaults",
			wf: build("cont",
				tool("a", "svc.down", nil).with(onError(ir.ActionContinue, 0)).with(defaults(M{"v": "fallback"})),
				tool("b", "svc.y", M{"v": "{{.steps.a.output.v}}", "st": "{{.steps.a.status}}", "err": "{{.steps.a.error}}"}, "a"),
			),
			tools:   map[string]*fakeTool{"svc.down": {fail: true}},
			status:  RunCompleted,
			wantOut: true,
			output:  M{"args": M{"v": "fallback", "st": "failed", "err": "calling svc.down: backend unavailable"}},
			steps:   map[string]StepStatus{"a": StepFailed, "b": StepCompleted},
		},
		{
			name: "failureMode continue applies to steps without onError",
			wf: func() *ir.Workflow {
				w := build("fmcont",
					tool("a", "svc.down", nil),
					tool("b", "svc.y", nil, "a"),
				)
				w.FailureMode = ir.FailureContinue
				return w
			}(),
			tools:  map[string]*fakeTool{"svc.down": {fail: true}},
			status: RunCompleted,
			steps:  map[string]StepStatus{"a": StepFailed, "b": StepCompleted},
		},
		{
			name: "explicit abort beats failureMode continue",
			wf: func() *ir.Workflow {
				w := build("fmabort",
					tool("a", "svc.down", nil).with(onError(ir.ActionAbort, 0)),
					tool("b", "svc.y", nil, "a"),
				)
				w.FailureMode = ir.FailureContinue
				return w
			}(),
			tools:  map[string]*fakeTool{"svc.down": {fail: true}},
			status: RunFailed,
			steps:  map[string]StepStatus{"a": StepFailed, "b": StepPending},
			errHas: []string{`step "a"`, "backend unavailable"},
		},
		{
			name: "abort fails the run with the step and its position",
			wf: build("abort",
				tool("a", "svc.down", nil),
				tool("b", "svc.y", nil, "a"),
			),
			tools:  map[string]*fakeTool{"svc.down": {fail: true}},
			status: RunFailed,
			errHas: []string{`step "a" (wf.yaml:10:5)`, "calling svc.down: backend unavailable"},
			errPos: &ir.Pos{File: "wf.yaml", Line: 10, Col: 5},
			steps:  map[string]StepStatus{"a": StepFailed, "b": StepPending},
		},
		{
			name:     "retry succeeds after the first failures",
			wf:       build("retry", tool("a", "svc.flaky", nil).with(onError(ir.ActionRetry, 3))),
			tools:    map[string]*fakeTool{"svc.flaky": {failFirst: 2, result: structured(M{"ok": true})}},
			status:   RunCompleted,
			wantOut:  true,
			output:   M{"ok": true},
			attempts: map[string]int{"a": 3},
		},
		{
			// As in ToolHive, maxRetries has no effect without action retry.
			name:     "maxRetries with action abort does not retry",
			wf:       build("retryabort", tool("a", "svc.flaky", nil).with(onError(ir.ActionAbort, 2)), tool("b", "svc.ok", nil, "a")),
			tools:    map[string]*fakeTool{"svc.flaky": {failFirst: 5}, "svc.ok": {result: structured(M{"ok": true})}},
			status:   RunFailed,
			attempts: map[string]int{"a": 1},
			check:    calledOnce("a"),
			steps:    map[string]StepStatus{"a": StepFailed, "b": StepPending},
		},
		{
			// continue + retryCount: 2 calls a possibly unsafe tool once.
			name:     "maxRetries with action continue calls the tool once, then continues with defaults",
			wf:       build("retrycontinue", tool("a", "svc.flaky", nil).with(onError(ir.ActionContinue, 2)).with(defaults(M{"x": int64(7)}))),
			tools:    map[string]*fakeTool{"svc.flaky": {failFirst: 1, result: structured(M{"ok": true})}},
			status:   RunCompleted,
			wantOut:  true,
			output:   M{"x": int64(7)},
			attempts: map[string]int{"a": 1},
			check:    calledOnce("a"),
		},
		{
			name:     "retry gives up after maxRetries more attempts",
			wf:       build("retryfail", tool("a", "svc.flaky", nil).with(onError(ir.ActionRetry, 2))),
			tools:    map[string]*fakeTool{"svc.flaky": {failFirst: 5}},
			status:   RunFailed,
			attempts: map[string]int{"a": 3},
			errHas:   []string{`step "a"`, "backend unavailable"},
		},
		{
			name: "retry exhausted then failureMode continue",
			wf: func() *ir.Workflow {
				w := build("retrycont", tool("a", "svc.flaky", nil).with(onError(ir.ActionRetry, 1)).with(defaults(M{"x": int64(0)})))
				w.FailureMode = ir.FailureContinue
				return w
			}(),
			tools:    map[string]*fakeTool{"svc.flaky": {fail: true}},
			status:   RunCompleted,
			wantOut:  true,
			output:   M{"x": int64(0)},
			attempts: map[string]int{"a": 2},
		},
		{
			name:   "isError result fails the step with its text",
			wf:     build("iserr", tool("a", "svc.quota", nil)),
			tools:  map[string]*fakeTool{"svc.quota": {isError: true}},
			status: RunFailed,
			errHas: []string{`step "a"`, "svc.quota returned an error: svc.quota failed: quota exceeded"},
		},
		{
			name:    "text-only results become text, text_1",
			wf:      build("text", tool("a", "svc.txt", nil)),
			tools:   map[string]*fakeTool{"svc.txt": {text: []string{"one", "two"}}},
			status:  RunCompleted,
			wantOut: true,
			output:  M{"text": "one", "text_1": "two"},
		},
		{
			// ToolHive's content map, plus audio_N and link_N.
			name: "a result without structuredContent is its content map",
			wf:   build("content", tool("a", "svc.mixed", nil)),
			tools: map[string]*fakeTool{"svc.mixed": {text: []string{"caption", "more"}, content: []Content{
				{Type: "image", Data: "AAAA"},
				{Type: "image", Data: "BBBB"},
				{Type: "resource", URI: "file:///a.txt", Text: "file text"},
				{Type: "resource", URI: "file:///b.bin", Data: "YmxvYg=="},
				{Type: "audio", Data: "UklGRg=="},
				{Type: "resource_link", URI: "file:///c.txt"},
				{Type: "text", Text: "last"},
			}}},
			status:  RunCompleted,
			wantOut: true,
			output: M{
				"text": "caption", "text_1": "more", "text_2": "last",
				"image_0": "AAAA", "image_1": "BBBB",
				"resource": "file text", "resource_1": "YmxvYg==",
				"audio_0": "UklGRg==", "link_0": "file:///c.txt",
			},
		},
		{
			// .steps.X.content is there beside structuredContent.
			name: "content is readable beside structured output",
			wf: build("content2",
				tool("a", "svc.both", nil),
				tool("b", "svc.echo", M{"summary": "{{.steps.a.content.text}}", "n": "{{.steps.a.output.n}}", "all": "{{.steps.a.content}}"}, "a"),
			),
			tools: map[string]*fakeTool{
				"svc.both": {result: structured(M{"n": int64(3)}), text: []string{"three items"}},
			},
			status:  RunCompleted,
			wantOut: true,
			output:  M{"args": M{"summary": "three items", "n": int64(3), "all": M{"text": "three items"}}},
		},
		{
			name: "vars are evaluated once over params",
			wf: func() *ir.Workflow {
				w := build("vars", tool("a", "svc.x", M{"greeting": "{{.vars.greeting}}", "n": "{{.vars.n}}"}))
				w.Vars = []*ir.Var{{Name: "greeting", Value: val("hello {{.params.who}}")}, {Name: "n", Value: val("{{.params.n}}")}}
				return w
			}(),
			params:  M{"who": "world", "n": int64(4)},
			status:  RunCompleted,
			wantOut: true,
			output:  M{"args": M{"greeting": "hello world", "n": int64(4)}},
		},
		{
			name: "json, fromJson and quote",
			wf: build("funcs",
				tool("a", "svc.x", nil),
				tool("b", "svc.y", M{
					"j":   "{{json .steps.a.output.list}}",
					"fj":  `{{fromJson "{\"k\": [1, 2.5]}"}}`,
					"q":   `{{quote .steps.a.output.name}}`,
					"msg": `{"name": {{quote .steps.a.output.name}}}`,
				}, "a"),
			),
			tools:   map[string]*fakeTool{"svc.x": {result: structured(M{"list": A{"a", int64(1)}, "name": `say "hi"`})}},
			status:  RunCompleted,
			wantOut: true,
			output: M{"args": M{
				"j": `["a",1]`, "fj": M{"k": A{int64(1), 2.5}}, "q": `"say \"hi\""`, "msg": `{"name": "say \"hi\""}`,
			}},
		},
		{
			name: "workflow id and step status are in the template data",
			wf: build("meta",
				tool("a", "svc.x", nil),
				tool("b", "svc.y", M{"st": "{{.steps.a.status}}", "has_id": "{{ne .workflow.id \"\"}}"}, "a"),
			),
			status:  RunCompleted,
			wantOut: true,
			output:  M{"args": M{"st": "completed", "has_id": true}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

func TestComposeResult(t *testing.T) {
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
	data := map[string]*fakeTool{"svc.x": {result: structured(M{"total": float64(12), "name": "n1", "items": A{"x"}})}}
	cases := []runCase{
		{
			name:    "single sink output",
			wf:      build("one", tool("a", "svc.x", nil), tool("b", "svc.x", nil, "a")),
			tools:   data,
			status:  RunCompleted,
			wantOut: true,
			output:  M{"total": float64(12), "name": "n1", "items": A{"x"}},
		},
		{
			name:    "several sinks keyed by id",
			wf:      build("two", tool("a", "svc.x", nil), tool("b", "svc.txt", nil)),
			tools:   map[string]*fakeTool{"svc.x": data["svc.x"], "svc.txt": {text: []string{"t"}}},
			status:  RunCompleted,
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
			status:  RunCompleted,
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
			status: RunFailed,
			errHas: []string{`output property "must" is required`},
			errPos: &ir.Pos{File: "wf.yaml", Line: 40, Col: 3},
		},
		{
			name: "value that cannot take its type fails",
			wf: withOutput(build("badtype", tool("a", "svc.x", nil)), nil,
				prop("n", "integer", "{{.steps.a.output.name}}"),
			),
			tools:  data,
			status: RunFailed,
			errHas: []string{`output property "n"`, "integer"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

func TestForEach(t *testing.T) {
	pkgs := A{M{"name": "a"}, M{"name": "b"}, M{"name": "c"}}
	lister := &fakeTool{result: structured(M{"pkgs": pkgs, "json": `[{"name":"a"},{"name":"b"}]`, "notarray": M{}})}
	scan := func(args M) any { return M{"pkg": args["name"], "i": args["i"]} }
	iter := func(i int64, item any, status string, out any, err string) M {
		return M{"index": i, "item": item, "status": status, "output": out, "error": err}
	}
	cases := []runCase{
		{
			name: "iterates a typed array with item and index",
			wf: build("fe",
				tool("list", "svc.list", nil),
				forEach("scan", "{{.steps.list.output.pkgs}}", "pkg", tool("", "svc.scan", M{"name": "{{.forEach.pkg.name}}", "i": "{{.forEach.index}}"}), "list"),
			),
			tools:   map[string]*fakeTool{"svc.list": lister, "svc.scan": {result: scan}},
			status:  RunCompleted,
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
			tools:  map[string]*fakeTool{"svc.list": lister, "svc.scan": {result: scan}},
			status: RunCompleted,
			check: func(t *testing.T, run *Run, fb *fakeBackend) {
				out := run.Output.(M)
				if out["count"] != int64(2) {
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
			status: RunFailed,
			errHas: []string{`step "scan"`, "collection must be an array; it is an object"},
		},
		{
			name: "more items than maxIterations fails before any call",
			wf: build("fecap",
				tool("list", "svc.list", nil),
				forEach("scan", "{{.steps.list.output.pkgs}}", "item", tool("", "svc.scan", nil), "list").with(func(s *ir.Step) { s.ForEach.MaxIterations = 2 }),
			),
			tools:  map[string]*fakeTool{"svc.list": lister},
			status: RunFailed,
			errHas: []string{"collection has 3 items, more than maxIterations (2)"},
			check: func(t *testing.T, run *Run, fb *fakeBackend) {
				if n := len(fb.callsTo("scan")); n != 0 {
					t.Errorf("backend calls for scan = %d; want 0", n)
				}
			},
		},
		{
			name: "onError continue with failing iterations",
			wf: build("fecont2",
				tool("list", "svc.list", nil),
				forEach("scan", "{{.steps.list.output.pkgs}}", "item", tool("", "svc.bad", M{"name": "{{.forEach.item.name}}"}), "list").with(onError(ir.ActionContinue, 0)),
			),
			tools:  map[string]*fakeTool{"svc.list": lister, "svc.bad": {isError: true}},
			status: RunCompleted,
			steps:  map[string]StepStatus{"scan": StepCompleted},
			check: func(t *testing.T, run *Run, fb *fakeBackend) {
				out := run.Output.(M)
				if out["completed"] != int64(0) || out["failed"] != int64(3) || out["count"] != int64(3) {
					t.Errorf("forEach counts = completed %v failed %v; want 0 and 3", out["completed"], out["failed"])
				}
				first := out["iterations"].(A)[0].(M)
				if first["status"] != "failed" || !strings.Contains(first["error"].(string), "quota exceeded") {
					t.Errorf("iteration 0 = %v; want failed with the tool's text", first)
				}
				if n := len(fb.callsTo("scan")); n != 3 {
					t.Errorf("calls = %d; want 3 (every iteration runs)", n)
				}
			},
		},
		{
			name: "abort: the first failure fails the step",
			wf: build("feabort",
				tool("list", "svc.list", nil),
				forEach("scan", "{{.steps.list.output.pkgs}}", "item", tool("", "svc.bad", nil), "list").with(func(s *ir.Step) { s.ForEach.MaxParallel = 1 }),
			),
			tools:  map[string]*fakeTool{"svc.list": lister, "svc.bad": {isError: true}},
			status: RunFailed,
			errHas: []string{`step "scan"`, "iteration 0", "quota exceeded"},
			check: func(t *testing.T, run *Run, fb *fakeBackend) {
				if n := len(fb.callsTo("scan")); n != 1 {
					t.Errorf("calls after the first failure = %d; want 1 (maxParallel 1, abort)", n)
				}
			},
		},
		{
			name: "the inner step's timeout bounds each iteration",
			wf: build("fetimeout",
				tool("list", "svc.list", nil),
				forEach("scan", "{{.steps.list.output.pkgs}}", "item", tool("", "svc.hang", nil).with(timeout(20*time.Millisecond)), "list").with(onError(ir.ActionContinue, 0)),
			),
			tools:  map[string]*fakeTool{"svc.list": lister, "svc.hang": {hang: true}},
			status: RunCompleted,
			check: func(t *testing.T, run *Run, fb *fakeBackend) {
				out := run.Output.(M)
				if out["failed"] != int64(3) {
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
				forEach("scan", "{{.steps.list.output.pkgs}}", "item", tool("", "svc.flaky", nil).with(onError(ir.ActionRetry, 3)), "list").with(func(s *ir.Step) { s.ForEach.MaxParallel = 1 }),
			),
			tools:  map[string]*fakeTool{"svc.list": lister, "svc.flaky": {failFirst: 2}},
			status: RunCompleted,
			check: func(t *testing.T, run *Run, fb *fakeBackend) {
				// attempts are counted per step id: the first iteration
				// fails twice, the rest succeed at once.
				if n := len(fb.callsTo("scan")); n != 5 {
					t.Errorf("calls = %d; want 5", n)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

func TestForEachParallelCap(t *testing.T) {
	items := make(A, 20)
	for i := range items {
		items[i] = int64(i)
	}
	wf := build("cap",
		tool("list", "svc.list", nil),
		forEach("each", "{{.steps.list.output.items}}", "n", tool("", "svc.slow", M{"n": "{{.forEach.n}}"}), "list").with(func(s *ir.Step) { s.ForEach.MaxParallel = 3 }),
	)
	fb := newFake(map[string]*fakeTool{"svc.list": {result: structured(M{"items": items})}, "svc.slow": {latency: 5 * time.Millisecond}})
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	run, err := e.Run(context.Background(), "cap", nil, RunOptions{})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v; want completed", run, err)
	}
	if got := fb.maxFlight.Load(); got != 3 {
		t.Errorf("most concurrent iterations = %d; want exactly maxParallel 3", got)
	}
}

func TestCoercionToBackendSchema(t *testing.T) {
	schemas := schemaMap{"svc.typed": M{"type": "object", "properties": M{
		"n": M{"type": "integer"}, "f": M{"type": "number"}, "b": M{"type": "boolean"},
		"o": M{"type": "object"}, "a": M{"type": "array", "items": M{"type": "integer"}}, "s": M{"type": "string"},
	}}}
	cases := []runCase{
		{
			name: "strings become the declared types",
			wf: build("coerce", tool("a", "svc.typed", M{
				"n": "{{.params.n}}", "f": "{{.params.f}}", "b": "{{.params.b}}", "o": `{"k": {{.params.n}}}`, "a": `[{{.params.n}}, 2]`, "s": "{{.params.n}}",
			})),
			params:  M{"n": "5", "f": "2.5", "b": "TRUE"},
			schemas: schemas,
			status:  RunCompleted,
			wantOut: true,
			output:  M{"args": M{"n": int64(5), "f": 2.5, "b": true, "o": M{"k": int64(5)}, "a": A{int64(5), int64(2)}, "s": "5"}},
		},
		{
			name:    "a string that is not an integer fails without echoing it",
			wf:      build("coercebad", tool("a", "svc.typed", M{"n": "{{.params.n}}"})),
			params:  M{"n": "secret-token"},
			schemas: schemas,
			status:  RunFailed,
			errHas:  []string{`argument "n"`, "integer"},
			check: func(t *testing.T, run *Run, _ *fakeBackend) {
				if strings.Contains(run.Error.Error(), "secret-token") {
					t.Errorf("error %q echoes the parameter value", run.Error)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}

type schemaMap map[string]M

func (s schemaMap) InputSchema(backend, tool string) (map[string]any, bool) {
	m, ok := s[backend+"."+tool]
	return m, ok
}

// calledOnce checks that the backend saw exactly one call for step id.
func calledOnce(id string) func(*testing.T, *Run, *fakeBackend) {
	return func(t *testing.T, _ *Run, fb *fakeBackend) {
		t.Helper()
		if n := len(fb.callsTo(id)); n != 1 {
			t.Errorf("step %q called its tool %d times; want 1 (maxRetries has no effect without action retry)", id, n)
		}
	}
}
