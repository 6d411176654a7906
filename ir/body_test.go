package ir

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// bodyPlan is samplePlan with step b's inner step replaced by a body of
// two steps, the second depending on the first, with a loop output.
func bodyPlan() *Plan {
	p := samplePlan()
	fe := p.Workflows[0].Steps[1].ForEach
	fe.Step = nil
	fe.Steps = []*Step{
		{Index: 0, ID: "fetch", Type: StepTool, Tool: &ToolRef{Backend: "b", Name: "get"}, Dependents: []int{1}, Remaining: 2,
			Timeout: Duration(time.Minute), DefaultResults: map[string]any{"n": int64(1)}},
		{Index: 1, ID: "write", Type: StepTool, Tool: &ToolRef{Backend: "b", Name: "put"}, Deps: []int{0}, Level: 1, Remaining: 1,
			Timeout: Duration(time.Minute)},
	}
	fe.Levels, fe.Sinks, fe.CriticalPath = [][]int{{0}, {1}}, []int{1}, []int{0, 1}
	fe.Output = &Output{Properties: []*OutputProperty{{Name: "n", Type: "integer", Default: int64(0), HasDefault: true,
		Value: &Template{Source: "{{.steps.write.output.n}}"}}}, Schema: map[string]any{"type": "object", "maxProperties": int64(3)}}
	return p
}

// TestBodyRoundTrip: a plan with a loop body decodes to what was
// encoded (numbers in body defaults and the loop output's schema too).
func TestBodyRoundTrip(t *testing.T) {
	p := bodyPlan()
	got := roundTrip(t, p)
	var ids []string
	EachStep(got.Workflows[0].Steps, func(s *Step) { ids = append(ids, s.ID) })
	if diff := cmp.Diff([]string{"a", "b", "fetch", "write"}, ids); diff != "" {
		t.Errorf("EachStep order (-want +got):\n%s", diff)
	}
}

// TestDecodeRejectsBadBodies: body indexes are checked as top-level ones,
// and a loop has exactly one of an inner step and a body.
func TestDecodeRejectsBadBodies(t *testing.T) {
	forward := bodyPlan()
	forward.Workflows[0].Steps[1].ForEach.Steps[0].Deps = []int{1}
	both := bodyPlan()
	both.Workflows[0].Steps[1].ForEach.Step = &Step{ID: "b", Type: StepTool, Tool: &ToolRef{Backend: "b", Name: "u"}}
	sink := bodyPlan()
	sink.Workflows[0].Steps[1].ForEach.Sinks = []int{7}
	for _, tt := range []struct {
		name string
		p    *Plan
		want string
	}{
		{"forward dependency", forward, `body of forEach step "b": step "fetch" depends on index 1, which is not an earlier step`},
		{"step and steps", both, `forEach step "b" needs exactly one of an inner step and body steps`},
		{"sink out of range", sink, `body of forEach step "b": index 7 out of range`},
	} {
		data, err := Encode(tt.p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(data); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Decode(%s) error = %v; want it to contain %q", tt.name, err, tt.want)
		}
	}
}
