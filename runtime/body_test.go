package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// bodyEngine compiles src and runs it over fb.
func bodyEngine(t *testing.T, src string, fb *fakeBackend) *Engine {
	t.Helper()
	return mustEngine(t, compileYAML(t, src), Options{Backend: fb})
}

// iterations returns a forEach step's iterations from a run.
func iterations(t *testing.T, run *Run, id string) []map[string]any {
	t.Helper()
	for _, st := range run.Steps {
		if st.ID != id {
			continue
		}
		out, _ := st.Output.(map[string]any)
		list, _ := out["iterations"].([]any)
		var its []map[string]any
		for _, x := range list {
			its = append(its, x.(map[string]any))
		}
		return its
	}
	t.Fatalf("run has no step %q", id)
	return nil
}

const multiStepBody = `
compositeTools:
  - name: sync
    description: fetch then write, per namespace
    steps:
      - id: namespaces
        tool: k8s.namespaces
      - id: per_ns
        type: forEach
        dependsOn: [namespaces]
        collection: "{{.steps.namespaces.output.items}}"
        itemVar: ns
        maxParallel: 2
        steps:
          - id: pods
            tool: k8s.pods
            arguments: {namespace: "{{.forEach.ns}}"}
          - id: write_pods
            tool: graph.merge
            dependsOn: [pods]
            condition: "{{gt (len .steps.pods.output.items) 0}}"
            defaultResults: {merged: 0}
            arguments:
              namespace: "{{.forEach.ns}}"
              at: "{{.forEach.index}}"
              items: "{{.steps.pods.output.items}}"
              total: "{{len .steps.namespaces.output.items}}"
`

func multiStepFake() *fakeBackend {
	return newFake(map[string]*fakeTool{
		"k8s.namespaces": {Result: func(map[string]any) any { return map[string]any{"items": []any{"a", "empty", "b"}} }},
		"k8s.pods": {Result: func(args map[string]any) any {
			if args["namespace"] == "empty" {
				return map[string]any{"items": []any{}}
			}
			return map[string]any{"items": []any{args["namespace"].(string) + "-1", args["namespace"].(string) + "-2"}}
		}},
		"graph.merge": {Result: func(args map[string]any) any {
			return map[string]any{"merged": float64(len(args["items"].([]any))), "namespace": args["namespace"], "at": args["at"], "total": args["total"]}
		}},
	})
}

// TestBodyMultiStep runs a two-step body per item: each iteration's
// second step reads this iteration's first step, the item, the index and
// a top-level step; a per-item condition skips the write for an empty
// namespace, whose output is then the defaultResults. The iteration's
// output is the single sink's, and its record carries both body steps.
func TestBodyMultiStep(t *testing.T) {
	fb := multiStepFake()
	e := bodyEngine(t, multiStepBody, fb)
	run, err := e.Run(context.Background(), "sync", nil, RunOptions{})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v (%v); want completed", run.Status, err, run.Error)
	}
	its := iterations(t, run, "per_ns")
	var outs []any
	for _, it := range its {
		outs = append(outs, it["output"])
	}
	want := []any{
		map[string]any{"merged": float64(2), "namespace": "a", "at": int64(0), "total": int64(3)},
		map[string]any{"merged": int64(0)},
		map[string]any{"merged": float64(2), "namespace": "b", "at": int64(2), "total": int64(3)},
	}
	if diff := cmp.Diff(want, outs); diff != "" {
		t.Errorf("iteration outputs (-want +got):\n%s", diff)
	}
	rec := its[1]["steps"].(map[string]any)
	if got := rec["write_pods"].(map[string]any)["status"]; got != "skipped" {
		t.Errorf("write_pods in the empty namespace = %v; want skipped", got)
	}
	if got := rec["pods"].(map[string]any)["status"]; got != "completed" {
		t.Errorf("pods in the empty namespace = %v; want completed", got)
	}
	if n := len(fb.CallsTo("write_pods")); n != 2 {
		t.Errorf("write_pods called %d times; want 2 (one namespace is empty)", n)
	}
	out := run.Steps[1].Output.(map[string]any)
	if out["completed"] != int64(3) || out["count"] != int64(3) {
		t.Errorf("loop counts = %v; want 3 completed of 3", out)
	}
}

