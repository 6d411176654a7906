package observe

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/internal/irbuild"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

type okBackend struct{}

func (okBackend) CallTool(context.Context, runtime.ToolCall) (*runtime.ToolResult, error) {
	return &runtime.ToolResult{Structured: map[string]any{"ok": true}}, nil
}

func testPlan() *ir.Plan {
	step := func(i int, id string, deps ...int) *ir.Step {
		return &ir.Step{Index: i, ID: id, Type: ir.StepTool, Deps: deps, Timeout: ir.Duration(time.Minute),
			Tool: &ir.ToolRef{Backend: "be", Name: "t"}}
	}
	return irbuild.Plan(&ir.Workflow{
		Name: "wf", Description: "d", Timeout: ir.Duration(time.Minute), FailureMode: ir.FailureAbort, MaxParallel: 10,
		InputSchema: map[string]any{"type": "object"}, Steps: []*ir.Step{step(0, "a"), step(1, "b", 0)},
	})
}

// TestEveryLineNamesTheRun runs a real workflow through WithEvents and a
// JSON logger and checks each line's run_id and step_id.
func TestEveryLineNamesTheRun(t *testing.T) {
	eng, err := runtime.New(testPlan(), runtime.Options{Backend: okBackend{}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var callerSaw []runtime.EventKind
	r := WithEvents(eng, Logger(log))
	if len(r.Workflows()) != 1 {
		t.Fatalf("WithEvents hides the workflows: %d", len(r.Workflows()))
	}
	run, err := r.Run(context.Background(), "wf", nil, runtime.RunOptions{RunID: "run-42", OnEvent: func(ev runtime.Event) {
		callerSaw = append(callerSaw, ev.Kind)
	}})
	if err != nil || run.Status != runtime.RunCompleted {
		t.Fatalf("Run = %v, %v", run, err)
	}
	type line struct {
		Level, Msg       string
		RunID            string `json:"run_id"`
		StepID           string `json:"step_id"`
		Workflow, Status string
	}
	var got []line
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var ln line
		if err := json.Unmarshal([]byte(l), &ln); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		got = append(got, ln)
	}
	// No run started or run finished: the MCP server logs those, once per
	// run.
	want := []line{
		{"DEBUG", "step started", "run-42", "a", "wf", ""},
		{"DEBUG", "step completed", "run-42", "a", "wf", ""},
		{"DEBUG", "step started", "run-42", "b", "wf", ""},
		{"DEBUG", "step completed", "run-42", "b", "wf", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log lines differ (-want +got):\n%s", diff)
	}
	if len(callerSaw) != len(want)+2 {
		t.Errorf("the caller's own OnEvent saw %d events; want %d (WithEvents must keep it)", len(callerSaw), len(want)+2)
	}
}

func TestFailureLevels(t *testing.T) {
	var buf bytes.Buffer
	h := Logger(slog.New(slog.NewTextHandler(&buf, nil))) // Info and up
	h(runtime.Event{Kind: runtime.EventStepStarted, RunID: "r", StepID: "s"})
	h(runtime.Event{Kind: runtime.EventStepRetrying, RunID: "r", StepID: "s", Attempt: 2, Err: "boom"})
	h(runtime.Event{Kind: runtime.EventRunFinished, RunID: "r", Status: runtime.RunCancelled})
	out := buf.String()
	for _, want := range []string{`level=WARN msg="step retrying" run_id=r workflow="" step_id=s attempt=2 err=boom`} {
		if !strings.Contains(out, want) {
			t.Errorf("log output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "run finished") {
		t.Errorf("run finished logged by the event logger; the server logs it once per run:\n%s", out)
	}
	if strings.Contains(out, "step started") {
		t.Errorf("step started logged at Info; want Debug:\n%s", out)
	}
}

func TestRunAndStepLogger(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	StepLogger(log, "r1", "wf", "s1").Info("hello")
	RunLogger(log, "r1", "wf").Info("bye")
	for _, want := range []string{"msg=hello run_id=r1 workflow=wf step_id=s1", "msg=bye run_id=r1 workflow=wf"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log output lacks %q:\n%s", want, buf.String())
		}
	}
}

// fixedTracer gives every run one trace id, as a tracer would.
type fixedTracer struct{}

func (fixedTracer) Start(ctx context.Context, _ runtime.SpanStart) (context.Context, runtime.Span) {
	return ctx, fixedSpan{}
}

type fixedSpan struct{}

func (fixedSpan) End(runtime.SpanEnd) {}
func (fixedSpan) TraceID() string     { return "4bf92f3577b34da6a3ce929d0e0e4736" }
func (fixedSpan) SpanID() string      { return "00f067aa0ba902b7" }

// TestStepLinesCarryTheTraceID: a traced run's step lines name its trace
// and the run's span, under which the engine emits them.
func TestStepLinesCarryTheTraceID(t *testing.T) {
	eng, err := runtime.New(testPlan(), runtime.Options{Backend: okBackend{}, Tracer: fixedTracer{}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if _, err := WithEvents(eng, Logger(log)).Run(context.Background(), "wf", nil, runtime.RunOptions{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) < 4 {
		t.Fatalf("%d lines, want the starts and ends of two steps:\n%s", len(lines), buf.String())
	}
	for _, l := range lines {
		var v struct {
			TraceID string `json:"trace_id"`
			SpanID  string `json:"span_id"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" || v.SpanID != "00f067aa0ba902b7" {
			t.Errorf("line %s: trace_id %q span_id %q; want the run's span's", l, v.TraceID, v.SpanID)
		}
	}
}
