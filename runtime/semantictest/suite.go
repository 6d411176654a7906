package semantictest

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Executor runs workflow of plan with opts (Backend and Schemas set by
// the suite) and params, asking elicitation steps through ro.Elicitor, and
// returns the final run record. A Go error means the run could not start.
type Executor func(t *testing.T, plan *ir.Plan, opts runtime.Options, workflow string, params map[string]any, ro runtime.RunOptions) (*runtime.Run, error)

// Case is one workflow run and what it must give.
type Case struct {
	name    string
	wf      *ir.Workflow
	tools   map[string]*fakeTool
	params  M
	schemas runtime.SchemaSource
	elicit  runtime.Elicitor

	status   runtime.RunStatus
	output   any // compared with cmp when wantOut is true
	wantOut  bool
	steps    map[string]runtime.StepStatus // only the listed steps are checked
	errHas   []string                      // substrings of Run.Error
	errPos   *ir.Pos
	attempts map[string]int
	check    func(t *testing.T, run *runtime.Run, fb *fakeBackend)
}

// Cases returns the suite's cases, in a fixed order.
func Cases() []Case {
	var all []Case
	for _, group := range []func() []Case{semanticsCases, resultCases, forEachCases, coercionCases, elicitationCases, answerCases, retryOnCases, stopCases} {
		all = append(all, group()...)
	}
	return all
}

// Name is the case's subtest name.
func (c Case) Name() string { return c.name }

// Run runs every case as a subtest of t with exec. Cases build their
// plans afresh for each call, so Run may be called more than once.
func Run(t *testing.T, exec Executor) {
	for _, c := range Cases() {
		t.Run(c.name, func(t *testing.T) { c.Run(t, exec) })
	}
}

// Run runs the case with exec and checks the run it gives.
func (c Case) Run(t *testing.T, exec Executor) {
	t.Helper()
	fb := newFake(c.tools)
	run, err := exec(t, &ir.Plan{Version: ir.Version, Workflows: []*ir.Workflow{c.wf}}, runtime.Options{Backend: fb, Schemas: c.schemas}, c.wf.Name, c.params, runtime.RunOptions{Elicitor: c.elicit})
	if err != nil {
		t.Fatalf("Run(%q) error = %v; want a run record", c.wf.Name, err)
	}
	if run.Status != c.status {
		t.Fatalf("Run(%q).Status = %s (error %v); want %s", c.wf.Name, run.Status, run.Error, c.status)
	}
	if c.wantOut {
		if diff := cmp.Diff(c.output, run.Output, sameNumber); diff != "" {
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
	} else if c.status == runtime.RunCompleted && run.Error != nil {
		t.Errorf("Run(%q).Error = %v; want nil", c.wf.Name, run.Error)
	}
	if c.errPos != nil && (run.Error == nil || run.Error.Pos != *c.errPos) {
		t.Errorf("Run(%q).Error position = %v; want %v", c.wf.Name, run.Error, *c.errPos)
	}
	if c.check != nil {
		c.check(t, run, fb)
	}
}

// sameNumber compares numbers by value, whatever their Go types: what a
// client of the composite tool sees is JSON, where int64(3) and float64(3)
// are both 3, and a driver whose values cross a JSON boundary (Temporal's
// payloads) hands back float64s.
var sameNumber = cmp.FilterValues(func(a, b any) bool {
	_, okA := number(a)
	_, okB := number(b)
	return okA && okB
}, cmp.Comparer(func(a, b any) bool {
	x, _ := number(a)
	y, _ := number(b)
	return x == y
}))

// number is v as a float64 when v is a Go number.
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	case float32:
		return float64(n), true
	}
	return 0, false
}

// Local is the local driver as an Executor: runtime.New, then Run.
func Local(t *testing.T, plan *ir.Plan, opts runtime.Options, workflow string, params map[string]any, ro runtime.RunOptions) (*runtime.Run, error) {
	e, err := runtime.New(plan, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e.Run(context.Background(), workflow, params, ro)
}

func stepStatuses(run *runtime.Run) map[string]runtime.StepStatus {
	out := map[string]runtime.StepStatus{}
	for _, s := range run.Steps {
		out[s.ID] = s.Status
	}
	return out
}

// isNumber reports whether v is a Go number equal to want (see sameNumber).
func isNumber(v any, want float64) bool {
	n, ok := number(v)
	return ok && n == want
}
