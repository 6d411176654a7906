package runtime

// ToolHive parity of template data and results (issue 9): .workflow's
// fields, omitted optional parameters, and output defaults that replace a
// value of the wrong type. Elicitation output is in control_test.go, the
// content map in engine_test.go.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

// TestWorkflowFields checks .workflow.id, duration_ms, step_count, status
// and start_time, as step templates see them while the run goes and as
// output values see them at the end, both when every template is a field
// chain (the stepView path) and when one is not.
func TestWorkflowFields(t *testing.T) {
	args := M{
		"id":     "{{.workflow.id}}",
		"count":  "{{.workflow.step_count}}",
		"status": "{{.workflow.status}}",
		"start":  "{{.workflow.start_time}}",
		"ms":     "{{.workflow.duration_ms}}",
	}
	for _, tc := range []struct {
		name  string
		extra M
	}{
		{"field chains", nil},
		{"text templates", M{"text": "run {{.workflow.id}} after {{.workflow.duration_ms}}ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := M{}
			for k, v := range args {
				a[k] = v
			}
			for k, v := range tc.extra {
				a[k] = v
			}
			wf := build("wfinfo",
				tool("first", "svc.slow", nil),
				tool("second", "svc.echo", a, "first"),
			)
			wf.Output = &ir.Output{Properties: []*ir.OutputProperty{
				{Name: "count", Type: "integer", Value: tpl("{{.workflow.step_count}}")},
				{Name: "status", Type: "string", Value: tpl("{{.workflow.status}}")},
				{Name: "echoed", Value: tpl("{{.steps.second.output.args}}")},
			}}
			fb := newFake(map[string]*fakeTool{"svc.slow": {latency: 30 * time.Millisecond}})
			e := mustEngine(t, plan(wf), Options{Backend: fb})
			run, err := e.Run(context.Background(), "wfinfo", nil, RunOptions{})
			if err != nil || run.Status != RunCompleted {
				t.Fatalf("Run(wfinfo) = %v, %v; want completed", run.Status, err)
			}
			out := run.Output.(map[string]any)
			if out["count"] != int64(2) || out["status"] != "completed" {
				t.Errorf("output count, status = %v, %v; want 2, completed (the values after the last step)", out["count"], out["status"])
			}
			got := out["echoed"].(map[string]any)
			if got["id"] != run.ID {
				t.Errorf(".workflow.id = %v; want the run id %s", got["id"], run.ID)
			}
			if got["count"] != int64(1) || got["status"] != "running" {
				t.Errorf("second saw step_count %v, status %v; want 1, running", got["count"], got["status"])
			}
			if ms, ok := got["ms"].(int64); !ok || ms < 30 {
				t.Errorf("second saw duration_ms %#v; want an integer of at least 30 (first took 30ms)", got["ms"])
			}
			start, err := time.Parse(time.RFC3339, got["start"].(string))
			if err != nil || !start.Equal(run.StartedAt.Truncate(time.Second)) {
				t.Errorf(".workflow.start_time = %v (%v); want the run's start %s in RFC 3339", got["start"], err, run.StartedAt.Format(time.RFC3339))
			}
			if text, ok := got["text"].(string); tc.extra != nil && (!ok || !strings.HasPrefix(text, "run "+run.ID+" after ")) {
				t.Errorf("text = %q; want it to start with %q", text, "run "+run.ID+" after ")
			}
		})
	}
}

// TestOmittedOptionalParameter: a declared parameter that the caller leaves
// out and that has no default is null; it renders empty inside text, an
// argument that is exactly that action is left out of the tool call, and a
// default still applies.
func TestOmittedOptionalParameter(t *testing.T) {
	wf := build("optional",
		tool("call", "svc.echo", M{
			"owner": "{{.params.owner}}",
			"text":  "owner=[{{.params.owner}}]",
			"label": "{{.params.label}}",
			"fixed": "set",
		}).With(when("{{eq .params.owner nil}}")),
	)
	wf.InputSchema = M{"type": "object", "properties": M{
		"owner": M{"type": "string"},
		"label": M{"type": "string", "default": "triage"},
	}}
	runCase{
		name: "omitted", wf: wf,
		status: RunCompleted, wantOut: true,
		output: M{"args": M{"text": "owner=[]", "label": "triage", "fixed": "set"}},
		check: func(t *testing.T, _ *Run, fb *fakeBackend) {
			calls := fb.callsTo("call")
			if len(calls) != 1 {
				t.Fatalf("call was called %d times; want 1", len(calls))
			}
			if _, sent := calls[0].Arguments["owner"]; sent {
				t.Errorf("arguments = %v; want owner left out of the tool call", calls[0].Arguments)
			}
		},
	}.run(t)
	runCase{
		name: "given", wf: wf, params: M{"owner": "ana"},
		status: RunCompleted, steps: map[string]StepStatus{"call": StepSkipped},
	}.run(t)
}

