package metrics

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/vmcp-dev/vmcp/internal/irbuild"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// value returns the value of the metric name with exactly these labels: a
// counter's or gauge's value, or a histogram's sample count. ok is false
// when there is no such series.
func value(t *testing.T, m *Metrics, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, mt := range f.GetMetric() {
			if !sameLabels(mt.GetLabel(), labels) {
				continue
			}
			switch {
			case mt.Counter != nil:
				return mt.Counter.GetValue(), true
			case mt.Gauge != nil:
				return mt.Gauge.GetValue(), true
			case mt.Histogram != nil:
				return float64(mt.Histogram.GetSampleCount()), true
			}
		}
	}
	return 0, false
}

func sameLabels(got []*dto.LabelPair, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, l := range got {
		if want[l.GetName()] != l.GetValue() {
			return false
		}
	}
	return true
}

// fake is a backend whose tools behave by name.
type fake struct {
	flaky atomic.Int32
}

func (f *fake) CallTool(ctx context.Context, call runtime.ToolCall) (*runtime.ToolResult, error) {
	switch call.Tool {
	case "ok":
		time.Sleep(2 * time.Millisecond)
		return &runtime.ToolResult{Structured: map[string]any{"ok": true}}, nil
	case "flaky": // fails once, then works
		if f.flaky.Add(1) == 1 {
			return nil, errors.New("connection reset")
		}
		return &runtime.ToolResult{Structured: map[string]any{"ok": true}}, nil
	case "refuses":
		return &runtime.ToolResult{IsError: true, Content: []runtime.Content{{Type: "text", Text: "no"}}}, nil
	case "hang":
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return nil, errors.New("unknown tool")
}

func toolStep(i int, id, tool string, deps ...int) *ir.Step {
	return &ir.Step{Index: i, ID: id, Type: ir.StepTool, Deps: deps, Timeout: ir.Duration(time.Minute),
		Tool: &ir.ToolRef{Backend: "be", Name: tool}}
}

func workflow(name string, steps ...*ir.Step) *ir.Workflow {
	return &ir.Workflow{Name: name, Description: "test", Timeout: ir.Duration(time.Minute), FailureMode: ir.FailureAbort,
		MaxParallel: 10, InputSchema: map[string]any{"type": "object"}, Steps: steps}
}

// TestEngineFeedsMetrics runs real workflows through the engine with the
// metrics attached the way vmcp attaches them, and reads every family back.
func TestEngineFeedsMetrics(t *testing.T) {
	m := New()
	retry := toolStep(1, "flaky", "flaky", 0)
	retry.OnError = ir.OnError{Action: ir.ActionRetry, MaxRetries: 2, RetryDelay: ir.Duration(time.Millisecond)}
	soft := toolStep(2, "refuses", "refuses", 0)
	soft.OnError = ir.OnError{Action: ir.ActionContinue}
	plan := irbuild.Plan(
		workflow("good", toolStep(0, "first", "ok"), retry, soft),
		workflow("stuck", toolStep(0, "wait", "hang")),
	)
	eng, err := runtime.New(plan, runtime.Options{Backend: m.WrapBackend(&fake{})})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run, err := eng.Run(ctx, "good", nil, runtime.RunOptions{OnEvent: m.Observe})
	if err != nil || run.Status != runtime.RunCompleted {
		t.Fatalf("Run(good) = %v, %v; want completed", run, err)
	}
	// A run cancelled while its step hangs: the step never reports, so the
	// run_finished event must clear its in-flight count.
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	run, err = eng.Run(cctx, "stuck", nil, runtime.RunOptions{OnEvent: m.Observe})
	if err != nil || run.Status != runtime.RunCancelled {
		t.Fatalf("Run(stuck) = %+v, %v; want cancelled", run, err)
	}

	tests := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"vmcp_runs_total", map[string]string{"workflow": "good", "status": "completed"}, 1},
		{"vmcp_runs_total", map[string]string{"workflow": "stuck", "status": "cancelled"}, 1},
		{"vmcp_run_duration_seconds", map[string]string{"workflow": "good", "status": "completed"}, 1},
		{"vmcp_runs_in_flight", map[string]string{"workflow": "good"}, 0},
		{"vmcp_runs_in_flight", map[string]string{"workflow": "stuck"}, 0},
		{"vmcp_steps_in_flight", map[string]string{"workflow": "good"}, 0},
		{"vmcp_steps_in_flight", map[string]string{"workflow": "stuck"}, 0},
		{"vmcp_steps_total", map[string]string{"workflow": "good", "status": "completed"}, 2},
		{"vmcp_steps_total", map[string]string{"workflow": "good", "status": "failed"}, 1},
		{"vmcp_step_duration_seconds", map[string]string{"workflow": "good", "step": "flaky", "status": "completed"}, 1},
		{"vmcp_step_duration_seconds", map[string]string{"workflow": "good", "step": "refuses", "status": "failed"}, 1},
		{"vmcp_step_retries_total", map[string]string{"workflow": "good", "step": "flaky"}, 1},
		{"vmcp_backend_call_duration_seconds", map[string]string{"backend": "be", "tool": "ok"}, 1},
		{"vmcp_backend_call_duration_seconds", map[string]string{"backend": "be", "tool": "flaky"}, 2},
		{"vmcp_backend_call_duration_seconds", map[string]string{"backend": "be", "tool": "hang"}, 1},
		{"vmcp_backend_call_errors_total", map[string]string{"backend": "be", "tool": "flaky", "kind": "error"}, 1},
		{"vmcp_backend_call_errors_total", map[string]string{"backend": "be", "tool": "refuses", "kind": "tool_error"}, 1},
		{"vmcp_backend_call_errors_total", map[string]string{"backend": "be", "tool": "hang", "kind": "cancelled"}, 1},
		{"vmcp_backend_calls_in_flight", map[string]string{"backend": "be"}, 0},
	}
	for _, tt := range tests {
		got, ok := value(t, m, tt.name, tt.labels)
		if !ok || got != tt.want {
			t.Errorf("%s%v = %v (present %v); want %v", tt.name, tt.labels, got, ok, tt.want)
		}
	}
	if _, ok := value(t, m, "vmcp_backend_call_errors_total", map[string]string{"backend": "be", "tool": "ok", "kind": "error"}); ok {
		t.Errorf("vmcp_backend_call_errors_total has a series for the tool that never failed")
	}
}

