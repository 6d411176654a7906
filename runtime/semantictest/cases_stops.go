package semantictest

// Stops: the workflow timeout, step timeouts and an abort that cancels
// the running siblings.

import (
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

func withTimeout(wf *ir.Workflow, d time.Duration) *ir.Workflow {
	wf.Timeout = ir.Duration(d)
	return wf
}

func stopCases() []Case {
	hang := map[string]*fakeTool{"svc.hang": {Hang: true}}
	return []Case{
		{
			name:   "workflow timeout: the hanging call is cancelled, the run times out",
			wf:     withTimeout(build("wto", tool("h", "svc.hang", nil), tool("x", "svc.x", nil, "h")), 30*time.Millisecond),
			tools:  hang,
			status: runtime.RunTimedOut,
			errHas: []string{"timed out after 30ms"},
			steps:  map[string]runtime.StepStatus{"h": runtime.StepFailed, "x": runtime.StepPending},
			check: func(t *testing.T, run *runtime.Run, fb *fakeBackend) {
				if n := fb.SawCancel.Load(); n != 1 {
					t.Errorf("backend saw %d cancelled calls; want 1", n)
				}
			},
		},
		{
			name: "workflow timeout cuts parallel steps short",
			wf: withTimeout(build("wtp", tool("a", "svc.hang", nil), tool("b", "svc.hang", nil),
				tool("c", "svc.x", nil, "a", "b")), 30*time.Millisecond),
			tools:  hang,
			status: runtime.RunTimedOut,
			steps:  map[string]runtime.StepStatus{"c": runtime.StepPending},
			check: func(t *testing.T, run *runtime.Run, fb *fakeBackend) {
				if n := fb.SawCancel.Load(); n != 2 {
					t.Errorf("backend saw %d cancelled calls; want 2", n)
				}
				for _, st := range run.Steps[:2] {
					if st.Status != runtime.StepFailed || !strings.Contains(st.Error, "stopped: the workflow timed out after 30ms") {
						t.Errorf("step %s = %s %q; want failed by the workflow timeout", st.ID, st.Status, st.Error)
					}
				}
			},
		},
		{
			name: "workflow timeout during an elicitation",
			wf: withTimeout(build("wte", elicit("ask", "Go on?").With(func(s *ir.Step) {
				s.OnCancel = ir.ActionContinue // a cancelled answer would not fail the run
			})), 30*time.Millisecond),
			elicit: &scriptedElicitor{hang: true},
			status: runtime.RunTimedOut,
			check: func(t *testing.T, run *runtime.Run, _ *fakeBackend) {
				if !strings.Contains(run.Steps[0].Error, "workflow timed out") {
					t.Errorf("step error %q; want the workflow timeout", run.Steps[0].Error)
				}
			},
		},
		{
			name:   "a step ready after the workflow deadline does not run",
			wf:     withTimeout(build("wtl", tool("slow", "svc.slow", nil), tool("next", "svc.x", nil, "slow")), 20*time.Millisecond),
			tools:  map[string]*fakeTool{"svc.slow": {Stubborn: 60 * time.Millisecond}}, // ignores its context
			status: runtime.RunTimedOut,
			check: func(t *testing.T, run *runtime.Run, fb *fakeBackend) {
				if n := len(fb.CallsTo("next")); n != 0 {
					t.Errorf("next was called %d times; want 0", n)
				}
			},
		},
		{
			name:   "step timeout fails the step at its position",
			wf:     build("sto", tool("h", "svc.hang", nil).With(timeout(20*time.Millisecond))),
			tools:  hang,
			status: runtime.RunFailed,
			errHas: []string{`step "h" (wf.yaml:10:5): timed out after 20ms`},
		},
		{
			name:   "abort cancels the running sibling; the run reports the first error",
			wf:     build("abortsib", tool("hang", "svc.hang", nil), tool("bad", "svc.bad", nil)),
			tools:  map[string]*fakeTool{"svc.hang": {Hang: true}, "svc.bad": {IsError: true, Latency: 5 * time.Millisecond}},
			status: runtime.RunFailed,
			errHas: []string{`step "bad"`},
			check: func(t *testing.T, run *runtime.Run, fb *fakeBackend) {
				if n := fb.SawCancel.Load(); n != 1 {
					t.Errorf("sibling saw cancel %d times; want 1", n)
				}
				if s := run.Steps[0]; s.Status != runtime.StepFailed || !strings.Contains(s.Error, "cancelled because another step failed") {
					t.Errorf("hang step = %s %q; want failed, cancelled because another step failed", s.Status, s.Error)
				}
			},
		},
	}
}