const nested3 = `
compositeTools:
  - name: nested
    description: three loops deep
    steps:
      - id: outer
        type: forEach
        collection: [a, b]
        itemVar: x
        steps:
          - id: middle
            type: forEach
            collection: [c, d, e]
            itemVar: y
            steps:
              - id: prep
                tool: svc.prep
                arguments: {x: "{{.forEach.x}}", y: "{{.forEach.y}}"}
              - id: inner
                type: forEach
                dependsOn: [prep]
                collection: "{{.steps.prep.output.zs}}"
                itemVar: z
                step:
                  tool: svc.leaf
                  arguments: {path: "{{.forEach.x}}/{{.forEach.y}}/{{.forEach.z}}#{{.forEach.index}}"}
`

// TestBodyNestedThreeDeep runs loops three deep: the innermost call sees
// the item of every enclosing loop and its own index, and a body step's
// collection reads this iteration's run of a body step.
func TestBodyNestedThreeDeep(t *testing.T) {
	fb := newFake(map[string]*fakeTool{
		"svc.prep": {Result: func(args map[string]any) any {
			return map[string]any{"zs": []any{args["y"].(string) + "1", args["y"].(string) + "2"}}
		}},
	})
	e := bodyEngine(t, nested3, fb)
	run, err := e.Run(context.Background(), "nested", nil, RunOptions{})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v (%v); want completed", run.Status, err, run.Error)
	}
	var paths []string
	for _, c := range fb.CallsTo("inner") {
		paths = append(paths, c.Arguments["path"].(string))
	}
	sort.Strings(paths)
	var want []string
	for _, x := range []string{"a", "b"} {
		for _, y := range []string{"c", "d", "e"} {
			for i, z := range []string{y + "1", y + "2"} {
				want = append(want, fmt.Sprintf("%s/%s/%s#%d", x, y, z, i))
			}
		}
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("innermost calls (-want +got):\n%s", diff)
	}
	// The outer iteration's output is the middle loop's (its single sink).
	its := iterations(t, run, "outer")
	mid := its[1]["output"].(map[string]any)["iterations"].([]any)
	in := mid[2].(map[string]any)["output"].(map[string]any)
	if in["count"] != int64(2) || in["completed"] != int64(2) {
		t.Errorf("outer[1].middle[2] = %v; want 2 completed", in)
	}
}

const continueBody = `
compositeTools:
  - name: soft
    description: failed iterations are recorded and the rest go on
    steps:
      - id: loop
        type: forEach
        collection: [1, 2, 3, 4]
        maxParallel: 1
        onError: {action: continue}
        steps:
          - id: get
            tool: svc.get
            arguments: {n: "{{.forEach.item}}"}
          - id: put
            tool: svc.put
            dependsOn: [get]
            arguments: {v: "{{.steps.get.output.v}}"}
          - id: tolerant
            tool: svc.flaky
            onError: {action: continue}
            defaultResults: {ok: false}
            arguments: {n: "{{.forEach.item}}"}
  - name: hard
    description: the first failed iteration stops the loop
    steps:
      - id: loop
        type: forEach
        collection: [1, 2, 3, 4]
        maxParallel: 1
        steps:
          - id: get
            tool: svc.get
            arguments: {n: "{{.forEach.item}}"}
          - id: put
            tool: svc.put
            dependsOn: [get]
            arguments: {v: "{{.steps.get.output.v}}"}
`

func continueFake() *fakeBackend {
	return newFake(map[string]*fakeTool{
		"svc.get": {Result: func(args map[string]any) any {
			return map[string]any{"v": args["n"]}
		}},
		"svc.put": {Result: func(args map[string]any) any {
			if fmt.Sprint(args["v"]) == "2" {
				return nil
			}
			return map[string]any{"stored": args["v"]}
		}},
		"svc.flaky": {Fail: true},
	})
}

