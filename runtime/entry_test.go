package runtime

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
)

// TestStepEntryReadsLikeMap checks that a field chain reads a stepView
// exactly as it reads the map of {output, content, status, error} maps it stands
// for: same values, same errors.
func TestStepEntryReadsLikeMap(t *testing.T) {
	entries := []stepEntry{
		{output: M{"v": int64(7), "s": "x"}, content: M{"text": "seven"}, status: completedValue, err: ""},
		{output: nil, content: noContent, status: failedValue, err: "boom"},
		{content: noContent, status: pendingValue, err: ""},
		{content: noContent, status: runningValue, err: ""},
	}
	ids := []string{"a", "f", "p", "r"}
	view := &stepView{byID: map[string]*stepPlan{}, entries: entries}
	maps := map[string]any{}
	for i, id := range ids {
		view.byID[id] = &stepPlan{index: i, id: id}
		maps[id] = entries[i].asMap()
	}
	maps["p"], maps["r"] = pendingEntry, runningEntry
	views := map[string]any{"entries": view, "maps": maps}
	srcs := []string{
		"{{.steps.a.output.v}}", "{{.steps.a.output}}", "{{.steps.a.status}}", "{{.steps.a.error}}",
		"{{.steps.a.nope}}", "{{.steps.a.output.v.w}}", "{{.steps.a.output.s.w}}", "{{.steps.a.output.missing}}",
		"{{.steps.f.error}}", "{{.steps.f.output.v}}", "{{.steps.p.status}}", "{{.steps.p.output.v}}",
		"{{.steps.r.status}}", "{{.steps.a}}", "{{.steps.zz.output}}", "{{.steps}}", "{{.steps.f}}",
		"{{.steps.a.content.text}}", "{{.steps.a.content}}", "{{.steps.f.content.text}}", "{{.steps.p.content}}",
	}
	funcs := templateFuncs()
	for _, src := range srcs {
		tp, err := parseTemplate(&ir.Template{Source: src, Pos: at(1, 1), Single: true}, funcs)
		if err != nil {
			t.Fatalf("parseTemplate(%q) = %v", src, err)
		}
		got := map[string]string{}
		for name, view := range views {
			v, err := tp.value(map[string]any{"steps": view})
			got[name] = fmt.Sprintf("%#v / %v", v, err)
		}
		if diff := cmp.Diff(got["maps"], got["entries"]); diff != "" {
			t.Errorf("%s on step entries differs from map entries (-maps +entries):\n%s", src, diff)
		}
	}
}

// TestEntryChainWorkflows checks which workflows keep .steps entries as
// structs: only those whose templates are all chains into an entry.
func TestEntryChainWorkflows(t *testing.T) {
	cases := []struct {
		name string
		wf   *ir.Workflow
		want bool
	}{
		{"chains into entries", build("c", tool("a", "svc.x", M{"v": 1}), tool("b", "svc.x", M{"v": "{{.steps.a.output.v}}", "p": "{{.params.x}}"}, "a")), true},
		{"text template", build("t", tool("a", "svc.x", M{"v": 1}), tool("b", "svc.x", M{"v": "n{{.steps.a.output.v}}"}, "a")), false},
		{"whole entry", build("w", tool("a", "svc.x", M{"v": 1}), tool("b", "svc.x", M{"v": "{{.steps.a}}"}, "a")), false},
		{"whole steps", build("s", tool("a", "svc.x", M{"v": "{{.steps}}"})), false},
		{"piped single", build("p", tool("a", "svc.x", M{"v": 1}), tool("b", "svc.x", M{"v": "{{len .steps.a.output}}"}, "a")), false},
		{"forEach inner text", build("f", tool("a", "svc.x", M{"v": 1}), forEach("e", "{{.steps.a.output.v}}", "n", tool("", "svc.x", M{"v": "i{{.forEach.n}}"}), "a")), false},
		{"forEach inner chain", build("g", tool("a", "svc.x", M{"v": 1}), forEach("e", "{{.steps.a.output.v}}", "n", tool("", "svc.x", M{"v": "{{.forEach.n}}"}), "a")), true},
	}
	for _, c := range cases {
		wp, err := prepareWorkflow(c.wf, templateFuncs())
		if err != nil {
			t.Fatalf("prepareWorkflow(%s) = %v", c.name, err)
		}
		if wp.chainsOnly != c.want {
			t.Errorf("prepareWorkflow(%s).chainsOnly = %v; want %v", c.name, wp.chainsOnly, c.want)
		}
	}
}

