package runtime

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
)

func TestTemplateStepReads(t *testing.T) {
	cases := []struct {
		src  string
		want []string
		ok   bool
	}{
		{"{{.steps.list.output.items}}", []string{"list"}, true},
		{"{{.params.items}}", nil, true},
		{"{{.vars.names}} and {{.workflow.id}}", nil, true},
		{`{{json .steps.a.output}} {{.steps.b.output.x}}`, []string{"a", "b"}, true},
		{"{{$.steps.a.output.items}}", []string{"a"}, true},
		{"{{with .steps.a.output}}{{.items}}{{else}}{{.steps.b.output}}{{end}}", []string{"a", "b"}, true},
		{"{{range .steps.a.output.items}}{{.}}{{end}}", []string{"a"}, true},
		{"{{if .steps.a.output.ok}}{{(.steps.b.output).items}}{{end}}", []string{"a", "b"}, true},
		{`{{index .steps "a"}}`, nil, false},
		{"{{$s := .steps}}{{$s.a.output}}", nil, false},
	}
	for _, c := range cases {
		tp, err := parseTemplate(tpl(c.src), templateFuncs())
		if err != nil {
			t.Fatalf("parseTemplate(%q): %v", c.src, err)
		}
		got, ok := templateStepReads(tp)
		if ok != c.ok || (ok && !slices.Equal(got, c.want)) {
			t.Errorf("templateStepReads(%q) = %q, %v; want %q, %v", c.src, got, ok, c.want, c.ok)
		}
	}
}

func TestLoopWeight(t *testing.T) {
	cases := []struct {
		maxParallel, items int
		want               int32
	}{
		{10, 243, 25},
		{10, 240, 24},
		{10, 0, 1}, // an empty loop still takes its slot once
		{1, 7, 7},
	}
	for _, c := range cases {
		if got := loopWeight(&ir.ForEach{MaxParallel: c.maxParallel}, c.items); got != c.want {
			t.Errorf("loopWeight(maxParallel %d, %d items) = %d; want %d", c.maxParallel, c.items, got, c.want)
		}
	}
	// A body's longest chain (here 3 steps) runs once per wave.
	body := &ir.ForEach{MaxParallel: 10, CriticalPath: []int{0, 1, 2}}
	if got := loopWeight(body, 243); got != 75 {
		t.Errorf("loopWeight(a 3-step body chain, maxParallel 10, 243 items) = %d; want 75 (25 waves of 3)", got)
	}
}

