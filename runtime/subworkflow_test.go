package runtime

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/ir"
)

// compileYAML compiles one workflow source the way vmcpc does.
func compileYAML(t *testing.T, src string) *ir.Plan {
	t.Helper()
	p, diags := compiler.Compile([]compiler.Source{{Name: "wf.yaml", Src: []byte(src)}}, compiler.Options{})
	if diags.HasErrors() {
		t.Fatalf("compile: %v", diags)
	}
	return p
}

// children lists the child runs of parent in the engine's store.
func children(t *testing.T, e *Engine, parent string) []*Run {
	t.Helper()
	runs, err := e.Store().ListRuns(context.Background(), RunFilter{Parent: parent})
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

const childWorkflows = `
compositeTools:
  - name: lookup
    description: shapes its result with output
    parameters:
      ticket: {type: string, required: true}
      limit: {type: integer, default: 5}
    output:
      properties:
        title: {type: string, value: "{{.steps.get.output.args.id}}"}
        limit: {type: integer, value: "{{.steps.get.output.args.limit}}"}
    steps:
      - id: get
        tool: tickets.get
        arguments: {id: "{{.params.ticket}}", limit: "{{.params.limit}}"}
  - name: two_sinks
    description: no output block, so its result is keyed by sink id
    parameters:
      x: {type: string}
    steps:
      - id: a
        tool: svc.a
        arguments: {v: "{{.params.x}}"}
      - id: b
        tool: svc.b
  - name: parent
    description: runs both children
    parameters:
      id: {type: string}
    steps:
      - id: find
        type: workflow
        workflow: lookup
        arguments: {ticket: "{{.params.id}}", limit: "7"}
      - id: both
        type: workflow
        workflow: two_sinks
        dependsOn: [find]
        arguments: {x: "{{.steps.find.output.title}}"}
      - id: use
        tool: svc.use
        dependsOn: [both]
        arguments:
          title: "{{.steps.find.output.title}}"
          limit: "{{.steps.find.output.limit}}"
          a: "{{.steps.both.output.a.args.v}}"
`

func TestWorkflowStepOutputIsTheChildsResult(t *testing.T) {
	fb := newFake(nil)
	e := mustEngine(t, compileYAML(t, childWorkflows), Options{Backend: fb})
	run, err := e.Run(context.Background(), "parent", M{"id": "T-1"}, RunOptions{})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %+v, %v; want completed", run, err)
	}
	// The child's output shaping, with "7" coerced to the callee's integer
	// parameter, is the step's output.
	if diff := cmp.Diff(M{"title": "T-1", "limit": int64(7)}, run.Steps[0].Output); diff != "" {
		t.Errorf("find output (-want +got):\n%s", diff)
	}
	// Without output, the child's result is keyed by its sinks.
	both, _ := run.Steps[1].Output.(map[string]any)
	if _, ok := both["a"]; !ok || len(both) != 2 {
		t.Errorf("both output = %v; want the sinks a and b", run.Steps[1].Output)
	}
	if diff := cmp.Diff(M{"title": "T-1", "limit": int64(7), "a": "T-1"}, fb.CallsTo("use")[0].Arguments); diff != "" {
		t.Errorf("use arguments (-want +got):\n%s", diff)
	}
	kids := children(t, e, run.ID)
	if len(kids) != 2 {
		t.Fatalf("children of %s = %d runs; want 2", run.ID, len(kids))
	}
	byWorkflow := map[string]*Run{}
	for _, k := range kids {
		byWorkflow[k.Workflow] = k
		if k.ParentID != run.ID || k.ID == run.ID || k.Status != RunCompleted {
			t.Errorf("child %s: parent %q, status %s; want parent %s, completed", k.ID, k.ParentID, k.Status, run.ID)
		}
	}
	if byWorkflow["lookup"] == nil || byWorkflow["lookup"].ParentStep != "find" || byWorkflow["two_sinks"].ParentStep != "both" {
		t.Errorf("children = %+v; want lookup under step find and two_sinks under both", byWorkflow)
	}
	if run.ParentID != "" {
		t.Errorf("top-level run has parent %q", run.ParentID)
	}
	// The child's backend calls carry the child's run id.
	if got := fb.CallsTo("get")[0].RunID; got != byWorkflow["lookup"].ID {
		t.Errorf("child call run id = %s; want the child's %s", got, byWorkflow["lookup"].ID)
	}
}

