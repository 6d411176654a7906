package runtime

import (
	"sort"
	"strings"
	"testing"

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