func TestObserveDurationsFromEventTimes(t *testing.T) {
	m := New()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, ev := range []runtime.Event{
		{Kind: runtime.EventRunStarted, RunID: "r", Workflow: "w", Time: t0},
		{Kind: runtime.EventStepStarted, RunID: "r", Workflow: "w", StepID: "a", Time: t0},
		{Kind: runtime.EventStepStarted, RunID: "r", Workflow: "w", StepID: "b", Time: t0},
		{Kind: runtime.EventStepCompleted, RunID: "r", Workflow: "w", StepID: "a", Time: t0.Add(3 * time.Second)},
		{Kind: runtime.EventRunFinished, RunID: "r", Workflow: "w", Status: runtime.RunFailed, Time: t0.Add(7 * time.Second)},
		// A second run_finished for the same run must not count twice in
		// the gauges.
		{Kind: runtime.EventRunFinished, RunID: "r", Workflow: "w", Status: runtime.RunFailed, Time: t0.Add(8 * time.Second)},
	} {
		m.Observe(ev)
	}
	fams, _ := m.reg.Gather()
	sums := map[string]float64{}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			if h := mt.GetHistogram(); h != nil && strings.HasPrefix(f.GetName(), "vmcp_") {
				sums[f.GetName()] += h.GetSampleSum()
			}
		}
	}
	if sums["vmcp_step_duration_seconds"] != 3 || sums["vmcp_run_duration_seconds"] != 7 {
		t.Errorf("duration sums = step %v, run %v; want 3 and 7 (from the events' own times)", sums["vmcp_step_duration_seconds"], sums["vmcp_run_duration_seconds"])
	}
	for _, name := range []string{"vmcp_runs_in_flight", "vmcp_steps_in_flight"} {
		if got, _ := value(t, m, name, map[string]string{"workflow": "w"}); got != 0 {
			t.Errorf("%s after the run finished = %v; want 0", name, got)
		}
	}
}

func TestHandlerServesOwnRegistry(t *testing.T) {
	m := New()
	m.Observe(runtime.Event{Kind: runtime.EventRunFinished, RunID: "x", Workflow: "wf", Status: runtime.RunCompleted})
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	var lines []string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(l, "vmcp_runs_total") || strings.HasPrefix(l, "go_goroutines") {
			lines = append(lines, strings.Fields(l)[0])
		}
	}
	sort.Strings(lines)
	want := `go_goroutines vmcp_runs_total{status="completed",workflow="wf"}`
	if got := strings.Join(lines, " "); got != want {
		t.Errorf("/metrics has %q; want %q", got, want)
	}
	// Two Metrics values do not share series (no global registry).
	if _, ok := value(t, New(), "vmcp_runs_total", map[string]string{"workflow": "wf", "status": "completed"}); ok {
		t.Errorf("a new Metrics already has a series recorded on another one")
	}
}
