package runtime

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

// TestForEachInnerCondition: the inner step's condition is evaluated per
// item; a false one skips the iteration without a backend call, its output
// is the inner step's defaultResults, and the loop counts it as skipped.
func TestForEachInnerCondition(t *testing.T) {
	items := A{M{"name": "a", "scan": true}, M{"name": "b", "scan": false}, M{"name": "c", "scan": true}, M{"name": "d", "scan": "FALSE"}}
	lister := &fakeTool{Result: func(map[string]any) any { return M{"items": items} }}
	scan := &fakeTool{Result: func(args map[string]any) any { return M{"scanned": args["name"]} }}
	iter := func(i int64, status string, out any) M {
		return M{"index": i, "item": items[i], "status": status, "output": out, "error": ""}
	}
	inner := func(cond string) step {
		return tool("", "svc.scan", M{"name": "{{.forEach.pkg.name}}"}).With(func(s *ir.Step) {
			s.Condition = tpl(cond)
			s.Condition.Pos = at(25, 22)
			s.MaySkip = true
			s.DefaultResults = M{"scanned": "none"}
		})
	}
	loop := func(name, cond string) *ir.Workflow {
		return build(name,
			tool("list", "svc.list", nil),
			forEach("scan", "{{.steps.list.output.items}}", "pkg", inner(cond), "list"),
		)
	}
	tools := map[string]*fakeTool{"svc.list": lister, "svc.scan": scan}

	runCase{
		name:    "a condition over the item skips some iterations",
		wf:      loop("skips", "{{.forEach.pkg.scan}}"),
		tools:   tools,
		status:  RunCompleted,
		wantOut: true,
		output: M{"count": int64(4), "completed": int64(2), "failed": int64(0), "skipped": int64(2), "iterations": A{
			iter(0, "completed", M{"scanned": "a"}),
			iter(1, "skipped", M{"scanned": "none"}),
			iter(2, "completed", M{"scanned": "c"}),
			iter(3, "skipped", M{"scanned": "none"}),
		}},
		check: func(t *testing.T, run *Run, fb *fakeBackend) {
			var names []string
			for _, c := range fb.CallsTo("scan") {
				names = append(names, c.Arguments["name"].(string))
			}
			if len(names) != 2 || strings.Contains(strings.Join(names, ","), "b") || strings.Contains(strings.Join(names, ","), "d") {
				t.Errorf("backend calls for scan were for %v; want only a and c (b and d are skipped)", names)
			}
		},
	}.run(t)

	runCase{
		name:   "a condition on the index",
		wf:     loop("byindex", "{{lt .forEach.index 1}}"),
		tools:  tools,
		status: RunCompleted,
		check: func(t *testing.T, run *Run, fb *fakeBackend) {
			out := run.Output.(M)
			if out["completed"] != int64(1) || out["skipped"] != int64(3) {
				t.Errorf("counts = completed %v skipped %v; want 1 and 3", out["completed"], out["skipped"])
			}
		},
	}.run(t)

	runCase{
		name:   "a condition that is not a boolean fails the iteration and the step",
		wf:     loop("notbool", "{{.forEach.pkg.name}}"),
		tools:  tools,
		status: RunFailed,
		errHas: []string{`step "scan" (wf.yaml:25:22): iteration `, `: condition must yield a boolean or the string true or false`},
	}.run(t)

	runCase{
		name:   "a condition that reads a missing field fails at its position",
		wf:     loop("missing", "{{.forEach.pkg.nope}}"),
		tools:  tools,
		status: RunFailed,
		errHas: []string{`step "scan"`, `: condition: .forEach.pkg has no field "nope"`}, // whichever iteration fails first
	}.run(t)

	cont := loop("cont", "{{.forEach.pkg.name}}")
	cont.Steps[1].OnError = ir.OnError{Action: ir.ActionContinue}
	runCase{
		name:   "with onError continue, bad conditions are failed iterations",
		wf:     cont,
		tools:  tools,
		status: RunCompleted,
		check: func(t *testing.T, run *Run, fb *fakeBackend) {
			out := run.Output.(M)
			if out["failed"] != int64(4) || out["skipped"] != int64(0) || len(fb.CallsTo("scan")) != 0 {
				t.Errorf("counts = failed %v skipped %v, %d calls; want 4, 0 and no calls", out["failed"], out["skipped"], len(fb.CallsTo("scan")))
			}
		},
	}.run(t)
}

