package checker

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/parser"
	"github.com/vmcp-dev/vmcp/planner"
)

var update = flag.Bool("update", false, "rewrite the golden IR files in testdata/valid")

// checkValid parses and checks a file that must produce no diagnostics.
func checkValid(t *testing.T, path string) []*ir.Workflow {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, pd := parser.Parse(filepath.Base(path), src)
	wfs, cd := Check([]*parser.File{f}, Options{})
	for _, d := range append(pd, cd...) {
		t.Errorf("%s: unexpected %s: %s: %s", d.Pos, d.Severity, d.Code, d.Message)
	}
	return wfs
}

// TestValidGolden checks every valid file and compares its IR with the
// golden JSON next to it (go test -update rewrites them).
func TestValidGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/valid/*.yaml")
	jsonFiles, _ := filepath.Glob("testdata/valid/*.json")
	for _, f := range jsonFiles {
		if !strings.HasSuffix(f, ".ir.json") {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		t.Fatal("no valid test files")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			wfs := checkValid(t, path)
			if len(wfs) == 0 {
				t.Fatalf("Check(%s) returned no workflows", path)
			}
			got, err := ir.Encode(&ir.Plan{Version: ir.Version, Workflows: wfs})
			if err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(strings.TrimSuffix(path, ".yaml"), ".json") + ".ir.json"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("IR of %s differs from %s (-want +got):\n%s", path, golden, cmp.Diff(string(want), string(got)))
			}
		})
	}
}

func findStep(t *testing.T, w *ir.Workflow, id string) *ir.Step {
	t.Helper()
	for _, s := range w.Steps {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("workflow %q has no step %q", w.Name, id)
	return nil
}

func TestValidIncident(t *testing.T) {
	wfs := checkValid(t, "testdata/valid/incident.yaml")
	if len(wfs) != 1 {
		t.Fatalf("Check(incident.yaml) returned %d workflows; want 1", len(wfs))
	}
	w := wfs[0]
	wantSchema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"incident_id": map[string]any{"type": "string", "description": "The incident identifier"},
			"time_range":  map[string]any{"type": "string", "default": "1h"},
			"verbose":     map[string]any{"type": "boolean"},
		},
		"required": []any{"incident_id"},
	}
	if diff := cmp.Diff(wantSchema, w.InputSchema); diff != "" {
		t.Errorf("InputSchema differs (-want +got):\n%s", diff)
	}
	if w.Timeout.D().String() != "10m0s" || w.MaxParallel != 4 || w.FailureMode != "abort" {
		t.Errorf("workflow settings = timeout %s, maxParallel %d, failureMode %s; want 10m0s, 4, abort", w.Timeout.D(), w.MaxParallel, w.FailureMode)
	}
	var ids []string
	for i, s := range w.Steps {
		ids = append(ids, s.ID)
		if s.Index != i {
			t.Errorf("step %q has Index %d at position %d", s.ID, s.Index, i)
		}
	}
	if diff := cmp.Diff([]string{"fetch_logs", "fetch_metrics", "correlate", "confirm", "notify_each"}, ids); diff != "" {
		t.Errorf("steps are not in source order (-want +got):\n%s", diff)
	}
	logs := findStep(t, w, "fetch_logs")
	wantArgs := &ir.Value{Kind: ir.KindObject, Fields: []*ir.Field{
		{Key: "incident_id", Value: &ir.Value{Kind: ir.KindTemplate, Template: &ir.Template{
			Source: "{{.params.incident_id}}", Pos: ir.Pos{File: "incident.yaml", Line: 43, Col: 23}, Path: "steps[0].arguments.incident_id", Single: true}}},
		{Key: "window", Value: &ir.Value{Kind: ir.KindTemplate, Template: &ir.Template{
			Source: "{{.vars.window}}", Pos: ir.Pos{File: "incident.yaml", Line: 44, Col: 18}, Path: "steps[0].arguments.window", Single: true}}},
		{Key: "limit", Value: &ir.Value{Kind: ir.KindLiteral, Literal: int64(100)}},
		{Key: "ratio", Value: &ir.Value{Kind: ir.KindLiteral, Literal: 0.5}},
		{Key: "tags", Value: &ir.Value{Kind: ir.KindArray, Items: []*ir.Value{
			{Kind: ir.KindLiteral, Literal: "a"},
			{Kind: ir.KindTemplate, Template: &ir.Template{Source: "{{.vars.label}}", Pos: ir.Pos{File: "incident.yaml", Line: 47, Col: 20}, Path: "steps[0].arguments.tags[1]", Single: true}},
			{Kind: ir.KindLiteral},
			{Kind: ir.KindLiteral, Literal: true},
		}}},
	}}
	if diff := cmp.Diff(wantArgs, logs.Arguments); diff != "" {
		t.Errorf("fetch_logs arguments differ (-want +got):\n%s", diff)
	}
	if logs.Timeout.D().String() != "5m0s" || logs.MaySkip {
		t.Errorf("fetch_logs: timeout %s, MaySkip %v; want the 5m default and false", logs.Timeout.D(), logs.MaySkip)
	}
	metrics := findStep(t, w, "fetch_metrics")
	if !metrics.MaySkip || metrics.OnError.Action != "continue" {
		t.Errorf("fetch_metrics: MaySkip %v, onError %q; want true, continue", metrics.MaySkip, metrics.OnError.Action)
	}
	corr := findStep(t, w, "correlate")
	if diff := cmp.Diff([]int{0, 1}, corr.Deps); diff != "" {
		t.Errorf("correlate deps differ (-want +got):\n%s", diff)
	}
	wantOE := ir.OnError{Action: "retry", MaxRetries: 2, RetryDelay: ir.Duration(defaultRetryDelay)}
	if !cmp.Equal(corr.OnError, wantOE) {
		t.Errorf("correlate onError = %+v; want %+v", corr.OnError, wantOE)
	}
	if text := corr.Arguments.Fields[2].Value.Template; text == nil || text.Single {
		t.Errorf("correlate text template = %+v; want a template with Single false", text)
	}
	confirm := findStep(t, w, "confirm")
	if confirm.OnDecline != "skip_remaining" || confirm.OnCancel != "abort" || confirm.MaySkip {
		t.Errorf("confirm: onDecline %q onCancel %q MaySkip %v; want skip_remaining, abort (default), false", confirm.OnDecline, confirm.OnCancel, confirm.MaySkip)
	}
	fe := findStep(t, w, "notify_each").ForEach
	if fe == nil || fe.ItemVar != "owner" || fe.MaxParallel != 3 || fe.MaxIterations != 100 || fe.Step == nil || fe.Step.Tool.String() != "slack.post" {
		t.Fatalf("notify_each forEach = %+v; want itemVar owner, maxParallel 3, maxIterations 100 (default), inner slack.post", fe)
	}
	if fe.Step.ID != "notify_each" || len(fe.Step.Deps) != 0 {
		t.Errorf("inner step id %q deps %v; want the forEach's id and no deps", fe.Step.ID, fe.Step.Deps)
	}
	if w.Output == nil || len(w.Output.Properties) != 3 {
		t.Fatalf("output = %+v; want 3 properties", w.Output)
	}
	wantOut := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"summary":  map[string]any{"type": "string", "description": "The correlation summary"},
			"notified": map[string]any{"type": "integer", "default": int64(0)},
			"details": map[string]any{"type": "object", "properties": map[string]any{
				"logs": map[string]any{"type": "object"},
			}, "required": []any{"logs"}},
		},
		"required": []any{"summary"},
	}
	if diff := cmp.Diff(wantOut, w.Output.Schema); diff != "" {
		t.Errorf("output schema differs (-want +got):\n%s", diff)
	}
	if w.Annotations == nil || w.Annotations.Title != "Investigate incident" || w.Annotations.ReadOnlyHint == nil || *w.Annotations.ReadOnlyHint || w.Annotations.DestructiveHint != nil {
		t.Errorf("annotations = %+v; want title, readOnlyHint false, destructiveHint unset", w.Annotations)
	}
	if len(w.Vars) != 2 || w.Vars[0].Name != "label" || w.Vars[0].Value.Template == nil {
		t.Errorf("vars = %+v; want label and window as templates", w.Vars)
	}
}

func TestValidShorthand(t *testing.T) {
	wfs := checkValid(t, "testdata/valid/shorthand.yaml")
	if len(wfs) != 2 {
		t.Fatalf("Check(shorthand.yaml) returned %d workflows; want 2", len(wfs))
	}
	wantSchema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"title":    map[string]any{"type": "string", "description": "Issue title"},
			"body":     map[string]any{"type": "string"},
			"priority": map[string]any{"type": "integer", "default": int64(3)},
		},
		"required": []any{"title", "priority"},
	}
	if diff := cmp.Diff(wantSchema, wfs[0].InputSchema); diff != "" {
		t.Errorf("shorthand InputSchema differs (-want +got):\n%s", diff)
	}
	notify := findStep(t, wfs[0], "notify")
	if diff := cmp.Diff([]int{0}, notify.Deps); diff != "" {
		t.Errorf("notify deps (depends_on) differ (-want +got):\n%s", diff)
	}
	if want := (ir.OnError{Action: "retry", MaxRetries: 4, RetryDelay: ir.Duration(defaultRetryDelay)}); !cmp.Equal(notify.OnError, want) {
		t.Errorf("notify onError (retry_count) = %+v; want %+v", notify.OnError, want)
	}
	min := wfs[1]
	want := &ir.Workflow{
		Name: "minimal", Description: "Everything defaulted", Pos: min.Pos,
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{}},
		Timeout:     ir.Duration(defaultWorkflowTimeout), FailureMode: "abort", MaxParallel: 10,
		Steps: []*ir.Step{{
			Index: 0, ID: "only", Type: "tool", Pos: min.Steps[0].Pos,
			Timeout:   ir.Duration(defaultStepTimeout),
			Tool:      &ir.ToolRef{Backend: "a", Name: "b", Pos: min.Steps[0].Tool.Pos},
			Arguments: &ir.Value{Kind: ir.KindObject},
		}},
	}
	if diff := cmp.Diff(want, min); diff != "" {
		t.Errorf("minimal workflow differs (-want +got):\n%s", diff)
	}
}

// TestValidRoundTrip checks that the IR survives ir.Encode and ir.Decode
// unchanged, so a plan written by vmcpc runs the same as one compiled in
// memory.
func TestValidRoundTrip(t *testing.T) {
	for _, path := range []string{"testdata/valid/incident.yaml", "testdata/valid/shorthand.yaml", "testdata/valid/config.json"} {
		plan, pdiags := planner.Plan(checkValid(t, path))
		if pdiags.HasErrors() {
			t.Fatalf("Plan(%s): %v", path, pdiags)
		}
		data, err := ir.Encode(plan)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ir.Decode(data)
		if err != nil {
			t.Fatalf("Decode(Encode(%s)): %v", path, err)
		}
		if diff := cmp.Diff(plan, back); diff != "" {
			t.Errorf("%s: IR changed in a round trip (-checked +decoded):\n%s", path, diff)
		}
	}
}
