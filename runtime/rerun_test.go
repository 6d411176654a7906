package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/ir"
)

// TestPrepareRerun: what may be re-run, and the errors that say why not.
func TestPrepareRerun(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore(0)
	add := func(r *Run) {
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	add(&Run{ID: "done", Workflow: "w", WorkflowVersion: "v1", Status: RunFailed, Params: map[string]any{"x": 1.0}})
	add(&Run{ID: "going", Workflow: "w", WorkflowVersion: "v1", Status: RunRunning})
	add(&Run{ID: "draft", Workflow: "w", Status: RunCompleted, Draft: true})
	add(&Run{ID: "gone", Workflow: "deleted", Status: RunCompleted})
	served := map[string]*ir.Workflow{"w": {Name: "w", Version: "v2"}}
	lookup := func(name string) (*ir.Workflow, bool) { wf, ok := served[name]; return wf, ok }

	rr, err := PrepareRerun(ctx, s, lookup, "done", true)
	if err != nil || rr.Workflow != "w" || rr.Params["x"] != 1.0 || rr.Options.Trigger != "rerun:done" {
		t.Errorf("PrepareRerun(done, current) = %+v, %v; want w with x=1, trigger rerun:done", rr, err)
	}
	tests := []struct {
		id   string
		want string
	}{
		{"done", "run done cannot be re-run: it ran version v1 of workflow \"w\", and the version served now is v2; re-run it with --current"},
		{"going", "run going cannot be re-run: it is still running; re-run it once it has finished"},
		{"draft", "it ran an unsaved draft of \"w\""},
		{"gone", "its workflow \"deleted\" is no longer served"},
	}
	for _, tt := range tests {
		_, err := PrepareRerun(ctx, s, lookup, tt.id, false)
		if !IsRerunError(err) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("PrepareRerun(%s) = %v; want a RerunError containing %q", tt.id, err, tt.want)
		}
	}
	if _, err := PrepareRerun(ctx, s, lookup, "nope", false); !errors.Is(err, ErrRunNotFound) {
		t.Errorf("PrepareRerun(nope) = %v; want ErrRunNotFound", err)
	}
	served["w"].Version = "v1"
	if _, err := PrepareRerun(ctx, s, lookup, "done", false); err != nil {
		t.Errorf("PrepareRerun(done) on the version it ran = %v; want nil", err)
	}
}