// TestBodyOnErrorContinue: with onError continue on the loop, an
// iteration whose body step fails is recorded as failed, with the step's
// error, and the others complete; a body step with its own continue
// fails alone and the iteration goes on. Without continue, the first
// failed iteration fails the loop, naming the iteration and the step.
func TestBodyOnErrorContinue(t *testing.T) {
	fb := continueFake()
	fb.Tools["svc.put"] = &fakeTool{Result: func(args map[string]any) any { return map[string]any{"stored": args["v"]} }}
	fb.Tools["svc.bad"] = &fakeTool{Fail: true}
	src := strings.Replace(continueBody, "tool: svc.put\n            dependsOn: [get]\n            arguments: {v: \"{{.steps.get.output.v}}\"}\n          - id: tolerant", "tool: svc.put\n            dependsOn: [get]\n            condition: \"{{ne .forEach.index 1}}\"\n            arguments: {v: \"{{.steps.get.output.v}}\"}\n          - id: boom\n            tool: svc.bad\n            condition: \"{{eq .forEach.index 1}}\"\n          - id: tolerant", 1)
	e := bodyEngine(t, src, fb)
	run, err := e.Run(context.Background(), "soft", nil, RunOptions{})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v (%v); want completed", run.Status, err, run.Error)
	}
	its := iterations(t, run, "loop")
	var statuses []any
	for _, it := range its {
		statuses = append(statuses, it["status"])
	}
	if diff := cmp.Diff([]any{"completed", "failed", "completed", "completed"}, statuses); diff != "" {
		t.Errorf("iteration statuses (-want +got):\n%s", diff)
	}
	if msg := its[1]["error"].(string); !strings.Contains(msg, `iteration 1 (2): step "boom"`) || !strings.Contains(msg, "backend unavailable") {
		t.Errorf("failed iteration's error = %q; want it to name iteration 1, step boom and the cause", msg)
	}
	tol := its[0]["steps"].(map[string]any)["tolerant"].(map[string]any)
	if tol["status"] != "failed" || tol["output"].(map[string]any)["ok"] != false {
		t.Errorf("tolerant = %v; want failed with its defaultResults", tol)
	}
	out := run.Steps[0].Output.(map[string]any)
	if out["completed"] != int64(3) || out["failed"] != int64(1) {
		t.Errorf("loop counts = %v; want 3 completed, 1 failed", out)
	}

	fb = continueFake()
	fb.Tools["svc.put"] = &fakeTool{Fail: true}
	e = bodyEngine(t, continueBody, fb)
	run, err = e.Run(context.Background(), "hard", nil, RunOptions{})
	if err != nil || run.Status != RunFailed {
		t.Fatalf("Run = %v, %v; want failed", run.Status, err)
	}
	if msg := run.Error.Error(); !strings.Contains(msg, `iteration 0 (1): step "put"`) {
		t.Errorf("run error = %q; want it to name iteration 0 and step put", msg)
	}
	if n := len(fb.CallsTo("get")); n != 1 {
		t.Errorf("get called %d times; want 1 (the first failure stops the rest)", n)
	}
}

const shapedBody = `
compositeTools:
  - name: shaped
    description: a loop output shapes each iteration
    steps:
      - id: loop
        type: forEach
        collection: [{name: a, n: 1}, {name: b, n: 2}]
        itemVar: row
        steps:
          - id: left
            tool: svc.left
            arguments: {n: "{{.forEach.row.n}}"}
          - id: right
            tool: svc.right
            arguments: {n: "{{.forEach.row.n}}"}
        output:
          properties:
            name: {type: string, value: "{{.forEach.row.name}}"}
            sum: {type: integer, value: "{{.steps.left.output.args.n}}{{.steps.right.output.args.n}}"}
            index: {type: integer, value: "{{.forEach.index}}"}
  - name: sinks
    description: without output, an object keyed by sink id
    steps:
      - id: loop
        type: forEach
        collection: [1]
        steps:
          - {id: left, tool: svc.left, arguments: {n: "{{.forEach.item}}"}}
          - {id: right, tool: svc.right, arguments: {n: "{{.forEach.item}}"}}
`

// TestBodyLoopOutput: output: shapes each iteration's output from the
// item and the body's steps; without it, a body with two sinks gives an
// object keyed by sink id.
func TestBodyLoopOutput(t *testing.T) {
	e := bodyEngine(t, shapedBody, newFake(nil))
	run, err := e.Run(context.Background(), "shaped", nil, RunOptions{})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v (%v); want completed", run.Status, err, run.Error)
	}
	var outs []any
	for _, it := range iterations(t, run, "loop") {
		outs = append(outs, it["output"])
	}
	want := []any{
		map[string]any{"name": "a", "sum": int64(11), "index": int64(0)},
		map[string]any{"name": "b", "sum": int64(22), "index": int64(1)},
	}
	if diff := cmp.Diff(want, outs); diff != "" {
		t.Errorf("shaped outputs (-want +got):\n%s", diff)
	}
	run, err = e.Run(context.Background(), "sinks", nil, RunOptions{})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run(sinks) = %v, %v (%v)", run.Status, err, run.Error)
	}
	got, _ := json.Marshal(iterations(t, run, "loop")[0]["output"])
	if string(got) != `{"left":{"args":{"n":1}},"right":{"args":{"n":1}}}` {
		t.Errorf("two-sink iteration output = %s", got)
	}
}

const cancelNested = `
compositeTools:
  - name: hang
    description: every innermost call hangs
    steps:
      - id: outer
        type: forEach
        collection: [1, 2]
        itemVar: a
        steps:
          - id: middle
            type: forEach
            collection: [1, 2]
            itemVar: b
            steps:
              - id: inner
                type: forEach
                collection: [1, 2]
                itemVar: c
                step: {tool: svc.hang}
              - id: side
                tool: svc.hang
`

