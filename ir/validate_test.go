package ir

import (
	"strings"
	"testing"
)

// TestValidateRefusesWhatTheRuntimeTrusts: each fact the runtime reads
// without computing it again is checked when a plan is decoded.
func TestValidateRefusesWhatTheRuntimeTrusts(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Plan)
		want string
	}{
		{"dependents left out", func(p *Plan) { p.Workflows[0].Steps[0].Dependents = nil }, `step "b" depends on "a", whose dependents leave it out`},
		{"sinks wrong", func(p *Plan) { p.Workflows[0].Sinks = []int{0} }, "sinks [0] are not the steps without dependents [1]"},
		{"no step timeout", func(p *Plan) { p.Workflows[0].Steps[0].Timeout = 0 }, `step "a" has no positive timeout`},
		{"no loop parallelism", func(p *Plan) { p.Workflows[0].Steps[1].ForEach.MaxParallel = 0 }, `forEach step "b" needs maxParallel in 1..50`},
		{"no item name", func(p *Plan) { p.Workflows[0].Steps[1].ForEach.ItemVar = "" }, "and an item name"},
		{"duplicate id", func(p *Plan) { p.Workflows[0].Steps[1].ID = "a" }, `duplicate step id "a"`},
		{"no type", func(p *Plan) { p.Workflows[0].Steps[0].Type = "" }, `step "a" has type ""`},
		{"no workflow limits", func(p *Plan) { p.Workflows[0].MaxParallel = 0 }, "maxParallel (0) must be positive"},
	}
	for _, c := range cases {
		p := samplePlan()
		c.edit(p)
		data, err := Encode(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(data); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Decode error = %v; want it to contain %q", c.name, err, c.want)
		}
	}
}

// TestV2PlanIsReadAsV3: a v2 plan holds the same facts, so it is read
// (and a Temporal run's input validated) as the current version.
func TestV2PlanIsReadAsV3(t *testing.T) {
	p := samplePlan()
	p.Version = "vmcp.plan/v2"
	data, err := Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(data)
	if err != nil || back.Version != Version {
		t.Fatalf("Decode(v2 plan) = version %v, %v; want %q", back, err, Version)
	}
	p = samplePlan()
	p.Version = "vmcp.plan/v2"
	p.Workflows[0].Sinks = nil
	if err := Validate(p); err == nil || p.Version != "vmcp.plan/v2" {
		t.Errorf("Validate(broken v2 plan) = %v, version now %q; want an error and the version left as it was", err, p.Version)
	}
}
