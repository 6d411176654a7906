package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/runtime"
)

// TestPrintRunDetailVersion: runs show says which version ran, and marks
// a draft's run.
func TestPrintRunDetailVersion(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		run  runtime.Run
		want string
	}{
		{runtime.Run{WorkflowVersion: "3"}, "workflow  greet\nversion   3\nstatus"},
		{runtime.Run{WorkflowVersion: "draft-0a1b2c3d4e5f", Draft: true}, "version   draft-0a1b2c3d4e5f (a draft, never saved)\n"},
	} {
		run := tt.run
		run.ID, run.Workflow, run.Status, run.StartedAt, run.EndedAt = "r", "greet", runtime.RunCompleted, t0, t0.Add(time.Second)
		var buf bytes.Buffer
		printRunDetail(&buf, httpapi.Detail(&run, t0), t0)
		if !strings.Contains(buf.String(), tt.want) {
			t.Errorf("printRunDetail =\n%s\nwant it to contain %q", buf.String(), tt.want)
		}
	}
}