// TestBodyCancelReachesEveryIteration stops a run while every iteration
// of three nested loops is in a backend call (by the cancel API, the
// caller's context, another step's abort, the workflow timeout): each of
// those calls sees its context end, and the run ends with the status of
// the cause.
func TestBodyCancelReachesEveryIteration(t *testing.T) {
	abort := strings.Replace(cancelNested, "    steps:\n      - id: outer", "    steps:\n      - id: breaks\n        tool: svc.fail_late\n      - id: outer", 1)
	timedOut := strings.Replace(cancelNested, "    description: every innermost call hangs\n", "    description: every innermost call hangs\n    timeout: 400ms\n", 1)
	for _, tc := range []struct {
		how  string
		src  string
		want RunStatus
	}{
		{"cancel", cancelNested, RunCancelled},
		{"context", cancelNested, RunCancelled},
		{"abort", abort, RunFailed},
		{"timeout", timedOut, RunTimedOut},
	} {
		how := tc.how
		t.Run(how, func(t *testing.T) {
			fb := newFake(map[string]*fakeTool{"svc.hang": {Hang: true}, "svc.fail_late": {Latency: 300 * time.Millisecond, Fail: true}})
			const calls = 2*2*2 + 2*2 // inner iterations, and side per middle iteration
			fb.Started = make(chan string, calls+1)
			e := bodyEngine(t, tc.src, fb)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan *Run)
			go func() {
				run, _ := e.Run(ctx, "hang", nil, RunOptions{RunID: "nested-" + how})
				done <- run
			}()
			for n := 0; n < calls; {
				if <-fb.Started == "svc.hang" {
					n++
				}
			}
			switch how {
			case "cancel":
				if err := e.Cancel(context.Background(), "nested-"+how); err != nil {
					t.Fatal(err)
				}
			case "context":
				cancel()
			}
			run := <-done
			if run.Status != tc.want {
				t.Errorf("status = %s; want %s", run.Status, tc.want)
			}
			if got := fb.SawCancel.Load(); got != calls {
				t.Errorf("backend calls that saw their context cancelled = %d; want %d", got, calls)
			}
		})
	}
}

// TestBodyIterationLimitNested: New refuses a plan whose nested loop
// allows more iterations than the server-wide limit, naming the loop.
func TestBodyIterationLimitNested(t *testing.T) {
	src := strings.Replace(nested3, "            itemVar: y\n", "            itemVar: y\n            maxIterations: 500\n", 1)
	_, err := New(compileYAML(t, src), Options{Backend: newFake(nil), MaxIterations: 200})
	if err == nil || !strings.Contains(err.Error(), `step "middle"`) || !strings.Contains(err.Error(), "maxIterations 500 is over the server-wide limit of 200") {
		t.Errorf("New = %v; want the nested loop's maxIterations refused", err)
	}
}

const finallyBody = `
compositeTools:
  - name: fin
    description: a finally loop with a body runs after a failure
    steps:
      - id: work
        tool: svc.fail
        defaultResults: {n: 0}
    finally:
      - id: cleanup
        type: forEach
        collection: [a, b]
        steps:
          - id: undo
            tool: svc.undo
            arguments: {what: "{{.forEach.item}}", status: "{{.workflow.status}}", n: "{{.steps.work.output.n}}"}
          - id: note
            tool: svc.note
            dependsOn: [undo]
            arguments: {v: "{{.steps.undo.output.args.what}}"}
`

// TestBodyInFinally: a finally loop's body runs once per item after the
// run failed, reading .workflow.status and a failed step's defaults.
func TestBodyInFinally(t *testing.T) {
	fb := newFake(map[string]*fakeTool{"svc.fail": {Fail: true}})
	e := bodyEngine(t, finallyBody, fb)
	run, err := e.Run(context.Background(), "fin", nil, RunOptions{})
	if err != nil || run.Status != RunFailed {
		t.Fatalf("Run = %v, %v; want failed", run.Status, err)
	}
	var got []string
	for _, c := range fb.CallsTo("undo") {
		got = append(got, fmt.Sprint(c.Arguments["what"], " ", c.Arguments["status"], " ", c.Arguments["n"]))
	}
	sort.Strings(got)
	if diff := cmp.Diff([]string{"a failed 0", "b failed 0"}, got); diff != "" {
		t.Errorf("undo calls (-want +got):\n%s", diff)
	}
	if n := len(fb.CallsTo("note")); n != 2 {
		t.Errorf("note ran %d times; want 2", n)
	}
}
