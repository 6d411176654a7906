package runtime

import (
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/ir"
)

// TestElicitationAnswerChecked: an accepted answer is validated against
// the step's form, multi-select fields included. A bad answer fails the
// elicitation step itself, naming the field and the rule but never the
// value, and the step after it does not run.
func TestElicitationAnswerChecked(t *testing.T) {
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
			elicit("ask", "Pick").with(func(s *ir.Step) { s.Schema = form }),
			tool("use", "svc.use", nil, "ask"),
		)
	}
	answer := func(content M) Elicitor {
		return &scriptedElicitor{res: ElicitResult{Action: ElicitAccept, Content: content}}
	}
	cases := []runCase{
		{name: "good", wf: wf(), elicit: answer(M{"colours": A{"red", "green"}, "sizes": A{"l"}, "pin": "1234"}),
			status: RunCompleted, steps: map[string]StepStatus{"ask": StepCompleted, "use": StepCompleted}},
		{name: "not a choice", wf: wf(), elicit: answer(M{"colours": A{"blue"}}),
			status: RunFailed, steps: map[string]StepStatus{"ask": StepFailed, "use": StepPending},
			errHas: []string{`step "ask"`, `the answer does not match the elicitation schema: field "colours.0" must be one of the values its enum allows`}},
		{name: "not an anyOf const", wf: wf(), elicit: answer(M{"colours": A{"red"}, "sizes": A{"xl"}}),
			status: RunFailed, errHas: []string{`field "sizes.0"`}},
		{name: "missing and empty", wf: wf(), elicit: answer(M{"sizes": A{}}),
			status: RunFailed, errHas: []string{`field "colours" is required`}},
		{name: "wrong type", wf: wf(), elicit: answer(M{"colours": "red"}),
			status: RunFailed, errHas: []string{`field "colours" must be array (got string)`}},
		{name: "the value is never echoed", wf: wf(), elicit: answer(M{"colours": A{"red"}, "pin": "s3cret"}),
			status: RunFailed, errHas: []string{`field "pin" does not match the pattern ^[0-9]{4}$`},
			check: func(t *testing.T, run *Run, _ *fakeBackend) {
				if run.Error != nil && strings.Contains(run.Error.Error(), "s3cret") {
					t.Errorf("run error %q echoes the answer", run.Error)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, c.run)
	}
}
