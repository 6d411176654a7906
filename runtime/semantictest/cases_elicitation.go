package semantictest

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Elicitation steps: ToolHive's outputs, handlers and answer checks.

func elicitationCases() []Case {
	approve := func(onDecline, onCancel string, stepTimeout time.Duration) *ir.Workflow {
		return build("deploy",
			tool("plan", "svc.plan", nil),
			elicit("confirm", "Deploy {{.params.env}}?", "plan").With(func(s *ir.Step) {
				s.OnDecline, s.OnCancel = onDecline, onCancel
				s.DefaultResults = M{"content": M{"approved": false}}
				if stepTimeout > 0 {
					s.Timeout = ir.Duration(stepTimeout)
				}
			}),
			tool("apply", "svc.apply", M{"approved": "{{index .steps.confirm.output.content \"approved\"}}", "how": "{{.steps.confirm.output.action}}"}, "confirm"),
		)
	}
	accept := &scriptedElicitor{res: runtime.ElicitResult{Action: runtime.ElicitAccept, Content: M{"approved": true}}}
	outputOf := func(id string, want any) func(*testing.T, *runtime.Run, *fakeBackend) {
		return func(t *testing.T, run *runtime.Run, _ *fakeBackend) {
			t.Helper()
			for _, st := range run.Steps {
				if st.ID == id {
					if diff := cmp.Diff(want, st.Output); diff != "" {
						t.Errorf("step %q output mismatch (-want +got):\n%s", id, diff)
					}
				}
			}
		}
	}
	cases := []Case{
		{
			name: "accept: the output is {action, content}", wf: approve(ir.ActionAbort, ir.ActionAbort, 0), params: M{"env": "prod"}, elicit: accept,
			status: runtime.RunCompleted, wantOut: true, output: M{"args": M{"approved": true, "how": "accept"}},
			check: func(t *testing.T, run *runtime.Run, fb *fakeBackend) {
				if len(accept.reqs) != 1 || accept.reqs[0].Message != "Deploy prod?" || accept.reqs[0].StepID != "confirm" {
					t.Errorf("elicitation requests = %+v; want one for confirm with message %q", accept.reqs, "Deploy prod?")
				}
				outputOf("confirm", M{"action": "accept", "content": M{"approved": true}})(t, run, fb)
			},
		},
		{
			name: "decline with abort fails the run", wf: approve(ir.ActionAbort, ir.ActionAbort, 0),
			elicit: &scriptedElicitor{res: runtime.ElicitResult{Action: runtime.ElicitDecline}},
			status: runtime.RunFailed, errHas: []string{`step "confirm"`, "the user declined (onDecline: abort)"},
			steps: map[string]runtime.StepStatus{"apply": runtime.StepPending},
		},
		{
			name: "decline with continue completes with the action and defaultResults.content", wf: approve(ir.ActionContinue, ir.ActionAbort, 0),
			elicit: &scriptedElicitor{res: runtime.ElicitResult{Action: runtime.ElicitDecline}},
			status: runtime.RunCompleted, wantOut: true, output: M{"args": M{"approved": false, "how": "decline"}},
			steps: map[string]runtime.StepStatus{"confirm": runtime.StepCompleted, "apply": runtime.StepCompleted},
			check: outputOf("confirm", M{"action": "decline", "content": M{"approved": false}}),
		},
		{
			name: "continue without defaultResults gives only the action",
			wf: func() *ir.Workflow {
				w := approve(ir.ActionContinue, ir.ActionAbort, 0)
				w.Steps[1].DefaultResults = nil
				w.Steps[2].Arguments = val(M{"how": "{{.steps.confirm.output.action}}"})
				return w
			}(),
			elicit: &scriptedElicitor{res: runtime.ElicitResult{Action: runtime.ElicitDecline}},
			status: runtime.RunCompleted, wantOut: true, output: M{"args": M{"how": "decline"}},
			check: outputOf("confirm", M{"action": "decline"}),
		},
		{
			name: "cancel with skip_remaining completes with skipped and skips the rest", wf: approve(ir.ActionAbort, ir.ActionSkipRemaining, 0),
			elicit: &scriptedElicitor{res: runtime.ElicitResult{Action: runtime.ElicitCancel}},
			status: runtime.RunCompleted,
			steps:  map[string]runtime.StepStatus{"plan": runtime.StepCompleted, "confirm": runtime.StepCompleted, "apply": runtime.StepSkipped},
			check: func(t *testing.T, run *runtime.Run, fb *fakeBackend) {
				if n := len(fb.CallsTo("apply")); n != 0 {
					t.Errorf("apply was called %d times after skip_remaining; want 0", n)
				}
				outputOf("confirm", M{"action": "cancel", "skipped": true})(t, run, fb)
			},
		},
		{
			name: "no elicitor: onCancel abort fails clearly", wf: approve(ir.ActionAbort, ir.ActionAbort, 0),
			status: runtime.RunFailed, errHas: []string{`step "confirm"`, "cannot answer elicitation requests"},
		},
		{
			name: "no elicitor: onCancel continue goes on", wf: approve(ir.ActionAbort, ir.ActionContinue, 0),
			status: runtime.RunCompleted, steps: map[string]runtime.StepStatus{"confirm": runtime.StepCompleted, "apply": runtime.StepCompleted},
			check: outputOf("confirm", M{"action": "cancel", "content": M{"approved": false}}),
		},
		{
			name: "no answer within the step timeout counts as cancel", wf: approve(ir.ActionAbort, ir.ActionAbort, 20*time.Millisecond),
			elicit: &scriptedElicitor{hang: true},
			status: runtime.RunFailed, errHas: []string{`step "confirm"`, "no answer within 20ms"},
		},
		{
			name: "timeout with continue records action timeout", wf: approve(ir.ActionAbort, ir.ActionContinue, 20*time.Millisecond),
			elicit: &scriptedElicitor{hang: true},
			status: runtime.RunCompleted, wantOut: true, output: M{"args": M{"approved": false, "how": "timeout"}},
			check: outputOf("confirm", M{"action": "timeout", "content": M{"approved": false}}),
		},
		{
			name: "timeout with skip_remaining", wf: approve(ir.ActionAbort, ir.ActionSkipRemaining, 20*time.Millisecond),
			elicit: &scriptedElicitor{hang: true},
			status: runtime.RunCompleted, steps: map[string]runtime.StepStatus{"confirm": runtime.StepCompleted, "apply": runtime.StepSkipped},
			check: outputOf("confirm", M{"action": "timeout", "skipped": true}),
		},
	}
	for i := range cases {
		if cases[i].params == nil {
			cases[i].params = M{"env": "dev"}
		}
	}
	return cases
}

