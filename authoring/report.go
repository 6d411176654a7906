package authoring

// vmcp_workflow_run's result: a report of the run rather than only the
// workflow's output, so that what went wrong (a failed step, an empty
// batch, a loop whose iterations failed) is visible in the one round the
// agent already paid for. Per step it gives the status, attempts,
// duration, error, a forEach's iteration counts and first failures, the
// size of the output in JSON bytes and the output itself, as a sample
// (sample.go) unless the caller asked for whole outputs (full: true). A
// step whose output is the workflow's result says so (isResult) instead of
// repeating it.

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/vmcp-dev/vmcp/mcpserver"
	"github.com/vmcp-dev/vmcp/runtime"
)

// maxFailedIterations is how many failed iterations a loop's report names.
const maxFailedIterations = 3

// RunReport is vmcp_workflow_run's structured result.
type RunReport struct {
	RunID    string `json:"runId"`
	Workflow string `json:"workflow"`
	Version  string `json:"version,omitempty"`
	Draft    bool   `json:"draft,omitempty"`
	Status   string `json:"status"`
	// Error says why the run did not complete (the failing step and its
	// position).
	Error      string  `json:"error,omitempty"`
	DurationMs float64 `json:"durationMs"`
	// Output is the workflow's result; OutputBytes the size of its JSON.
	Output      any `json:"output,omitempty"`
	OutputBytes int `json:"outputBytes"`
	// Sampled says that some output in the report is a sample (the rules
	// are in sample.go); full: true returns whole outputs.
	Sampled bool         `json:"sampled,omitempty"`
	Steps   []StepReport `json:"steps"`
}

// StepReport is one step of a RunReport, in plan order (finally steps
// last).
type StepReport struct {
	ID         string  `json:"id"`
	Status     string  `json:"status"`
	Attempts   int     `json:"attempts,omitempty"`
	DurationMs float64 `json:"durationMs,omitempty"`
	Error      string  `json:"error,omitempty"`
	Finally    bool    `json:"finally,omitempty"`
	// Items is the length of an output that is an array.
	Items *int `json:"items,omitempty"`
	// Loop counts a forEach step's iterations, and FailedIterations are
	// its first failures.
	Loop             *runtime.LoopCounts `json:"loop,omitempty"`
	FailedIterations []IterationError    `json:"failedIterations,omitempty"`
	// OutputBytes is the size of the whole output's JSON (0: no output).
	OutputBytes int `json:"outputBytes"`
	Output      any `json:"output,omitempty"`
	// IsResult says that the output is the workflow's result (the single
	// sink's output), shown once, as the report's output.
	IsResult bool   `json:"isResult,omitempty"`
	Note     string `json:"note,omitempty"`
}

// IterationError is a failed iteration of a loop.
type IterationError struct {
	Index int64  `json:"index"`
	Error string `json:"error"`
}

// Report describes a finished run; full keeps whole outputs instead of
// samples.
func Report(run *runtime.Run, full bool) RunReport {
	r := RunReport{RunID: run.ID, Workflow: run.Workflow, Version: run.WorkflowVersion, Draft: run.Draft,
		Status: string(run.Status), DurationMs: millis(run.StartedAt, run.EndedAt), Steps: []StepReport{}}
	if run.Status != runtime.RunCompleted {
		r.Error = mcpserver.FailureMessage(run)
	}
	if run.Output != nil {
		r.Output, r.OutputBytes = r.shown(mcpserver.StructuredOutput(run.Output), full)
	}
	for i, st := range run.Steps {
		s := r.step(st, run.IsFinally(i), full)
		if run.Output != nil && st.Output != nil && reflect.DeepEqual(run.Output, st.Output) {
			s.Output, s.IsResult = nil, true
		}
		r.Steps = append(r.Steps, s)
	}
	return r
}

func (r *RunReport) step(st runtime.StepState, finally, full bool) StepReport {
	s := StepReport{ID: st.ID, Status: string(st.Status), Attempts: st.Attempts, Error: st.Error, Finally: finally, Note: st.Note}
	if !st.StartedAt.IsZero() {
		s.DurationMs = millis(st.StartedAt, st.EndedAt)
	}
	if arr, ok := st.Output.([]any); ok {
		n := len(arr)
		s.Items = &n
	}
	if lc, ok := runtime.LoopSummary(st.Output); ok {
		s.Loop = &lc
		s.FailedIterations = failedIterations(st.Output)
	}
	if st.Output != nil {
		s.Output, s.OutputBytes = r.shown(st.Output, full)
	}
	return s
}

// shown is v as the report shows it, and the size of its whole JSON.
func (r *RunReport) shown(v any, full bool) (any, int) {
	b, err := runtime.MarshalJSON(v)
	if err != nil {
		return fmt.Sprintf("(not JSON: %v)", err), 0
	}
	if full {
		return v, len(b)
	}
	out, cut := Sample(v)
	r.Sampled = r.Sampled || cut
	return out, len(b)
}

// failedIterations are the first failed iterations of a loop's output.
func failedIterations(out any) []IterationError {
	iters, _ := out.(map[string]any)["iterations"].([]any)
	var errs []IterationError
	for _, it := range iters {
		m, _ := it.(map[string]any)
		if m["status"] != string(runtime.StepFailed) {
			continue
		}
		msg, _ := m["error"].(string)
		idx, _ := m["index"].(int64)
		if f, ok := m["index"].(float64); ok {
			idx = int64(f)
		}
		errs = append(errs, IterationError{Index: idx, Error: msg})
		if len(errs) == maxFailedIterations {
			break
		}
	}
	return errs
}

func millis(from, to time.Time) float64 {
	if to.IsZero() || from.IsZero() {
		return 0
	}
	return float64(to.Sub(from).Round(100*time.Microsecond)) / float64(time.Millisecond)
}

// Summary is the report in one or two lines, for the result's text: the
// status, the steps by status, the first failed step, the loops with
// failures, and the output's size.
func (r RunReport) Summary() string {
	var b strings.Builder
	kind := "run"
	if r.Draft {
		kind = "draft run"
	}
	fmt.Fprintf(&b, "%s %s of %s %s in %s:", kind, r.RunID, r.Workflow, r.Status, time.Duration(r.DurationMs*float64(time.Millisecond)).Round(time.Millisecond))
	counts := map[string]int{}
	var order []string
	var firstFailed *StepReport
	for i, s := range r.Steps {
		if counts[s.Status] == 0 {
			order = append(order, s.Status)
		}
		counts[s.Status]++
		if s.Status == string(runtime.StepFailed) && firstFailed == nil {
			firstFailed = &r.Steps[i]
		}
	}
	parts := make([]string, 0, len(order))
	for _, st := range order {
		parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
	}
	fmt.Fprintf(&b, " %d steps (%s)", len(r.Steps), strings.Join(parts, ", "))
	if firstFailed != nil {
		fmt.Fprintf(&b, "; step %s failed: %s", firstFailed.ID, firstFailed.Error)
	} else if r.Error != "" {
		fmt.Fprintf(&b, "; %s", r.Error)
	}
	for _, s := range r.Steps {
		if s.Loop != nil && (s.Loop.Failed > 0 || s.Loop.Count == 0) {
			fmt.Fprintf(&b, "; loop %s: %d items, %d failed", s.ID, s.Loop.Count, s.Loop.Failed)
		}
	}
	fmt.Fprintf(&b, "; output %d bytes", r.OutputBytes)
	if r.Sampled {
		b.WriteString(" (outputs sampled; full: true returns them whole)")
	}
	b.WriteString(". The report is in structuredContent.")
	return b.String()
}