const failingChild = `
compositeTools:
  - name: flaky
    description: its only step fails
    steps:
      - id: boom
        tool: svc.boom
  - name: tolerant
    description: continues past a failed child
    steps:
      - id: sub
        type: workflow
        workflow: flaky
        onError: {action: continue}
        defaultResults: {status: unknown}
      - id: after
        tool: svc.after
        dependsOn: [sub]
        arguments: {s: "{{.steps.sub.output.status}}"}
  - name: strict
    description: aborts on a failed child
    steps:
      - id: sub
        type: workflow
        workflow: flaky
`

func TestWorkflowStepFailure(t *testing.T) {
	fb := newFake(map[string]*fakeTool{"svc.boom": {IsError: true}})
	e := mustEngine(t, compileYAML(t, failingChild), Options{Backend: fb})

	run, err := e.Run(context.Background(), "tolerant", nil, RunOptions{})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run(tolerant) = %+v, %v; want completed", run, err)
	}
	sub := run.Steps[0]
	kids := children(t, e, run.ID)
	if len(kids) != 1 || kids[0].Status != RunFailed {
		t.Fatalf("children = %+v; want one failed run", kids)
	}
	if sub.Status != StepFailed || !strings.Contains(sub.Error, "workflow flaky (run "+kids[0].ID+") failed") ||
		!strings.Contains(sub.Error, "quota exceeded") {
		t.Errorf("sub = %s %q; want failed naming the child run and its error", sub.Status, sub.Error)
	}
	if got := fb.CallsTo("after")[0].Arguments["s"]; got != "unknown" {
		t.Errorf("after read %v; want the defaultResults value unknown", got)
	}

	run, err = e.Run(context.Background(), "strict", nil, RunOptions{})
	if err != nil || run.Status != RunFailed || run.Error == nil || run.Error.Step != "sub" {
		t.Fatalf("Run(strict) = %+v, %v; want failed at step sub", run, err)
	}
}

const hangingChild = `
compositeTools:
  - name: slow
    description: its step hangs until cancelled
    timeout: 30s
    steps:
      - id: wait
        tool: svc.hang
  - name: outer
    description: waits for the slow child
    steps:
      - id: sub
        type: workflow
        workflow: slow
  - name: impatient
    description: the step's own timeout bounds the child
    steps:
      - id: sub
        type: workflow
        workflow: slow
        timeout: 50ms
  - name: short_child
    description: a child with its own short timeout
    timeout: 50ms
    steps:
      - id: wait
        tool: svc.hang
  - name: outer_short
    description: runs the child whose own timeout ends it
    steps:
      - id: sub
        type: workflow
        workflow: short_child
`

// startHangingChild runs hangingChild's outer workflow as runID and
// returns once the child's backend call has started; done gets the
// parent's run when it ends.
func startHangingChild(t *testing.T, runID string) (*Engine, *fakeBackend, chan *Run) {
	t.Helper()
	fb := newFake(map[string]*fakeTool{"svc.hang": {Hang: true}})
	fb.Started = make(chan string, 1)
	e := mustEngine(t, compileYAML(t, hangingChild), Options{Backend: fb})
	done := make(chan *Run, 1)
	go func() {
		run, _ := e.Run(context.Background(), "outer", nil, RunOptions{RunID: runID})
		done <- run
	}()
	select {
	case <-fb.Started:
	case <-time.After(10 * time.Second):
		t.Fatal("the child's backend call never started")
	}
	return e, fb, done
}

func TestWorkflowStepCancelReachesTheChildsBackendCall(t *testing.T) {
	e, fb, done := startHangingChild(t, "parent-run")
	if err := e.Cancel(context.Background(), "parent-run"); err != nil {
		t.Fatal(err)
	}
	var run *Run
	select {
	case run = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the parent did not end after Cancel")
	}
	if run.Status != RunCancelled {
		t.Errorf("parent status = %s; want cancelled", run.Status)
	}
	if fb.SawCancel.Load() != 1 {
		t.Errorf("the child's backend call saw %d cancellations; want 1", fb.SawCancel.Load())
	}
	kids := children(t, e, "parent-run")
	if len(kids) != 1 || kids[0].Status != RunCancelled {
		var st []RunStatus
		for _, k := range kids {
			st = append(st, k.Status)
		}
		t.Errorf("children's statuses = %v; want one cancelled run", st)
	}
}

