package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Keys of the result's _meta.
const (
	MetaRunID    = "vmcp/runId"
	MetaWorkflow = "vmcp/workflow"
	MetaStatus   = "vmcp/status"
	// MetaTimeline lists each step's status and its start and end as
	// milliseconds since the run started, in plan order, so a client can see
	// what ran in parallel; a forEach step's entry counts its iterations
	// (loop: {count, completed, failed, skipped}).
	MetaTimeline = "vmcp/timeline"
	// MetaFinallyFailed lists the finally steps that failed, when any did:
	// they do not change the run's status, so this is where they show.
	MetaFinallyFailed = "vmcp/finallyFailed"
	// MetaVersion is the version of the workflow the run ran, and
	// MetaDraft is true for the run of an unsaved draft.
	MetaVersion = "vmcp/workflowVersion"
	MetaDraft   = "vmcp/draft"
	// MetaTraceID is the run's trace id when vmcp traces (telemetry:).
	MetaTraceID = "vmcp/traceId"
)

// workflowHandler runs wf once per call. Everything that goes wrong with
// the run (bad arguments, a failed step, a cancel, a timeout) becomes an
// isError result; the Go error stays nil so the client never sees a
// protocol error for a workflow problem.
func (s *Server) workflowHandler(wf *ir.Workflow) mcpgo.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := callArguments(req)
		if err != nil {
			return mcp.NewToolResultError(fmt.Sprintf("invalid arguments for %s: %v", wf.Name, err)), nil
		}
		if usesMultiRoundTrip(ctx) || req.Params.RequestState != "" {
			return s.multiRoundTrip(ctx, wf, req, args), nil
		}
		return s.RunTool(ctx, req, wf, args, false), nil
	}
}

// RunTool runs wf once for the tool call req with args, as a workflow
// tool does (elicitation through the client, progress notifications), and
// returns the tool result. With draft, wf is an unsaved workflow run once
// through the runner's RunOptions.Draft (vmcp_workflow_run); drafts do not
// take part in multi round trips.
func (s *Server) RunTool(ctx context.Context, req mcp.CallToolRequest, wf *ir.Workflow, args map[string]any, draft bool) *mcp.CallToolResult {
	run, refused := s.RunWorkflow(ctx, req, wf, args, draft)
	if refused != nil {
		return refused
	}
	return RunResult(run)
}

// RunWorkflow is RunTool without the result: it returns the finished run,
// or, for a run that could not start (bad arguments, say), the isError
// result that says why. vmcp_workflow_run builds its own report from the
// run.
func (s *Server) RunWorkflow(ctx context.Context, req mcp.CallToolRequest, wf *ir.Workflow, args map[string]any, draft bool) (*runtime.Run, *mcp.CallToolResult) {
	owner := httpsafe.Caller(ctx).Subject
	release, err := s.admitRun(ctx, owner, wf.Name)
	if err != nil {
		return nil, startError(wf, err)
	}
	defer release()
	runID := runtime.NewRunID()
	log := s.log.With("workflow", wf.Name, "run_id", runID)
	opts := runtime.RunOptions{
		RunID:    runID,
		Owner:    owner,
		Elicitor: &clientElicitor{s: s, reqCtx: ctx},
	}
	if draft {
		opts.Draft = wf
		log = log.With("draft", true)
	}
	if p := s.newProgress(ctx, req); p != nil {
		opts.OnEvent = p.onEvent
	}
	log.Debug("run started")
	if tc := s.opts.TraceContext; tc != nil {
		var meta map[string]any
		if req.Params.Meta != nil {
			meta = req.Params.Meta.AdditionalFields
		}
		ctx = tc(ctx, meta, req.Header.Get)
	}
	run, err := s.opts.Runner.Run(ctx, wf.Name, args, opts)
	if err != nil {
		log.Info("run did not start", "err", err)
		return nil, startError(wf, err)
	}
	if run.TraceID != "" {
		log = log.With("trace_id", run.TraceID)
		if run.SpanID != "" {
			log = log.With("span_id", run.SpanID)
		}
	}
	log.Info("run finished", "status", run.Status, "duration", run.EndedAt.Sub(run.StartedAt).Round(time.Microsecond))
	return run, nil
}

// startError is the result for a run that could not start: invalid
// arguments (the InputError names the parameter and the rule) or another
// reason.
func startError(wf *ir.Workflow, err error) *mcp.CallToolResult {
	var inErr *runtime.InputError
	if errors.As(err, &inErr) {
		return mcp.NewToolResultError(inErr.Error())
	}
	return mcp.NewToolResultError(fmt.Sprintf("workflow %s could not start: %v", wf.Name, err))
}

// CallArguments returns the call's arguments as an object; a missing or
// null arguments field is an empty object.
func CallArguments(req mcp.CallToolRequest) (map[string]any, error) { return callArguments(req) }

