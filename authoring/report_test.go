package authoring

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/authoring/guide"
	"github.com/vmcp-dev/vmcp/runtime"
)

func TestSample(t *testing.T) {
	long := strings.Repeat("é", SampleChars+5)
	many := make([]any, 10)
	for i := range many {
		many[i] = map[string]any{"id": float64(i)}
	}
	wide := map[string]any{}
	for i := range SampleKeys + 2 {
		wide[fmt.Sprintf("k%02d", i)] = true
	}
	deep := any("bottom")
	for range SampleDepth + 1 {
		deep = []any{deep}
	}
	tests := []struct {
		name string
		in   any
		want any
		cut  bool
	}{
		{"scalars stay", map[string]any{"n": 1.5, "b": true, "z": nil, "s": "short"}, map[string]any{"n": 1.5, "b": true, "z": nil, "s": "short"}, false},
		{"a long array keeps its first items", map[string]any{"items": many},
			map[string]any{"items": []any{map[string]any{"id": 0.0}, map[string]any{"id": 1.0}, map[string]any{"id": 2.0}, "… 7 more items (10 in all)"}}, true},
		{"a short array stays", []any{1.0, 2.0, 3.0}, []any{1.0, 2.0, 3.0}, false},
		{"a long string is cut at a character", long, strings.Repeat("é", SampleChars) + fmt.Sprintf("… (%d chars in all)", SampleChars+5), true},
		{"a wide object keeps its first keys", wide, func() any {
			m := map[string]any{"…": "2 more keys (32 in all)"}
			for i := range SampleKeys {
				m[fmt.Sprintf("k%02d", i)] = true
			}
			return m
		}(), true},
		{"deep nesting is named", deep, []any{[]any{[]any{[]any{[]any{[]any{[]any{[]any{"[array of 1 items]"}}}}}}}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := Sample(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" || cut != tt.cut {
				t.Errorf("Sample: cut = %v, want %v; diff (-want +got):\n%s", cut, tt.cut, diff)
			}
		})
	}
}

// TestSampleValueBudget: a wide object of arrays of objects (1021
// values) is sampled to SampleValues values; each container that comes
// after the budget is named by its size.
func TestSampleValueBudget(t *testing.T) {
	in := map[string]any{}
	for k := range SampleKeys {
		var arr []any
		for range 3 {
			obj := map[string]any{}
			for f := range 10 {
				obj[fmt.Sprintf("f%d", f)] = float64(f)
			}
			arr = append(arr, obj)
		}
		in[fmt.Sprintf("k%02d", k)] = arr
	}
	got, cut := Sample(in)
	m := got.(map[string]any)
	// After the budget each remaining array (one per key left) is one
	// string.
	if n := countValues(got); !cut || n > SampleValues+SampleKeys {
		t.Errorf("Sample kept %d values (cut %v); want at most %d and a note per array left", n, cut, SampleValues+SampleKeys)
	}
	if first, _ := m["k00"].([]any); len(first) != 3 {
		t.Errorf("Sample: k00 = %v; want its 3 objects whole", m["k00"])
	}
	if last := m[fmt.Sprintf("k%02d", SampleKeys-1)]; last != "[array of 3 items]" {
		t.Errorf("Sample: the last key = %v; want \"[array of 3 items]\"", last)
	}
}

// countValues counts v and every value inside it.
func countValues(v any) int {
	n := 1
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			n += countValues(e)
		}
	case map[string]any:
		for _, e := range x {
			n += countValues(e)
		}
	}
	return n
}