func TestWorkflowStepTimeouts(t *testing.T) {
	fb := newFake(map[string]*fakeTool{"svc.hang": {Hang: true}})
	e := mustEngine(t, compileYAML(t, hangingChild), Options{Backend: fb})
	cases := []struct{ workflow, want string }{
		{"impatient", "timed out after 50ms"},                                     // the step's timeout
		{"outer_short", "workflow short_child (run "},                             // the child's own
		{"outer_short", "timed_out: wf.yaml:22:5: workflow timed out after 50ms"}, // ... which it names
	}
	for _, c := range cases {
		run, err := e.Run(context.Background(), c.workflow, nil, RunOptions{})
		if err != nil || run.Status != RunFailed || !strings.Contains(run.Steps[0].Error, c.want) {
			t.Errorf("Run(%s) = %v, step error %q (%v); want failed with %q", c.workflow, run.Status, run.Steps[0].Error, err, c.want)
		}
	}
}

const childInForEach = `
compositeTools:
  - name: per_item
    description: one call per item
    parameters:
      n: {type: integer, required: true}
    output:
      properties:
        doubled: {type: integer, value: "{{.steps.calc.output.v}}"}
    steps:
      - id: calc
        tool: svc.double
        arguments: {n: "{{.params.n}}"}
  - name: fan
    description: a forEach whose inner step is a workflow step
    parameters:
      items: {type: array}
    steps:
      - id: each
        type: forEach
        collection: "{{.params.items}}"
        maxParallel: 4
        step:
          type: workflow
          workflow: per_item
          arguments: {n: "{{.forEach.item}}"}
`

func TestWorkflowStepInsideForEach(t *testing.T) {
	fb := newFake(map[string]*fakeTool{"svc.double": {Latency: 5 * time.Millisecond, Result: func(a map[string]any) any {
		n, _ := a["n"].(float64)
		return M{"v": n * 2}
	}}})
	// One backend slot for everything: four children in flight, each
	// waiting on it, while the parent's forEach waits on them.
	e := mustEngine(t, compileYAML(t, childInForEach), Options{Backend: LimitCalls(fb, CallLimits{Total: 1})})
	run, err := e.Run(context.Background(), "fan", M{"items": A{float64(1), float64(2), float64(3), float64(4)}}, RunOptions{})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %+v, %v; want completed", run, err)
	}
	out := run.Steps[0].Output.(map[string]any)
	var got []any
	for _, it := range out["iterations"].([]any) {
		got = append(got, it.(map[string]any)["output"])
	}
	want := []any{M{"doubled": int64(2)}, M{"doubled": int64(4)}, M{"doubled": int64(6)}, M{"doubled": int64(8)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("iteration outputs (-want +got):\n%s", diff)
	}
	kids := children(t, e, run.ID)
	if len(kids) != 4 {
		t.Fatalf("children = %d; want 4", len(kids))
	}
	for _, k := range kids {
		if k.ParentStep != "each" || k.Workflow != "per_item" {
			t.Errorf("child %+v; want per_item under step each", k)
		}
	}
	if m := fb.MaxFlight.Load(); m != 1 {
		t.Errorf("at most %d backend calls at once; want 1 (the shared slot)", m)
	}
}

func TestNewRefusesBrokenWorkflowSteps(t *testing.T) {
	call := func(id, callee string) step {
		s := &ir.Step{ID: id, Type: ir.StepWorkflow, Pos: at(5, 5), Workflow: &ir.WorkflowRef{Name: callee, Pos: at(6, 15)}}
		return step{Step: s}
	}
	cases := []struct {
		name string
		p    *ir.Plan
		want string
	}{
		{"unknown", plan(build("a", call("s", "nope"))), `step "s" (wf.yaml:6:15) runs workflow "nope", which the plan does not define`},
		{"self", plan(build("a", call("s", "a"))), `workflow recursion: a -> a (step "s", wf.yaml:6:15)`},
		{"indirect", plan(build("a", call("s", "b")), build("b", forEach("t", "{{.params.x}}", "item", call("", "a")))),
			`workflow recursion: a -> b -> a (step "t", wf.yaml:6:15)`},
	}
	for _, c := range cases {
		_, err := New(c.p, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%s) = %v; want an error containing %q", c.name, err, c.want)
		}
	}
}

