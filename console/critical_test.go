package console

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// investigateSource has two branches into correlate: the logs branch is
// two steps long, so the plan's critical path goes through it, while in
// the recorded runs below the traces fetch is the slow one.
const investigateSource = `compositeTools:
  - name: investigate
    description: Fetch logs and traces, then correlate them
    steps:
      - {id: fetch_logs, tool: tb.echo, arguments: {text: logs}}
      - {id: parse_logs, tool: tb.echo, dependsOn: [fetch_logs], arguments: {text: parsed}}
      - {id: fetch_traces, tool: tb.echo, arguments: {text: traces}}
      - {id: correlate, tool: tb.echo, dependsOn: [parse_logs, fetch_traces], arguments: {text: done}}
`

// t0 is the start of the recorded runs.
var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

// ms is t0 plus n milliseconds.
func ms(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

// recorded is a step record that ran from start to end ms (end < 0: still
// running; start < 0: never started).
func recorded(id string, status runtime.StepStatus, start, end int) runtime.StepState {
	s := runtime.StepState{ID: id, Status: status}
	if start >= 0 {
		s.StartedAt = ms(start)
	}
	if end >= 0 {
		s.EndedAt = ms(end)
	}
	return s
}

func investigatePlan(t *testing.T) *ir.Plan {
	t.Helper()
	plan, diags := compiler.Compile([]compiler.Source{{Name: "wf.yaml", Src: []byte(investigateSource)}}, compiler.Options{})
	if diags.HasErrors() {
		t.Fatalf("compile: %v", diags)
	}
	return plan
}

// stepIDs names the plan's steps at indices.
func stepIDs(wf *ir.Workflow, indices []int) []string {
	out := []string{}
	for _, i := range indices {
		out = append(out, wf.Steps[i].ID)
	}
	return out
}

// TestRunCriticalPathFromRecordedTimes: the run's critical path follows
// the recorded times, not the plan's longest chain.
func TestRunCriticalPathFromRecordedTimes(t *testing.T) {
	wf := investigatePlan(t).Workflows[0]
	if got := stepIDs(wf, wf.CriticalPath); !slices.Contains(got, "parse_logs") {
		t.Fatalf("plan critical path = %v; the test needs it through the logs branch", got)
	}
	done := runtime.StepCompleted
	for _, c := range []struct {
		name string
		recs []runtime.StepState
		now  int
		want []string
	}{
		{"the slow traces fetch", []runtime.StepState{recorded("fetch_logs", done, 0, 100), recorded("parse_logs", done, 100, 200),
			recorded("fetch_traces", done, 0, 500), recorded("correlate", done, 500, 600)}, 600,
			[]string{"fetch_traces", "correlate"}},
		{"the slow logs branch", []runtime.StepState{recorded("fetch_logs", done, 0, 300), recorded("parse_logs", done, 300, 500),
			recorded("fetch_traces", done, 0, 100), recorded("correlate", done, 500, 600)}, 600,
			[]string{"fetch_logs", "parse_logs", "correlate"}},
		{"a skipped dependency is passed over", []runtime.StepState{recorded("fetch_logs", done, 0, 400), recorded("parse_logs", runtime.StepSkipped, -1, 400),
			recorded("fetch_traces", done, 0, 100), recorded("correlate", done, 400, 450)}, 450,
			[]string{"fetch_traces", "correlate"}},
		{"in progress: the longest-running step so far", []runtime.StepState{recorded("fetch_logs", done, 0, 100), recorded("parse_logs", runtime.StepRunning, 100, -1),
			recorded("fetch_traces", runtime.StepRunning, 0, -1), recorded("correlate", runtime.StepPending, -1, -1)}, 300,
			[]string{"fetch_traces"}},
		{"nothing started", []runtime.StepState{recorded("fetch_logs", runtime.StepPending, -1, -1)}, 0, []string{}},
	} {
		recs := make([]httpapi.StepDetail, len(c.recs))
		for i, r := range c.recs {
			recs[i] = httpapi.StepDetail{StepState: r}
		}
		if got := stepIDs(wf, runCriticalPath(wf.Steps, recs, ms(c.now))); !cmp.Equal(got, c.want) {
			t.Errorf("%s: runCriticalPath = %v; want %v", c.name, got, c.want)
		}
	}
}

// starred is the ids of the steps a run page marks with the star.
var starred = regexp.MustCompile(`<span class="id">([^<]+)</span> <span class="crit"`)

// TestRunPageStarsTheRunsCriticalPath serves a recorded run whose slow
// branch is not the plan's critical path: the run page stars the run's
// own (fetch_traces, correlate), the workflow page still shows the plan's.
func TestRunPageStarsTheRunsCriticalPath(t *testing.T) {
	plan := investigatePlan(t)
	store := runtime.NewMemoryStore(0)
	eng, err := runtime.New(plan, runtime.Options{Backend: &fakeBackend{}, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Engine: eng, Store: store, Tokens: nil, Sources: map[string][]byte{"wf.yaml": []byte(investigateSource)},
		Now: func() time.Time { return ms(600) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	f := &fixture{c: c, engine: eng, store: store}
	done := runtime.StepCompleted
	run := &runtime.Run{ID: "slow-traces", Workflow: "investigate", Status: runtime.RunCompleted, StartedAt: t0, EndedAt: ms(600),
		Steps: []runtime.StepState{recorded("fetch_logs", done, 0, 100), recorded("parse_logs", done, 100, 200),
			recorded("fetch_traces", done, 0, 500), recorded("correlate", done, 500, 600)}}
	ctx := context.Background()
	if err := store.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := store.FinishRun(ctx, run); err != nil {
		t.Fatal(err)
	}

	page := body(t, f.get(t, "/ui/runs/slow-traces"))
	var got []string
	for _, m := range starred.FindAllStringSubmatch(page, -1) {
		got = append(got, m[1])
	}
	if want := []string{"fetch_traces", "correlate"}; !cmp.Equal(got, want) {
		t.Errorf("run page stars %v; want the run's critical path %v", got, want)
	}
	if !strings.Contains(page, "on this run's critical path") {
		t.Errorf("run page legend does not say the star is the run's critical path")
	}
	wfPage := body(t, f.get(t, "/ui/workflows/investigate"))
	if want := "fetch_logs → parse_logs → correlate"; !strings.Contains(wfPage, want) {
		t.Errorf("workflow page does not show the plan's critical path %q", want)
	}
}