// TestReport: a failed run's report names the failed step with its error,
// counts the loop's iterations (with the first failed one), gives every
// output's whole size, and samples the outputs unless full.
func TestReport(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	items := make([]any, 50)
	for i := range items {
		items[i] = map[string]any{"name": fmt.Sprintf("pod-%d", i)}
	}
	loop := map[string]any{"count": int64(2), "completed": int64(1), "failed": int64(1), "skipped": int64(0), "iterations": []any{
		map[string]any{"index": int64(0), "item": "a", "status": "completed", "output": "ok", "error": ""},
		map[string]any{"index": int64(1), "item": "b", "status": "failed", "output": nil, "error": "tool said no"},
	}}
	run := &runtime.Run{ID: "r1", Workflow: "w", WorkflowVersion: "draft-abc", Draft: true, Status: runtime.RunFailed,
		StartedAt: t0, EndedAt: t0.Add(40 * time.Millisecond),
		Error: &runtime.StepError{Msg: `step "write" failed: backend down`},
		Steps: []runtime.StepState{
			{ID: "list", Status: runtime.StepCompleted, Attempts: 1, StartedAt: t0, EndedAt: t0.Add(10 * time.Millisecond), Output: map[string]any{"items": items}},
			{ID: "each", Status: runtime.StepCompleted, Attempts: 1, StartedAt: t0.Add(10 * time.Millisecond), EndedAt: t0.Add(20 * time.Millisecond), Output: loop},
			{ID: "write", Status: runtime.StepFailed, Attempts: 3, StartedAt: t0.Add(20 * time.Millisecond), EndedAt: t0.Add(40 * time.Millisecond), Error: "backend down"},
			{ID: "after", Status: runtime.StepSkipped},
		}}
	whole, _ := runtime.MarshalJSON(map[string]any{"items": items})

	r := Report(run, false)
	if !r.Sampled || r.Status != "failed" || !strings.Contains(r.Error, `step "write" failed`) || !r.Draft || r.Version != "draft-abc" {
		t.Errorf("Report: sampled %v, status %q, error %q, draft %v, version %q; want sampled, failed, the step's error, a draft", r.Sampled, r.Status, r.Error, r.Draft, r.Version)
	}
	list := r.Steps[0]
	if list.OutputBytes != len(whole) || len(list.Output.(map[string]any)["items"].([]any)) != SampleItems+1 {
		t.Errorf("list: %d bytes, output %v; want %d bytes and a sample of %d items and a note", list.OutputBytes, list.Output, len(whole), SampleItems)
	}
	each := r.Steps[1]
	if each.Loop == nil || *each.Loop != (runtime.LoopCounts{Count: 2, Completed: 1, Failed: 1}) {
		t.Errorf("each: loop = %+v; want count 2, completed 1, failed 1", each.Loop)
	}
	if diff := cmp.Diff([]IterationError{{Index: 1, Error: "tool said no"}}, each.FailedIterations); diff != "" {
		t.Errorf("each: failed iterations (-want +got):\n%s", diff)
	}
	write := r.Steps[2]
	if write.Status != "failed" || write.Error != "backend down" || write.Attempts != 3 || write.DurationMs != 20 || write.OutputBytes != 0 {
		t.Errorf("write = %+v; want failed, its error, 3 attempts, 20ms, no output", write)
	}
	if r.Steps[3].Status != "skipped" || r.Steps[3].DurationMs != 0 {
		t.Errorf("after = %+v; want skipped, never started", r.Steps[3])
	}
	sum := r.Summary()
	for _, want := range []string{"draft run r1 of w failed", "4 steps (2 completed, 1 failed, 1 skipped)", "step write failed: backend down", "loop each: 2 items, 1 failed", "full: true"} {
		if !strings.Contains(sum, want) {
			t.Errorf("Summary() = %q; want it to contain %q", sum, want)
		}
	}

	done := &runtime.Run{ID: "r2", Workflow: "w", Status: runtime.RunCompleted, StartedAt: t0, EndedAt: t0, Output: map[string]any{"n": 1.0},
		Steps: []runtime.StepState{{ID: "a", Status: runtime.StepCompleted, Output: map[string]any{"n": 2.0}}, {ID: "b", Status: runtime.StepCompleted, Output: map[string]any{"n": 1.0}}}}
	if d := Report(done, false); d.Steps[0].IsResult || d.Steps[0].Output == nil || !d.Steps[1].IsResult || d.Steps[1].Output != nil || d.Steps[1].OutputBytes != 7 {
		t.Errorf("Report(a run whose result is b's output).Steps = %+v; want b marked isResult, its output shown once", d.Steps)
	}

	f := Report(run, true)
	if f.Sampled || len(f.Steps[0].Output.(map[string]any)["items"].([]any)) != 50 {
		t.Errorf("Report(full): sampled %v, %d items; want whole outputs", f.Sampled, len(f.Steps[0].Output.(map[string]any)["items"].([]any)))
	}
}

// TestLoopSummaryAfterJSON: the counts read back from a loop output that
// crossed JSON (Temporal, a store), and not from a tool output that merely
// has a count.
func TestLoopSummaryAfterJSON(t *testing.T) {
	var out any
	if err := json.Unmarshal([]byte(`{"iterations":[],"count":0,"completed":0,"failed":0,"skipped":0}`), &out); err != nil {
		t.Fatal(err)
	}
	if lc, ok := runtime.LoopSummary(out); !ok || lc != (runtime.LoopCounts{}) {
		t.Errorf("LoopSummary(an empty loop from JSON) = %+v, %v; want zero counts, true", lc, ok)
	}
	if _, ok := runtime.LoopSummary(map[string]any{"count": 3.0, "items": []any{}}); ok {
		t.Error("LoopSummary(a tool output with a count) = true; want false")
	}
}

// TestResultContentByRevision: a client on 2025-06-18 or later gets the
// summary alone as text; an older or unknown revision also the JSON.
func TestResultContentByRevision(t *testing.T) {
	v := map[string]any{"ok": true}
	for _, tt := range []struct {
		version string
		texts   []string
	}{
		{"", []string{"sum", `{"ok":true}`}},
		{mcp.ProtocolVersion20250326, []string{"sum", `{"ok":true}`}},
		{mcp.ProtocolVersion20250618, []string{"sum"}},
		{mcp.ProtocolVersion20251125, []string{"sum"}},
		{mcp.ProtocolVersion20260728, []string{"sum"}},
	} {
		ctx := context.Background()
		if tt.version != "" {
			ctx = withProtocolVersion(ctx, tt.version)
		}
		content, err := resultContent(ctx, "sum", v)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, c := range content {
			texts = append(texts, c.(mcp.TextContent).Text)
		}
		if diff := cmp.Diff(tt.texts, texts); diff != "" {
			t.Errorf("resultContent on %q: (-want +got):\n%s", tt.version, diff)
		}
	}
}

// TestSampleRulesAreDocumented: the run tool's description and the guide
// state the sample rules with the numbers the code uses.
func TestSampleRulesAreDocumented(t *testing.T) {
	for _, want := range []string{fmt.Sprintf("first %d items", SampleItems), fmt.Sprintf("first %d characters", SampleChars),
		fmt.Sprintf("first %d keys", SampleKeys), fmt.Sprintf("%d levels", SampleDepth), fmt.Sprintf("%d values in all", SampleValues), "full"} {
		if !strings.Contains(runDescription, want) {
			t.Errorf("vmcp_workflow_run's description lacks %q:\n%s", want, runDescription)
		}
		if !strings.Contains(guide.Markdown(), want) {
			t.Errorf("the guide lacks %q", want)
		}
	}
}

// withProtocolVersion is ctx as a request of that protocol revision.
func withProtocolVersion(ctx context.Context, version string) context.Context {
	return mcpgo.WithRequestProtocolInfo(ctx, &mcpgo.RequestProtocolInfo{ProtocolVersion: version, Modern: mcp.IsModernProtocol(version)})
}
