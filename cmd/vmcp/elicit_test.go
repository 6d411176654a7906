package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/runtime"
)

func TestTerminalElicitor(t *testing.T) {
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"approve":  map[string]any{"type": "boolean", "description": "Deploy now"},
			"replicas": map[string]any{"type": "integer"},
			"note":     map[string]any{"type": "string"},
		},
		"required": []any{"approve", "replicas"},
	}
	tests := []struct {
		name  string
		input string
		want  runtime.ElicitResult
		err   string
	}{
		{"accept with typed fields", "yes\nship it\n3\na\n",
			runtime.ElicitResult{Action: "accept", Content: map[string]any{"approve": true, "replicas": int64(3), "note": "ship it"}}, ""},
		{"fields in name order; bad values are asked again; optional ones may be empty", "maybe\nno\n\nthree\n2\na\n",
			runtime.ElicitResult{Action: "accept", Content: map[string]any{"approve": false, "replicas": int64(2)}}, ""},
		{"a required field is asked again after a bare Enter", "\ny\n\n1\naccept\n",
			runtime.ElicitResult{Action: "accept", Content: map[string]any{"approve": true, "replicas": int64(1)}}, ""},
		{"a bare Enter at the last question cancels, it does not accept", "y\n\n1\n\n", runtime.ElicitResult{Action: "cancel"}, ""},
		{"decline", "y\n\n1\nd\n", runtime.ElicitResult{Action: "decline"}, ""},
		{"cancel", "y\n\n1\ncancel\n", runtime.ElicitResult{Action: "cancel"}, ""},
		{"stdin ends", "y\n", runtime.ElicitResult{}, "stdin ended before the elicitation was answered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			paused := []bool{}
			e := newTerminalElicitor(strings.NewReader(tt.input), &out, func(p bool) { paused = append(paused, p) })
			got, err := e.Elicit(context.Background(), runtime.ElicitRequest{StepID: "approve", Message: "Deploy v2?", Schema: schema})
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("Elicit error = %v; want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Elicit: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Elicit mismatch (-want +got):\n%s", diff)
			}
			if !strings.Contains(out.String(), "Deploy v2? (step approve)\napprove (boolean) - Deploy now: ") {
				t.Errorf("prompt = %q; want the message and the first field", out.String())
			}
			if diff := cmp.Diff([]bool{true, false}, paused); diff != "" {
				t.Errorf("progress display pauses (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTerminalElicitorDefaults: each prompt shows what a bare Enter does,
// and a bare Enter does exactly that.
func TestTerminalElicitorDefaults(t *testing.T) {
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"env":      map[string]any{"type": "string", "default": "staging"},
			"replicas": map[string]any{"type": "integer", "default": 3},
			"note":     map[string]any{"type": "string"},
		},
		"required": []any{"env", "replicas"},
	}
	var out bytes.Buffer
	e := newTerminalElicitor(strings.NewReader("\n\n\na\n"), &out, nil)
	got, err := e.Elicit(context.Background(), runtime.ElicitRequest{StepID: "ask", Message: "Where?", Schema: schema})
	if err != nil {
		t.Fatalf("Elicit: %v", err)
	}
	want := runtime.ElicitResult{Action: "accept", Content: map[string]any{"env": "staging", "replicas": 3}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Elicit mismatch (-want +got):\n%s", diff)
	}
	wantPrompt := "\nWhere? (step ask)\n" +
		"env (string) [default: staging]: " +
		"note (string) [optional]: " +
		"replicas (integer) [default: 3]: " +
		"[a]ccept, [d]ecline or [c]ancel (Enter: cancel)? "
	if got := out.String(); got != wantPrompt {
		t.Errorf("prompts = %q; want %q", got, wantPrompt)
	}
}

// TestTerminalElicitorNamesTheAskingBackend: a backend's question during a
// tool step says which backend tool asks.
func TestTerminalElicitorNamesTheAskingBackend(t *testing.T) {
	var out bytes.Buffer
	e := newTerminalElicitor(strings.NewReader("d\n"), &out, nil)
	req := runtime.ElicitRequest{StepID: "deploy", Message: "Proceed?", Schema: map[string]any{"type": "object"}, Backend: "ev", Tool: "ask"}
	got, err := e.Elicit(context.Background(), req)
	if err != nil || got.Action != "decline" {
		t.Fatalf("Elicit = %+v, %v; want a decline", got, err)
	}
	if want := "\nProceed? (step deploy, asked by ev.ask)\n"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("prompt = %q; want it to start with %q", out.String(), want)
	}
}
