package ir

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func samplePlan() *Plan {
	yes := true
	return &Plan{
		Version: Version,
		Workflows: []*Workflow{{
			Name:        "w",
			Description: "d",
			Pos:         Pos{File: "w.yaml", Line: 1, Col: 1},
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "default": int64(3)}}},
			Timeout:     Duration(30 * time.Minute),
			FailureMode: FailureAbort,
			MaxParallel: 10,
			Annotations: &Annotations{Title: "T", ReadOnlyHint: &yes},
			Steps: []*Step{
				{Index: 0, ID: "a", Type: StepTool, Tool: &ToolRef{Backend: "b", Name: "t"}, Dependents: []int{1}, Idempotent: true,
					Timeout: Duration(5 * time.Minute), Remaining: 2,
					Arguments: &Value{Kind: KindObject, Fields: []*Field{
						{Key: "n", Value: &Value{Kind: KindLiteral, Literal: int64(5)}},
						{Key: "f", Value: &Value{Kind: KindLiteral, Literal: 1.5}},
						{Key: "x", Value: &Value{Kind: KindTemplate, Template: &Template{Source: "{{.params.n}}", Single: true, Pos: Pos{File: "w.yaml", Line: 9, Col: 12}}}},
						{Key: "y", Value: &Value{Kind: KindTemplate, Template: &Template{Source: "a\n{{.params.n}}", Pos: Pos{File: "w.yaml", Line: 10, Col: 9},
							Segments: []Segment{{Off: 0, Line: 10, Col: 9}, {Off: 1, Line: 10, Col: 10}, {Off: 2, Line: 11, Col: 9}}}}},
					}}},
				{Index: 1, ID: "b", Type: StepForEach, Deps: []int{0}, Level: 1, Remaining: 1, DefaultResults: map[string]any{"count": int64(0)}, Timeout: Duration(5 * time.Minute),
					ForEach: &ForEach{Collection: &Template{Source: "{{.steps.a.output.items}}"}, ItemVar: "item", MaxParallel: 10, MaxIterations: 100,
						Step: &Step{Index: 1, ID: "b", Type: StepTool, Tool: &ToolRef{Backend: "b", Name: "u"}, Idempotent: true, Timeout: Duration(5 * time.Minute)}}},
			},
			Levels:       [][]int{{0}, {1}},
			Stats:        Stats{TotalLevels: 2, TotalSteps: 2, MaxParallelism: 1, MinParallelism: 1, SequentialSteps: 2},
			CriticalPath: []int{0, 1},
			Sinks:        []int{1},
		}},
	}
}

// TestIdempotentEncoded: the resume rule reads Step.Idempotent from a
// plan that vmcpc compiled, so it must survive Encode and Decode.
func TestIdempotentEncoded(t *testing.T) {
	p := samplePlan()
	data, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"idempotent": true`) {
		t.Fatalf("Encode does not write idempotent:\n%s", data)
	}
	got := roundTrip(t, p)
	if !got.Workflows[0].Steps[0].Idempotent || !got.Workflows[0].Steps[1].ForEach.Step.Idempotent {
		t.Errorf("Decode lost Step.Idempotent")
	}
	if got.Workflows[0].Steps[1].Idempotent {
		t.Errorf("Decode set Idempotent on a step that did not have it")
	}
}

func TestRoundTrip(t *testing.T) {
	p := samplePlan()
	got := roundTrip(t, p)
	data, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Encode(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(data) {
		t.Errorf("Encode is not stable across a round trip")
	}
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name, edit, want string
	}{
		{"version", `"version": "` + Version + `"`, "not supported"},
		{"older version", `"version": "` + Version + `"`, "written by an older vmcpc and is not supported (this runtime reads \"" + Version + "\"); recompile the workflow sources with this vmcpc"},
		{"forward dep", `"deps": [` + "\n" + `            0` + "\n" + `          ]`, "not an earlier step"},
	}
	data, _ := Encode(samplePlan())
	for _, tt := range tests {
		var bad string
		switch tt.name {
		case "version":
			bad = strings.Replace(string(data), tt.edit, `"version": "vmcp.plan/v0"`, 1)
		case "older version":
			bad = strings.Replace(string(data), tt.edit, `"version": "vmcp.plan/v1"`, 1)
		case "forward dep":
			bad = strings.Replace(string(data), tt.edit, `"deps": [5]`, 1)
		}
		if bad == string(data) {
			t.Fatalf("%s: edit did not apply", tt.name)
		}
		if _, err := Decode([]byte(bad)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Decode(%s) error = %v; want it to contain %q", tt.name, err, tt.want)
		}
	}
	if _, err := Decode([]byte("{")); err == nil {
		t.Errorf("Decode of truncated JSON succeeded")
	}
}

// roundTrip encodes and decodes p, fails the test unless the result
// equals p, and returns it.
func roundTrip(t *testing.T, p *Plan) *Plan {
	t.Helper()
	data, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data)
	if err != nil {
		t.Fatalf("Decode(Encode(p)) failed: %v", err)
	}
	if diff := cmp.Diff(p, got); diff != "" {
		t.Errorf("Decode(Encode(p)) differs (-want +got):\n%s", diff)
	}
	return got
}