// recordingBackend keeps the arguments of every call.
type recordingBackend struct {
	mu    sync.Mutex
	calls []map[string]any
}

func (b *recordingBackend) CallTool(_ context.Context, call ToolCall) (*ToolResult, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, call.Arguments)
	return &ToolResult{Structured: map[string]any{"v": int64(len(b.calls))}}, nil
}

// TestChainsOnlyRootData checks that a chains-only run still offers
// .workflow, .vars and .params when a chain reads them.
func TestChainsOnlyRootData(t *testing.T) {
	wf := build("roots",
		tool("a", "svc.x", M{"name": "{{.workflow.name}}", "id": "{{.workflow.id}}", "v": "{{.vars.k}}", "p": "{{.params.x}}"}),
		tool("b", "svc.x", M{"prev": "{{.steps.a.output.v}}", "st": "{{.steps.a.status}}", "err": "{{.steps.a.error}}"}, "a"),
	)
	wf.Vars = []*ir.Var{{Name: "k", Value: val(int64(5))}}
	wf.InputSchema = M{"type": "object", "properties": M{"x": M{"type": "string", "default": "d"}}}
	be := &recordingBackend{}
	e := mustEngine(t, plan(wf), Options{Backend: be})
	if !e.wfs["roots"].chainsOnly {
		t.Fatalf("workflow roots is not chainsOnly; the test needs it to be")
	}
	run, err := e.Run(context.Background(), "roots", nil, RunOptions{RunID: "run-1"})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v; want completed", run, err)
	}
	want := []map[string]any{
		{"name": "roots", "id": "run-1", "v": int64(5), "p": "d"},
		{"prev": int64(1), "st": "completed", "err": ""},
	}
	if diff := cmp.Diff(want, be.calls); diff != "" {
		t.Errorf("backend arguments differ (-want +got):\n%s", diff)
	}
}

// TestForEachDataPerIteration checks that every iteration sees its own
// .forEach, whether the workers reuse one map for it (no template yields
// the map itself) or not (a template does, and keeps it).
func TestForEachDataPerIteration(t *testing.T) {
	items := []any{"a", "b", "c", "d", "e", "f", "g"}
	cases := []struct {
		name   string
		args   M
		shared bool
		want   func(i int) map[string]any
	}{
		{"fields", M{"n": "{{.forEach.n}}", "i": "{{.forEach.index}}"}, true,
			func(i int) map[string]any { return map[string]any{"n": items[i], "i": int64(i)} }},
		{"whole map", M{"fe": "{{.forEach}}"}, false,
			func(i int) map[string]any {
				return map[string]any{"fe": map[string]any{"n": items[i], "index": int64(i)}}
			}},
	}
	for _, c := range cases {
		wf := build("fe", tool("list", "svc.x", M{"v": 1}),
			forEach("each", "{{.params.items}}", "n", tool("", "svc.x", c.args), "list").With(func(s *ir.Step) {
				s.ForEach.MaxParallel = 3
			}))
		be := &recordingBackend{}
		e := mustEngine(t, plan(wf), Options{Backend: be})
		if got := e.wfs["fe"].steps[1].sharedForEach; got != c.shared {
			t.Fatalf("%s: sharedForEach = %v; want %v", c.name, got, c.shared)
		}
		run, err := e.Run(context.Background(), "fe", M{"items": items}, RunOptions{})
		if err != nil || run.Status != RunCompleted {
			t.Fatalf("%s: Run = %v, %v; want completed", c.name, run, err)
		}
		want := []map[string]any{{"v": int64(1)}}
		for i := range items {
			want = append(want, c.want(i))
		}
		got := be.calls
		sort.Slice(got[1:], func(a, b int) bool { return fmt.Sprint(got[1+a]) < fmt.Sprint(got[1+b]) })
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: backend arguments differ (-want +got):\n%s", c.name, diff)
		}
	}
}