// TestOutputDefaultReplacesBadValue: as in ToolHive, an output property's
// default is used both when the value is missing and when it does not
// convert to the declared type; without a default the run fails, naming
// the property.
func TestOutputDefaultReplacesBadValue(t *testing.T) {
	shaped := func(withDefault bool) *ir.Workflow {
		wf := build("shaped", tool("a", "svc.a", nil))
		count := &ir.OutputProperty{Name: "count", Type: "integer", Pos: at(40, 7), Value: tpl("{{.steps.a.output.n}}")}
		if withDefault {
			count.Default, count.HasDefault = int64(0), true
		}
		wf.Output = &ir.Output{Properties: []*ir.OutputProperty{
			count,
			{Name: "ok", Type: "boolean", Value: tpl("{{.steps.a.output.ok}}"), Default: false, HasDefault: true},
			{Name: "name", Type: "string", Value: tpl("{{.steps.a.output.name}}"), Default: "none", HasDefault: true},
		}}
		return wf
	}
	tools := map[string]*fakeTool{"svc.a": {result: structured(M{"n": "many", "ok": "perhaps", "name": "x"})}}
	runCase{
		name: "default", wf: shaped(true), tools: tools,
		status: RunCompleted, wantOut: true, output: M{"count": int64(0), "ok": false, "name": "x"},
	}.run(t)
	runCase{
		name: "no default", wf: shaped(false), tools: tools,
		status: RunFailed, errHas: []string{`output property "count"`, "not a valid integer", "give it a default"},
		errPos: &ir.Pos{File: "wf.yaml", Line: 40, Col: 7},
	}.run(t)
}

// BenchmarkParityPaths measures what issue 9 added to a step: building the
// content map of a result that has structuredContent and its JSON as text
// (what mcp-go servers send), and a chain of 100 steps that each read
// .workflow.step_count (a fresh .workflow map whenever steps start).
func BenchmarkParityPaths(b *testing.B) {
	b.Run("stepOutput_structured_with_text", func(b *testing.B) {
		res := &ToolResult{Structured: map[string]any{"v": 1}, Content: []Content{{Type: "text", Text: `{"v":1}`}}}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, _, _, ok := stepOutput(res); !ok {
				b.Fatal("not ok")
			}
		}
	})
	b.Run("chain100_reads_workflow", func(b *testing.B) {
		steps := []step{tool("s0", "svc.x", M{"v": "{{.workflow.step_count}}"})}
		for i := 1; i < 100; i++ {
			steps = append(steps, tool(fmt.Sprintf("s%d", i), "svc.x", M{"v": "{{.workflow.step_count}}"}, fmt.Sprintf("s%d", i-1)))
		}
		wf := build("chain100wf", steps...)
		e := mustEngine(b, plan(wf), Options{Backend: benchBackend{}, Store: NewMemoryStore(16)})
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if run, err := e.Run(ctx, wf.Name, nil, RunOptions{}); err != nil || run.Status != RunCompleted {
				b.Fatalf("Run = %v, %v", run, err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/step")
	})
}

// TestWorkflowFieldsWithForEach runs a forEach whose iterations read
// .workflow beside a chain of steps whose starts replace .workflow: under
// -race this proves the forEach workers copy the template data safely.
func TestWorkflowFieldsWithForEach(t *testing.T) {
	items := make([]any, 40)
	for i := range items {
		items[i] = int64(i)
	}
	// Four chains keep replacing .workflow while loops start their workers.
	var steps []step
	for c := 0; c < 4; c++ {
		steps = append(steps, tool(fmt.Sprintf("c%d_0", c), "svc.x", M{"at": "{{.workflow.step_count}}"}))
		for i := 1; i < 30; i++ {
			steps = append(steps, tool(fmt.Sprintf("c%d_%d", c, i), "svc.x", M{"at": "{{.workflow.step_count}}"}, fmt.Sprintf("c%d_%d", c, i-1)))
		}
	}
	for l := 0; l < 4; l++ {
		steps = append(steps, forEach(fmt.Sprintf("each%d", l), "{{.params.items}}", "n",
			tool("", "svc.x", M{"v": "{{.forEach.n}}", "at": "{{.workflow.step_count}}"}), fmt.Sprintf("c%d_%d", l, 5+l)).With(func(s *ir.Step) {
			s.ForEach.MaxParallel = 8
		}))
	}
	wf := build("racy_workflow_info", steps...)
	wf.InputSchema = M{"type": "object", "properties": M{"items": M{"type": "array"}}}
	for range 20 {
		runCase{
			name: "parallel", wf: wf, params: M{"items": items},
			status: RunCompleted,
			steps:  map[string]StepStatus{"each0": StepCompleted, "each3": StepCompleted, "c3_29": StepCompleted},
		}.run(t)
	}
}

type elicitFunc func(context.Context, ElicitRequest) (ElicitResult, error)

func (f elicitFunc) Elicit(ctx context.Context, req ElicitRequest) (ElicitResult, error) {
	return f(ctx, req)
}