// TestWorkflowStepsRace runs parents with children concurrently, for
// go test -race.
func TestWorkflowStepsRace(t *testing.T) {
	fb := newFake(nil)
	e := mustEngine(t, compileYAML(t, childWorkflows), Options{Backend: fb})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if run, err := e.Run(context.Background(), "parent", M{"id": "x"}, RunOptions{}); err != nil || run.Status != RunCompleted {
				t.Errorf("Run = %v, %v", run, err)
			}
		}()
	}
	wg.Wait()
}

// TestCancellingTheChildFailsTheStep: cancelling a child run by its own id
// stops only the child; the parent's step fails with the child's status,
// and the parent (onError abort by default) fails at that step.
func TestCancellingTheChildFailsTheStep(t *testing.T) {
	e, _, done := startHangingChild(t, "parent-of-cancelled")
	kids := children(t, e, "parent-of-cancelled")
	if len(kids) != 1 {
		t.Fatalf("children = %d; want 1", len(kids))
	}
	if err := e.Cancel(context.Background(), kids[0].ID); err != nil {
		t.Fatal(err)
	}
	var run *Run
	select {
	case run = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the parent did not end after its child was cancelled")
	}
	want := "workflow slow (run " + kids[0].ID + ") cancelled"
	if run.Status != RunFailed || run.Error == nil || run.Error.Step != "sub" || !strings.Contains(run.Error.Msg, want) {
		t.Errorf("parent = %s, error %v; want failed at step sub with %q", run.Status, run.Error, want)
	}
}

// TestWorkflowStepRetryStartsAFreshChild: onError retry runs the callee
// again as a new child run; the failed attempt's run stays in the store.
func TestWorkflowStepRetryStartsAFreshChild(t *testing.T) {
	src := `
compositeTools:
  - name: flaky
    description: fails on its first call
    steps:
      - {id: once, tool: svc.flaky}
  - name: patient
    description: retries its child
    steps:
      - id: sub
        type: workflow
        workflow: flaky
        onError: {action: retry, maxRetries: 2, retryDelay: 1ms}
`
	fb := newFake(map[string]*fakeTool{"svc.flaky": {FailFirst: 1}})
	e := mustEngine(t, compileYAML(t, src), Options{Backend: fb})
	run, err := e.Run(context.Background(), "patient", nil, RunOptions{})
	if err != nil || run.Status != RunCompleted || run.Steps[0].Attempts != 2 {
		t.Fatalf("Run = %v, attempts %d, %v; want completed after 2 attempts", run.Status, run.Steps[0].Attempts, err)
	}
	kids := children(t, e, run.ID)
	if len(kids) != 2 || kids[0].Status != RunCompleted || kids[1].Status != RunFailed {
		t.Errorf("children (newest first) = %+v; want a completed retry after a failed first run", kids)
	}
}

// TestWorkflowStepRetryOn: a child run that fails counts as a toolError
// for retryOn, so retryOn: [error] does not run it again.
func TestWorkflowStepRetryOn(t *testing.T) {
	src := `
compositeTools:
  - name: flaky
    description: fails on its first call
    steps:
      - {id: once, tool: svc.flaky}
  - name: strict
    description: retries only transport failures
    steps:
      - id: sub
        type: workflow
        workflow: flaky
        onError: {action: retry, maxRetries: 2, retryDelay: 1ms, retryOn: [error]}
`
	fb := newFake(map[string]*fakeTool{"svc.flaky": {FailFirst: 1}})
	e := mustEngine(t, compileYAML(t, src), Options{Backend: fb})
	run, err := e.Run(context.Background(), "strict", nil, RunOptions{})
	if err != nil || run.Status != RunFailed || run.Steps[0].Attempts != 1 || !strings.Contains(run.Error.Msg, "the failure kind is toolError") {
		t.Fatalf("Run = %v, attempts %d, error %v, %v; want failed after 1 attempt, not retried as a toolError", run.Status, run.Steps[0].Attempts, run.Error, err)
	}
}
