package semantictest

import (
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// The core semantics: data flow, conditions, failure actions, retries,
// templates and the .workflow data.

func semanticsCases() []Case {
	items := A{int64(1), int64(2), int64(3)}
	cases := []Case{
		{
			name: "typed values flow between steps",
			wf: build("typed",
				tool("a", "svc.list", nil),
				tool("b", "svc.use", M{"items": "{{.steps.a.output.items}}", "n": "{{len .steps.a.output.items}}", "label": "got {{len .steps.a.output.items}} items", "first": "{{index .steps.a.output.items 0}}"}, "a"),
			),
			tools:   map[string]*fakeTool{"svc.list": {Result: structured(M{"items": items})}},
			status:  runtime.RunCompleted,
			wantOut: true,
			output:  M{"args": M{"items": items, "n": int64(3), "label": "got 3 items", "first": int64(1)}},
		},
		{
			name: "number-aware comparison in a condition",
			wf: build("numbers",
				tool("count", "svc.count", nil),
				tool("big", "svc.alert", nil, "count").With(when("{{gt .steps.count.output.total 100}}")),
				tool("small", "svc.alert", nil, "count").With(when("{{lt .steps.count.output.total 100.5}}")),
				tool("eq", "svc.alert", nil, "count").With(when("{{eq .steps.count.output.total 150}}")),
			),
			tools:  map[string]*fakeTool{"svc.count": {Result: structured(M{"total": float64(150)})}},
			status: runtime.RunCompleted,
			steps:  map[string]runtime.StepStatus{"big": runtime.StepCompleted, "small": runtime.StepSkipped, "eq": runtime.StepCompleted},
		},
		{
			name: "condition strings true and false in any case",
			wf: build("condstr",
				tool("yes", "svc.x", nil).With(when("{{.params.a}}")),
				tool("no", "svc.x", nil).With(when("{{.params.b}}")),
			),
			params: M{"a": "TRUE", "b": "False"},
			status: runtime.RunCompleted,
			steps:  map[string]runtime.StepStatus{"yes": runtime.StepCompleted, "no": runtime.StepSkipped},
		},
		{
			name: "condition that is not a boolean names the type, not the value",
			wf: build("condbad",
				tool("x", "svc.x", nil).With(when("{{.params.secret}}")),
			),
			params: M{"secret": "hunter2"},
			status: runtime.RunFailed,
			errHas: []string{`step "x"`, "condition must yield a boolean", "a string"},
			check: func(t *testing.T, run *runtime.Run, _ *fakeBackend) {
				if strings.Contains(run.Error.Error(), "hunter2") {
					t.Errorf("Run.Error = %q; must not echo the parameter value", run.Error)
				}
			},
		},
		{
			name: "skipped step gives its defaultResults to dependents",
			wf: build("skip",
				tool("opt", "svc.x", nil).With(when("{{.params.enabled}}")).With(defaults(M{"count": int64(7)})),
				tool("use", "svc.y", M{"n": "{{.steps.opt.output.count}}", "st": "{{.steps.opt.status}}"}, "opt"),
			),
			params:  M{"enabled": false},
			status:  runtime.RunCompleted,
			wantOut: true,
			output:  M{"args": M{"n": int64(7), "st": "skipped"}},
			steps:   map[string]runtime.StepStatus{"opt": runtime.StepSkipped, "use": runtime.StepCompleted},
		},
		{
			name: "missing output field is an error naming step, field and position",
			wf: build("missing",
				tool("a", "svc.x", nil),
				tool("b", "svc.y", M{"v": "{{.steps.a.output.nope}}"}, "a"),
			),
			tools:  map[string]*fakeTool{"svc.x": {Result: structured(M{"yes": int64(1)})}},
			status: runtime.RunFailed,
			errHas: []string{`step "b" (wf.yaml:1:3)`, `output of step "a"`, `no field "nope"`},
		},
		{
			name: "missing field inside text template is an error, not <no value>",
			wf: build("missingtext",
				tool("a", "svc.x", nil),
				tool("b", "svc.y", M{"v": "value: {{.steps.a.output.deep.nope}}"}, "a"),
			),
			tools:  map[string]*fakeTool{"svc.x": {Result: structured(M{"deep": M{}})}},
			status: runtime.RunFailed,
			errHas: []string{`step "b"`, `no field "nope"`, "wf.yaml:1:10"},
		},
		{
			name: "reading a field of a skipped step without defaults says it is null",
			wf: build("skipnull",
				tool("a", "svc.x", nil).With(when("{{false}}")),
				tool("b", "svc.y", M{"v": "{{.steps.a.output.total}}"}, "a"),
			),
			status: runtime.RunFailed,
			errHas: []string{`step "b"`, `cannot read field "total" of the output of step "a": it is null`},
		},
		{
			name: "null value inside text renders empty",
			wf: build("nulltext",
				tool("a", "svc.x", nil),
				tool("b", "svc.y", M{"v": "owner=[{{.steps.a.output.owner}}]", "typed": "{{.steps.a.output.owner}}"}, "a"),
			),
			tools:   map[string]*fakeTool{"svc.x": {Result: structured(M{"owner": nil})}},
			status:  runtime.RunCompleted,
			wantOut: true,
			output:  M{"args": M{"v": "owner=[]", "typed": nil}},
		},
		{
			name: "onError continue: failed step, dependents see defaults",
			wf: build("cont",
				tool("a", "svc.down", nil).With(onError(ir.ActionContinue, 0)).With(defaults(M{"v": "fallback"})),
				tool("b", "svc.y", M{"v": "{{.steps.a.output.v}}", "st": "{{.steps.a.status}}", "err": "{{.steps.a.error}}"}, "a"),
			),
			tools:   map[string]*fakeTool{"svc.down": {Fail: true}},
			status:  runtime.RunCompleted,
			wantOut: true,
			output:  M{"args": M{"v": "fallback", "st": "failed", "err": "calling svc.down: backend unavailable"}},
			steps:   map[string]runtime.StepStatus{"a": runtime.StepFailed, "b": runtime.StepCompleted},
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
			tools:  map[string]*fakeTool{"svc.down": {Fail: true}},
			status: runtime.RunCompleted,
			steps:  map[string]runtime.StepStatus{"a": runtime.StepFailed, "b": runtime.StepCompleted},
		},
		{
			name: "explicit abort beats failureMode continue",
			wf: func() *ir.Workflow {
				w := build("fmabort",
					tool("a", "svc.down", nil).With(onError(ir.ActionAbort, 0)),
					tool("b", "svc.y", nil, "a"),
				)
				w.FailureMode = ir.FailureContinue
				return w
			}(),
			tools:  map[string]*fakeTool{"svc.down": {Fail: true}},
			status: runtime.RunFailed,
			steps:  map[string]runtime.StepStatus{"a": runtime.StepFailed, "b": runtime.StepPending},
			errHas: []string{`step "a"`, "backend unavailable"},
		},
		{
			name: "abort fails the run with the step and its position",
			wf: build("abort",
				tool("a", "svc.down", nil),
				tool("b", "svc.y", nil, "a"),
			),
			tools:  map[string]*fakeTool{"svc.down": {Fail: true}},
			status: runtime.RunFailed,
			errHas: []string{`step "a" (wf.yaml:10:5)`, "calling svc.down: backend unavailable"},
			errPos: &ir.Pos{File: "wf.yaml", Line: 10, Col: 5},
			steps:  map[string]runtime.StepStatus{"a": runtime.StepFailed, "b": runtime.StepPending},
		},
		{
			name:     "retry succeeds after the first failures",
			wf:       build("retry", tool("a", "svc.flaky", nil).With(onError(ir.ActionRetry, 3))),
			tools:    map[string]*fakeTool{"svc.flaky": {FailFirst: 2, Result: structured(M{"ok": true})}},
			status:   runtime.RunCompleted,
			wantOut:  true,
			output:   M{"ok": true},
			attempts: map[string]int{"a": 3},
		},
		{
			// As in ToolHive, maxRetries has no effect without action retry.
			name:     "maxRetries with action abort does not retry",
			wf:       build("retryabort", tool("a", "svc.flaky", nil).With(onError(ir.ActionAbort, 2)), tool("b", "svc.ok", nil, "a")),
			tools:    map[string]*fakeTool{"svc.flaky": {FailFirst: 5}, "svc.ok": {Result: structured(M{"ok": true})}},
			status:   runtime.RunFailed,
			attempts: map[string]int{"a": 1},
			check:    calledOnce("a"),
			steps:    map[string]runtime.StepStatus{"a": runtime.StepFailed, "b": runtime.StepPending},
		},
		{
			// continue + retryCount: 2 calls a possibly unsafe tool once.
			name:     "maxRetries with action continue calls the tool once, then continues with defaults",
			wf:       build("retrycontinue", tool("a", "svc.flaky", nil).With(onError(ir.ActionContinue, 2)).With(defaults(M{"x": int64(7)}))),
			tools:    map[string]*fakeTool{"svc.flaky": {FailFirst: 1, Result: structured(M{"ok": true})}},
			status:   runtime.RunCompleted,
			wantOut:  true,
			output:   M{"x": int64(7)},
			attempts: map[string]int{"a": 1},
			check:    calledOnce("a"),
		},
		{
			name:     "retry gives up after maxRetries more attempts",
			wf:       build("retryfail", tool("a", "svc.flaky", nil).With(onError(ir.ActionRetry, 2))),
			tools:    map[string]*fakeTool{"svc.flaky": {FailFirst: 5}},
			status:   runtime.RunFailed,
			attempts: map[string]int{"a": 3},
			errHas:   []string{`step "a"`, "backend unavailable"},
		},
		{
			name: "retry exhausted then failureMode continue",
			wf: func() *ir.Workflow {
				w := build("retrycont", tool("a", "svc.flaky", nil).With(onError(ir.ActionRetry, 1)).With(defaults(M{"x": int64(0)})))
				w.FailureMode = ir.FailureContinue
				return w
			}(),
			tools:    map[string]*fakeTool{"svc.flaky": {Fail: true}},
			status:   runtime.RunCompleted,
			wantOut:  true,
			output:   M{"x": int64(0)},
			attempts: map[string]int{"a": 2},
		},
		{
			name:   "isError result fails the step with its text",
			wf:     build("iserr", tool("a", "svc.quota", nil)),
			tools:  map[string]*fakeTool{"svc.quota": {IsError: true}},
			status: runtime.RunFailed,
			errHas: []string{`step "a"`, "svc.quota returned an error: svc.quota failed: quota exceeded"},
		},
		{
			name:    "text-only results become text, text_1",
			wf:      build("text", tool("a", "svc.txt", nil)),
			tools:   map[string]*fakeTool{"svc.txt": {Text: []string{"one", "two"}}},
			status:  runtime.RunCompleted,
			wantOut: true,
			output:  M{"text": "one", "text_1": "two"},
		},
		{
			// ToolHive's content map, plus audio_N and link_N.
			name: "a result without structuredContent is its content map",
			wf:   build("content", tool("a", "svc.mixed", nil)),
			tools: map[string]*fakeTool{"svc.mixed": {Text: []string{"caption", "more"}, Content: []runtime.Content{
				{Type: "image", Data: "AAAA"},
				{Type: "image", Data: "BBBB"},
				{Type: "resource", URI: "file:///a.txt", Text: "file text"},
				{Type: "resource", URI: "file:///b.bin", Data: "YmxvYg=="},
				{Type: "audio", Data: "UklGRg=="},
				{Type: "resource_link", URI: "file:///c.txt"},
				{Type: "text", Text: "last"},
			}}},
			status:  runtime.RunCompleted,
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
				"svc.both": {Result: structured(M{"n": int64(3)}), Text: []string{"three items"}},
			},
			status:  runtime.RunCompleted,
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
			status:  runtime.RunCompleted,
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
			tools:   map[string]*fakeTool{"svc.x": {Result: structured(M{"list": A{"a", int64(1)}, "name": `say "hi"`})}},
			status:  runtime.RunCompleted,
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
			status:  runtime.RunCompleted,
			wantOut: true,
			output:  M{"args": M{"st": "completed", "has_id": true}},
		},
	}
	return cases
}