// The rise of a loop's weight reaches its pending ancestors and nothing
// else; the workflow's static priorities stay as they were.
func TestWeighLoopRaisesOnlyPendingAncestors(t *testing.T) {
	wf := build("rise",
		tool("d", "svc.x", nil),
		tool("e", "svc.x", nil, "d"),
		tool("a", "svc.x", nil),
		tool("b", "svc.x", nil, "a"),
		tool("b2", "svc.x", nil, "a"),
		tool("c", "svc.x", nil),
		forEach("loop", "{{.params.items}}", "n", tool("", "svc.x", nil), "b", "c"),
	)
	wp, err := prepareWorkflow(wf, templateFuncs())
	if err != nil {
		t.Fatal(err)
	}
	static := []int32{2, 1, 3, 2, 1, 2, 1} // d e a b b2 c loop
	if diff := cmp.Diff(static, wp.prio); diff != "" {
		t.Fatalf("static priorities (-want +got):\n%s", diff)
	}
	r := &Machine{wp: wp, run: &Run{Steps: slices.Clone(wp.pendingSteps)}}
	r.data = map[string]any{"params": map[string]any{"items": make([]any, 95)}}
	r.startPriorities(nil)
	r.run.Steps[5].Status = StepRunning // c has started
	r.ready.push(0)                     // d
	r.ready.push(3)                     // b, as if it were ready
	if top := r.ready.items[0]; top != 0 {
		t.Fatalf("queue top before = %d; want 0 (d, lower index at the same priority)", top)
	}
	r.weighKnownLoops()
	// The loop weighs ceil(95/10) = 10; b and a rise above it; c has
	// started, and d, e and b2 are not ancestors.
	want := []int32{2, 1, 12, 11, 1, 2, 10}
	if diff := cmp.Diff(want, r.loops.prio); diff != "" {
		t.Errorf("priorities after weighing (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(static, wp.prio); diff != "" {
		t.Errorf("static priorities changed (-want +got):\n%s", diff)
	}
	if top := r.ready.pop(); top != 3 {
		t.Errorf("queue top after = %d; want 3 (b)", top)
	}
}

// A collection that is not an array yet leaves the loop's weight; the
// loop reports the error when it starts, as before.
func TestWeighLoopKeepsTheWeightOfABadCollection(t *testing.T) {
	wf := build("bad",
		tool("a", "svc.x", nil),
		forEach("loop", "{{.params.items}}", "n", tool("", "svc.x", nil), "a"),
	)
	wp, err := prepareWorkflow(wf, templateFuncs())
	if err != nil {
		t.Fatal(err)
	}
	for _, items := range []any{"not json", map[string]any{"x": 1}, int64(3)} {
		r := &Machine{wp: wp, run: &Run{Steps: slices.Clone(wp.pendingSteps)}}
		r.data = map[string]any{"params": map[string]any{"items": items}}
		r.startPriorities(nil)
		r.weighKnownLoops()
		if diff := cmp.Diff(wp.prio, r.loops.prio); diff != "" {
			t.Errorf("items %v: priorities changed (-want +got):\n%s", items, diff)
		}
	}
}

// A weighed collection that reads only finished steps, .params and .vars
// is kept for the loop's start, once; one that may read .workflow, which
// changes as the run goes, is not; and a machine another driver feeds
// keeps nothing.
func TestWeighedCollectionIsKeptForTheLoop(t *testing.T) {
	wf := build("kept",
		forEach("params", "{{.params.items}}", "n", tool("", "svc.x", nil)),
		forEach("clock", `{{if .workflow.id}}{{json .params.items}}{{end}}`, "n", tool("", "svc.x", nil)),
	)
	wp, err := prepareWorkflow(wf, templateFuncs())
	if err != nil {
		t.Fatal(err)
	}
	r := &Machine{wp: wp, run: &Run{Steps: slices.Clone(wp.pendingSteps)}}
	r.data = map[string]any{
		"params":   map[string]any{"items": []any{"a", "b"}},
		"workflow": map[string]any{"id": "w"},
	}
	r.startPriorities(&loopState{}) // the local driver's
	r.weighKnownLoops()
	r.data["params"] = map[string]any{"items": []any{"changed"}} // what a second evaluation would see
	items, ok := r.takeWeighed(wp.steps[0])
	if diff := cmp.Diff([]any{"a", "b"}, items); !ok || diff != "" {
		t.Errorf("takeWeighed(params) = %v, %v; want the weighed items (-want +got):\n%s", items, ok, diff)
	}
	if items, ok := r.takeWeighed(wp.steps[0]); ok {
		t.Errorf("takeWeighed(params) again = %v; want nothing (taken once)", items)
	}
	if items, ok := r.takeWeighed(wp.steps[1]); ok {
		t.Errorf("takeWeighed(clock) = %v; want nothing: its collection reads .workflow", items)
	}

	other := &Machine{wp: wp, run: &Run{Steps: slices.Clone(wp.pendingSteps)}, data: r.data}
	other.startPriorities(nil) // NewMachine's: no local driver
	other.weighKnownLoops()
	if items, ok := other.takeWeighed(wp.steps[0]); ok {
		t.Errorf("another driver's machine kept %v; want nothing kept", items)
	}
}

// What a loop reports for a collection that is not an array, for each way
// it can fail to be one.
func TestNotACollection(t *testing.T) {
	for cv, want := range map[any]string{
		"not json": "collection must be an array; it is a string that is not valid JSON",
		`{"a": 1}`: "collection must be an array; it is a string holding an object",
		int64(3):   "collection must be an array; it is a number",
		`["a", 1]`: "",
	} {
		_, ok := collectionItems(cv)
		if want == "" {
			if !ok {
				t.Errorf("collectionItems(%v) refused it; want an array", cv)
			}
			continue
		}
		if ok {
			t.Errorf("collectionItems(%v) accepted it; want it refused", cv)
		} else if got := notACollection(cv); got != want {
			t.Errorf("notACollection(%v) = %q; want %q", cv, got, want)
		}
	}
}
