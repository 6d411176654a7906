package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/toolcall"
)

// This file is the runtime's contract with the layers around it: the MCP
// client (Backend), the MCP server (Elicitor, events), and the run stores.
// Everything here is small on purpose, so that tests and benchmarks can drive
// the same engine with in-process fakes.

// The types of a backend tool call live in toolcall, which the MCP
// client shares without linking the engine; these are their names here.
type (
	// Backend calls one tool on one backend MCP server. The context
	// carries the step's deadline and is cancelled when the run is
	// cancelled or aborts; an implementation must stop the call (and tell
	// the server) when it is.
	Backend = toolcall.Backend
	// ToolCall is one backend tool invocation.
	ToolCall = toolcall.Call
	// ToolResult is a backend's answer, independent of the MCP library.
	ToolResult = toolcall.Result
	// Content is one content item of a tool result.
	Content = toolcall.Content
)

// SchemaSource gives the input schema of a backend tool when it is known,
// so string arguments can be coerced to the declared types ("5" -> 5).
// The engine asks on every call, so a source may change its answers (a
// backend that lists its tools again), unless the source says it never
// does (FixedSchemaSource).
type SchemaSource interface {
	InputSchema(backend, tool string) (map[string]any, bool)
}

// FixedSchemaSource is a SchemaSource whose answers never change, such as
// a snapshot of the tool catalog taken when the engine is made. The
// engine then asks it once per tool step, and later calls of the step use
// the schema it gave.
type FixedSchemaSource interface {
	SchemaSource
	// SchemasFixed only marks the source; it is never called.
	SchemasFixed()
}

// Elicitor asks the calling client for input on behalf of an elicitation step.
type Elicitor interface {
	Elicit(ctx context.Context, req ElicitRequest) (ElicitResult, error)
}

// ElicitRequest is the question an elicitation step puts to the user, or
// one that a backend asks while a tool step's call runs (relayed, see
// relay.go): then Backend and Tool name who asks.
type ElicitRequest struct {
	RunID   string
	StepID  string
	Message string
	Schema  map[string]any
	// Backend and Tool are set for a backend's question, empty for an
	// elicitation step's.
	Backend, Tool string
}

// Elicitation answers.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitResult is the user's answer.
type ElicitResult struct {
	Action  string // accept, decline or cancel
	Content map[string]any
	// By names who answered when it was not the client the run asked:
	// the console's signed-in user (through Questions.Answer). The step records
	// it as its output's answeredBy (and in its note when the answer
	// fails the step); empty for the asked client's own answer.
	By string `json:",omitempty"`
}

// RunStatus is the state of a whole run.
type RunStatus string

const (
	RunPending     RunStatus = "pending"
	RunRunning     RunStatus = "running"
	RunCompleted   RunStatus = "completed"
	RunFailed      RunStatus = "failed"
	RunCancelled   RunStatus = "cancelled"
	RunTimedOut    RunStatus = "timed_out"
	RunInterrupted RunStatus = "interrupted" // set by a persistent store after a crash
)

// Finished reports whether the status is final.
func (s RunStatus) Finished() bool { return s != RunPending && s != RunRunning }

// StepStatus is the state of one step in a run.
type StepStatus string

const (
	StepPending   StepStatus = "pending"
	StepRunning   StepStatus = "running"
	StepCompleted StepStatus = "completed"
	StepFailed    StepStatus = "failed"
	StepSkipped   StepStatus = "skipped"
)

// Run is the observable record of one workflow execution. Values returned by
// stores are copies, and nothing writes the one Engine.Run returns once it
// has returned: callers may keep and read them freely.
type Run struct {
	ID       string `json:"id"`
	Workflow string `json:"workflow"`
	// WorkflowVersion is the ir.Workflow.Version the run ran ("" for a
	// plan that carries none), and Draft marks the run of a draft that was
	// never saved (vmcp_workflow_run with a source).
	WorkflowVersion string `json:"workflowVersion,omitempty"`
	Draft           bool   `json:"draft,omitempty"`
	// ParentID is the run whose workflow step started this one, and
	// ParentStep that step's id; both are empty for a top-level run.
	ParentID   string `json:"parentId,omitempty"`
	ParentStep string `json:"parentStep,omitempty"`
	// Owner is the subject of the caller that started the run
	// (httpsafe.Identity), which a child run inherits; "" for the local
	// operator (stdio, no authentication) and for runs stored before
	// owners were recorded. A store sets it with CreateRun and never
	// changes it.
	Owner string `json:"owner,omitempty"`
	// Trigger says what started the run when it was not a client's call:
	// "rerun:ID" for a re-run of run ID (see Rerun).
	Trigger string `json:"trigger,omitempty"`
	// TraceID is the run's trace id (hex) when the engine traces
	// (Options.Tracer): a child run's is its parent's.
	TraceID string `json:"traceId,omitempty"`
	// SpanID is the run's own span's id (hex), which a resumed run's span
	// links to (Engine.Resume).
	SpanID    string     `json:"spanId,omitempty"`
	Status    RunStatus  `json:"status"`
	StartedAt time.Time  `json:"startedAt"`
	EndedAt   time.Time  `json:"endedAt,omitzero"`
	Output    any        `json:"output,omitempty"`
	Error     *StepError `json:"error,omitempty"`
	// Params are the validated parameters the run started with, kept so
	// that a stored run can be resumed (Engine.Resume). They may hold
	// secrets, so they are never serialised with the run: a store that
	// resumes runs keeps them itself.
	Params map[string]any `json:"-"`
	// Steps are in the plan's step order, the finally steps last.
	Steps []StepState `json:"steps"`
	// FinallyFrom is the index in Steps of the first finally step; 0 when
	// the workflow has none (a workflow has at least one other step).
	FinallyFrom int `json:"finallyFrom,omitempty"`
	// PlanDigest is the ir.Digest of the workflow the run started with,
	// so a run resumed after a crash can tell that the workflow changed.
	PlanDigest string `json:"planDigest,omitempty"`
}