// TestForEachSkippedCountsUnstarted: iterations that never started because
// another failed are skipped too, so count = completed + failed + skipped.
func TestForEachSkippedCountsUnstarted(t *testing.T) {
	items := make(A, 5)
	for i := range items {
		items[i] = int64(i)
	}
	wf := build("stop",
		tool("list", "svc.list", nil),
		forEach("scan", "{{.steps.list.output.items}}", "n", tool("", "svc.bad", nil), "list").With(func(s *ir.Step) { s.ForEach.MaxParallel = 1 }),
	)
	runCase{
		wf:     wf,
		tools:  map[string]*fakeTool{"svc.list": {Result: func(map[string]any) any { return M{"items": items} }}, "svc.bad": {IsError: true}},
		status: RunFailed,
		check: func(t *testing.T, run *Run, fb *fakeBackend) {
			out, _ := run.Steps[1].Output.(M)
			if out["count"] != int64(5) || out["failed"] != int64(1) || out["skipped"] != int64(4) || out["completed"] != int64(0) {
				t.Errorf("forEach output counts = %v; want count 5, failed 1, skipped 4", out)
			}
			// The checker knows the fields from ir.ForEachOutputFields.
			var keys []string
			for k := range out {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			want := append([]string(nil), ir.ForEachOutputFields...)
			sort.Strings(want)
			if strings.Join(keys, ",") != strings.Join(want, ",") {
				t.Errorf("forEach output fields = %v; want ir.ForEachOutputFields %v", keys, want)
			}
		},
	}.run(t)
}

// TestLoopInnerStepTimeout: a loop's inner step that has a timeout of its
// own gets it in every iteration while the loop's deadline is further
// away (each hanging call ends after 40ms, and the iteration fails with
// the step's timeout), and the loop's deadline when that comes first
// (the workflow's 60ms timeout ends the run; no iteration reports a 10s
// timeout). iterate decides which once, at the start of the loop.
func TestLoopInnerStepTimeout(t *testing.T) {
	for _, c := range []struct {
		name          string
		inner, wfTime time.Duration
		status        RunStatus
		errHas        string
	}{
		{"the step's own timeout comes first", 40 * time.Millisecond, 30 * time.Minute, RunFailed, "timed out after 40ms"},
		{"the workflow's deadline comes first", 10 * time.Second, 60 * time.Millisecond, RunTimedOut, "workflow timed out after 60ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wf := build("loop",
				forEach("each", "{{.params.items}}", "n", tool("", "svc.hang", M{"v": "{{.forEach.n}}"}).With(timeout(c.inner))),
			)
			wf.Timeout = ir.Duration(c.wfTime)
			wf.InputSchema = M{"type": "object", "properties": M{"items": M{"type": "array"}}}
			fb := newFake(map[string]*fakeTool{"svc.hang": {Hang: true}})
			e := mustEngine(t, plan(wf), Options{Backend: fb})
			began := time.Now()
			run, err := e.Run(context.Background(), "loop", map[string]any{"items": A{int64(1), int64(2)}}, RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if run.Status != c.status || run.Error == nil || !strings.Contains(run.Error.Error(), c.errHas) {
				t.Fatalf("run = %s, %v; want %s with %q", run.Status, run.Error, c.status, c.errHas)
			}
			if took := time.Since(began); took > 5*time.Second {
				t.Errorf("the run took %s: no deadline ended the hanging calls", took)
			}
		})
	}
}