// callArguments returns the call's arguments as an object; a missing or
// null arguments field is an empty object.
func callArguments(req mcp.CallToolRequest) (map[string]any, error) {
	switch a := req.Params.Arguments.(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return a, nil
	default:
		return nil, fmt.Errorf("arguments must be a JSON object, not %s", jsonKind(a))
	}
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int, int64, json.Number:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// RunResult turns a finished run into the tool result. A completed run's
// output is the structuredContent (an output that is not a JSON object is
// wrapped as {"result": output}, because MCP requires structuredContent to
// be an object) and the same JSON, without HTML escaping, is the text
// content. Any other status is
// an isError result whose text names the failed step and its position.
// _meta carries the run id, workflow, status and step timeline either way.
func RunResult(run *runtime.Run) *mcp.CallToolResult {
	var res *mcp.CallToolResult
	if run.Status == runtime.RunCompleted {
		structured := StructuredOutput(run.Output)
		text, err := runtime.MarshalJSON(structured)
		if err != nil {
			res = mcp.NewToolResultError(fmt.Sprintf("workflow %s: output is not JSON: %v", run.Workflow, err))
		} else {
			res = &mcp.CallToolResult{
				Content:           []mcp.Content{mcp.NewTextContent(string(text))},
				StructuredContent: structured,
			}
		}
	} else {
		res = mcp.NewToolResultError(FailureMessage(run))
	}
	res.Meta = RunMeta(run)
	return res
}

// RunMeta is the _meta of a run's result: run id, workflow, status,
// timeline, and when they apply the failed finally steps, the version and
// the draft mark.
func RunMeta(run *runtime.Run) *mcp.Meta {
	meta := &mcp.Meta{AdditionalFields: map[string]any{
		MetaRunID:    run.ID,
		MetaWorkflow: run.Workflow,
		MetaStatus:   string(run.Status),
		MetaTimeline: Timeline(run),
	}}
	if failed := run.FailedFinally(); len(failed) > 0 {
		meta.AdditionalFields[MetaFinallyFailed] = failed
	}
	if run.WorkflowVersion != "" {
		meta.AdditionalFields[MetaVersion] = run.WorkflowVersion
	}
	if run.Draft {
		meta.AdditionalFields[MetaDraft] = true
	}
	if run.TraceID != "" {
		meta.AdditionalFields[MetaTraceID] = run.TraceID
	}
	return meta
}

// StructuredOutput is the structuredContent for a run output.
func StructuredOutput(out any) map[string]any {
	if m, ok := out.(map[string]any); ok {
		return m
	}
	return map[string]any{"result": out}
}

// FailureMessage says why a run did not complete: the status, and the
// failing step with its source position when there is one.
func FailureMessage(run *runtime.Run) string {
	var what string
	switch run.Status {
	case runtime.RunFailed:
		what = "failed"
	case runtime.RunCancelled:
		what = "was cancelled"
	case runtime.RunTimedOut:
		what = "timed out"
	default:
		what = "ended with status " + string(run.Status)
	}
	msg := fmt.Sprintf("workflow %s %s", run.Workflow, what)
	if run.Error != nil {
		msg += ": " + run.Error.Error()
	}
	return msg
}

// TimelineEntry is one step of a run's timeline.
type TimelineEntry struct {
	Step     string  `json:"step"`
	Status   string  `json:"status"`
	Attempts int     `json:"attempts,omitempty"`
	StartMs  float64 `json:"startMs"`
	EndMs    float64 `json:"endMs"`
	Finally  bool    `json:"finally,omitempty"` // a finally step
	// Loop counts a forEach step's iterations, once it has ended.
	Loop *runtime.LoopCounts `json:"loop,omitempty"`
}

// Timeline lists every step that started, with start and end offsets in
// milliseconds from the start of the run, in plan order.
func Timeline(run *runtime.Run) []TimelineEntry {
	out := []TimelineEntry{}
	for i, st := range run.Steps {
		if st.StartedAt.IsZero() {
			continue
		}
		e := TimelineEntry{
			Step:     st.ID,
			Status:   string(st.Status),
			Attempts: st.Attempts,
			StartMs:  ms(st.StartedAt.Sub(run.StartedAt)),
			Finally:  run.IsFinally(i),
		}
		if !st.EndedAt.IsZero() {
			e.EndMs = ms(st.EndedAt.Sub(run.StartedAt))
		}
		if lc, ok := runtime.LoopSummary(st.Output); ok {
			e.Loop = &lc
		}
		out = append(out, e)
	}
	return out
}

func ms(d time.Duration) float64 {
	return float64(d.Round(100*time.Microsecond)) / float64(time.Millisecond)
}