// StepState is the record of one step in a run.
type StepState struct {
	ID        string     `json:"id"`
	Status    StepStatus `json:"status"`
	Attempts  int        `json:"attempts"`
	StartedAt time.Time  `json:"startedAt,omitzero"`
	EndedAt   time.Time  `json:"endedAt,omitzero"`
	Output    any        `json:"output,omitempty"`
	// Content is a tool step's content map (.steps.X.content: text,
	// image, resource... see output.go), kept so that a replayed or
	// resumed run reads what the step returned.
	Content map[string]any `json:"content,omitempty"`
	Error   string         `json:"error,omitempty"`
	// Note explains anything unusual about the record, for example that a
	// store truncated a large output.
	Note string `json:"note,omitempty"`
}

// IsFinally reports whether Steps[i] is one of the workflow's finally
// steps: it ran after every other step had ended, and its failure did not
// change the run's status.
func (r *Run) IsFinally(i int) bool { return r.FinallyFrom > 0 && i >= r.FinallyFrom }

// FailedFinally returns the ids of the finally steps that failed, in plan
// order. They do not change the run's status, so callers name them
// (the MCP result's _meta, vmcp runs show).
func (r *Run) FailedFinally() []string {
	if r.FinallyFrom <= 0 || r.FinallyFrom > len(r.Steps) {
		return nil
	}
	var ids []string
	for _, st := range r.Steps[r.FinallyFrom:] {
		if st.Status == StepFailed {
			ids = append(ids, st.ID)
		}
	}
	return ids
}

// RunFilter selects runs in Store.ListRuns. Zero fields match everything.
type RunFilter struct {
	Workflow string
	Status   RunStatus
	// Parent selects the child runs of this run id.
	Parent string
	// Owner selects the runs of this owner (Run.Owner); "" selects every
	// owner's.
	Owner string
	// Trigger selects the runs with this Run.Trigger (schedule:NAME,
	// rerun:ID).
	Trigger string
	// StartedFrom and StartedTo select the runs that started at or after
	// StartedFrom and before StartedTo; a zero time is no bound.
	StartedFrom, StartedTo time.Time
	// ErrorContains selects the runs whose error's message or step
	// contains this text, ignoring ASCII case (runfilter.go).
	ErrorContains string
	// After continues a listing past a page: the runs that come after
	// this cursor in the list's order (newest first); zero is the start.
	After RunCursor
	Limit int // 0 means the store's default
	// Summary asks only for what a list of runs shows: the run without its
	// output and parameters, and its steps with their ids and statuses
	// alone. A store may return more.
	Summary bool
}

// Store keeps runs so they can be read while they go and after they end.
// The engine calls CreateRun once, UpdateStep whenever a step changes state,
// and FinishRun once. Implementations must be safe for concurrent use.
type Store interface {
	CreateRun(ctx context.Context, run *Run) error
	UpdateStep(ctx context.Context, runID string, index int, step StepState) error
	FinishRun(ctx context.Context, run *Run) error
	GetRun(ctx context.Context, id string) (*Run, error)
	// ListRuns returns matching runs, newest first: by StartedAt, then
	// by ID, both descending (RunCursor's order).
	ListRuns(ctx context.Context, filter RunFilter) ([]*Run, error)
}

// RemoteCanceller is a Store that several processes (replicas) share and
// that can ask the process running a run to cancel it (store/postgres).
// Engine.Cancel asks it for an unfinished run the engine does not run.
type RemoteCanceller interface {
	RequestCancel(ctx context.Context, id string) error
}

// ErrRunNotFound is returned by stores and the engine for an unknown run id.
var ErrRunNotFound = fmt.Errorf("run not found")

// EventKind names what happened in an Event.
type EventKind string

const (
	EventRunStarted    EventKind = "run_started"
	EventStepStarted   EventKind = "step_started"
	EventStepRetrying  EventKind = "step_retrying"
	EventStepCompleted EventKind = "step_completed"
	EventStepFailed    EventKind = "step_failed"
	EventStepSkipped   EventKind = "step_skipped"
	EventRunFinished   EventKind = "run_finished"
)

// Event reports progress. Done counts finished steps (completed, failed or
// skipped) out of Total, so a progress display needs no state of its own.
type Event struct {
	Kind     EventKind
	RunID    string
	Workflow string
	StepID   string // empty for run events
	Attempt  int
	Time     time.Time
	Err      string // for failures and retries
	Status   RunStatus
	Done     int
	Total    int
	// TraceID is the run's trace id when the engine traces (Run.TraceID),
	// and SpanID its run's span (Run.SpanID): the span the engine emits
	// the event under, which log lines of the event name (span_id).
	TraceID, SpanID string
	// Owner is the run's owner (Run.Owner). The engines leave it empty;
	// observe.WithEvents sets it from RunOptions.Owner for its observers,
	// so that the console shows each caller only its own runs' events.
	Owner string
}

// StepError is a run failure: the step, its source position and the cause.
// Its message never includes parameter values.
type StepError struct {
	Step string `json:"step,omitempty"`
	Pos  ir.Pos `json:"pos"`
	Msg  string `json:"message"`
}

func (e *StepError) Error() string {
	if e.Step == "" {
		return fmt.Sprintf("%s: %s", e.Pos, e.Msg)
	}
	return fmt.Sprintf("step %q (%s): %s", e.Step, e.Pos, e.Msg)
}
