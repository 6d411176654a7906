package runtime

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
)

// runCase is one workflow run against the fake backend with its expected
// result.
type runCase struct {
	name    string
	wf      *ir.Workflow
	tools   map[string]*fakeTool
	params  M
	schemas SchemaSource
	elicit  Elicitor

	status   RunStatus
	output   any // compared with cmp when wantOut is true
	wantOut  bool
	steps    map[string]StepStatus // only the listed steps are checked
	errHas   []string              // substrings of Run.Error
	errPos   *ir.Pos
	attempts map[string]int
	check    func(t *testing.T, run *Run, fb *fakeBackend)
}

func (c runCase) run(t *testing.T) {
	t.Helper()
	fb := newFake(c.tools)
	e := mustEngine(t, plan(c.wf), Options{Backend: fb, Schemas: c.schemas})
	run, err := e.Run(context.Background(), c.wf.Name, c.params, RunOptions{Elicitor: c.elicit})
	if err != nil {
		t.Fatalf("Run(%q) error = %v; want a run record", c.wf.Name, err)
	}
	if run.Status != c.status {
		t.Fatalf("Run(%q).Status = %s (error %v); want %s", c.wf.Name, run.Status, run.Error, c.status)
	}
	if c.wantOut {
		if diff := cmp.Diff(c.output, run.Output); diff != "" {
			t.Errorf("Run(%q).Output mismatch (-want +got):\n%s", c.wf.Name, diff)
		}
	}
	got := stepStatuses(run)
	for id, want := range c.steps {
		if got[id] != want {
			t.Errorf("step %q status = %s; want %s", id, got[id], want)
		}
	}
	for id, want := range c.attempts {
		for _, s := range run.Steps {
			if s.ID == id && s.Attempts != want {
				t.Errorf("step %q attempts = %d; want %d", id, s.Attempts, want)
			}
		}
	}
	if len(c.errHas) > 0 {
		if run.Error == nil {
			t.Fatalf("Run(%q).Error = nil; want an error containing %q", c.wf.Name, c.errHas)
		}
		msg := run.Error.Error()
		for _, s := range c.errHas {
			if !strings.Contains(msg, s) {
				t.Errorf("Run(%q).Error = %q; want it to contain %q", c.wf.Name, msg, s)
			}
		}
		if strings.Contains(msg, "<no value>") {
			t.Errorf("Run(%q).Error = %q; must never mention <no value>", c.wf.Name, msg)
		}
	} else if c.status == RunCompleted && run.Error != nil {
		t.Errorf("Run(%q).Error = %v; want nil", c.wf.Name, run.Error)
	}
	if c.errPos != nil && (run.Error == nil || run.Error.Pos != *c.errPos) {
		t.Errorf("Run(%q).Error position = %v; want %v", c.wf.Name, run.Error, *c.errPos)
	}
	if c.check != nil {
		c.check(t, run, fb)
	}
	checkReplay(t, e, run)
}

func structured(v any) func(M) any { return func(M) any { return v } }

func TestForEachParallelCap(t *testing.T) {
	items := make(A, 20)
	for i := range items {
		items[i] = int64(i)
	}
	wf := build("cap",
		tool("list", "svc.list", nil),
		forEach("each", "{{.steps.list.output.items}}", "n", tool("", "svc.slow", M{"n": "{{.forEach.n}}"}), "list").With(func(s *ir.Step) { s.ForEach.MaxParallel = 3 }),
	)
	fb := newFake(map[string]*fakeTool{"svc.list": {Result: structured(M{"items": items})}, "svc.slow": {Latency: 5 * time.Millisecond}})
	e := mustEngine(t, plan(wf), Options{Backend: fb})
	run, err := e.Run(context.Background(), "cap", nil, RunOptions{})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v; want completed", run, err)
	}
	if got := fb.MaxFlight.Load(); got != 3 {
		t.Errorf("most concurrent iterations = %d; want exactly maxParallel 3", got)
	}
}

// calledOnce checks that the backend saw exactly one call for step id.
func calledOnce(id string) func(*testing.T, *Run, *fakeBackend) {
	return func(t *testing.T, _ *Run, fb *fakeBackend) {
		t.Helper()
		if n := len(fb.CallsTo(id)); n != 1 {
			t.Errorf("step %q called its tool %d times; want 1 (maxRetries has no effect without action retry)", id, n)
		}
	}
}