// TestElicitationAnswerChecked: an accepted answer is validated against
// the step's form, multi-select fields included. A bad answer fails the
// elicitation step itself, naming the field and the rule but never the
// value, and the step after it does not run.
func answerCases() []Case {
	form := M{
		"type": "object",
		"properties": M{
			"colours": M{"type": "array", "minItems": int64(1), "items": M{"type": "string", "enum": A{"red", "green"}}},
			"sizes":   M{"type": "array", "items": M{"anyOf": A{M{"const": "s", "title": "Small"}, M{"const": "l", "title": "Large"}}}},
			"pin":     M{"type": "string", "pattern": "^[0-9]{4}$"},
		},
		"required": A{"colours"},
	}
	wf := func() *ir.Workflow {
		return build("pick",
			elicit("ask", "Pick").With(func(s *ir.Step) { s.Schema = form }),
			tool("use", "svc.use", nil, "ask"),
		)
	}
	answer := func(content M) runtime.Elicitor {
		return &scriptedElicitor{res: runtime.ElicitResult{Action: runtime.ElicitAccept, Content: content}}
	}
	cases := []Case{
		{name: "good", wf: wf(), elicit: answer(M{"colours": A{"red", "green"}, "sizes": A{"l"}, "pin": "1234"}),
			status: runtime.RunCompleted, steps: map[string]runtime.StepStatus{"ask": runtime.StepCompleted, "use": runtime.StepCompleted}},
		{name: "not a choice", wf: wf(), elicit: answer(M{"colours": A{"blue"}}),
			status: runtime.RunFailed, steps: map[string]runtime.StepStatus{"ask": runtime.StepFailed, "use": runtime.StepPending},
			errHas: []string{`step "ask"`, `the answer does not match the elicitation schema: field "colours.0" must be one of the values its enum allows`}},
		{name: "not an anyOf const", wf: wf(), elicit: answer(M{"colours": A{"red"}, "sizes": A{"xl"}}),
			status: runtime.RunFailed, errHas: []string{`field "sizes.0"`}},
		{name: "missing and empty", wf: wf(), elicit: answer(M{"sizes": A{}}),
			status: runtime.RunFailed, errHas: []string{`field "colours" is required`}},
		{name: "wrong type", wf: wf(), elicit: answer(M{"colours": "red"}),
			status: runtime.RunFailed, errHas: []string{`field "colours" must be array (got string)`}},
		{name: "the value is never echoed", wf: wf(), elicit: answer(M{"colours": A{"red"}, "pin": "s3cret"}),
			status: runtime.RunFailed, errHas: []string{`field "pin" does not match the pattern ^[0-9]{4}$`},
			check: func(t *testing.T, run *runtime.Run, _ *fakeBackend) {
				if run.Error != nil && strings.Contains(run.Error.Error(), "s3cret") {
					t.Errorf("run error %q echoes the answer", run.Error)
				}
			}},
	}
	return cases
}
