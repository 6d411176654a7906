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
		{"fields in name order; bad values are asked again; optional ones may be empty", "maybe\nno\n\nthree\n2\n\n",
			runtime.ElicitResult{Action: "accept", Content: map[string]any{"approve": false, "replicas": int64(2)}}, ""},
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
