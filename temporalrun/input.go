package temporalrun

// The data that crosses Temporal: the workflow's input and result, the
// activities' inputs and outputs, and the names the worker registers. All
// of it is JSON (Temporal's default data converter), so a run started by
// one vmcp version is readable by the next; the plan itself is ir's
// versioned JSON.

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Names registered with Temporal. They are part of the wire contract
// between `vmcp run` and `vmcp worker`: changing one strands runs in
// flight.
const (
	// WorkflowName is the Temporal workflow type of a vmcp run.
	WorkflowName = "vmcp.run"
	// CallToolActivity calls one backend tool once.
	CallToolActivity = "vmcp.callTool"
	// ExecuteStepActivity runs one step whole (a forEach) with the local
	// executors.
	ExecuteStepActivity = "vmcp.executeStep"
	// QueryRun answers the run as it stands (a *runtime.Run).
	QueryRun = "vmcp.run"
	// UpdateAnswer delivers the client's answer to a waiting elicitation.
	UpdateAnswer = "vmcp.answer"
)

// PayloadLimit is the largest payload (a step output, the run's result)
// that vmcp hands to Temporal: the server's default blob size limit. A
// larger one fails its step with an error naming it; nothing is cut.
const PayloadLimit = 2 << 20

// DefaultHeartbeatTimeout is how long a worker may go silent during a
// backend call before Temporal counts it dead and the step's fate is
// decided (called again elsewhere when idempotent, interrupted otherwise).
const DefaultHeartbeatTimeout = 10 * time.Second

// Input starts a run: everything the workflow needs travels in it, so a
// run finishes under the plan and tool schemas it started with, whatever
// is deployed later.
type Input struct {
	// Plan is the compiled plan: the workflow and every workflow it calls.
	Plan *ir.Plan `json:"plan"`
	// Tools holds the backend tools the plan calls (input schemas for
	// argument coercion, annotations for the idempotency rule), as the
	// starting vmcp saw them.
	Tools *catalog.Catalog `json:"tools,omitempty"`
	// Workflow is the composite tool to run; Params its arguments.
	Workflow string         `json:"workflow"`
	Params   map[string]any `json:"params,omitempty"`
	// RunID is vmcp's run id; it is also the Temporal workflow id. A
	// Temporal Schedule's runs have none in their input: the workflow id
	// Temporal gives each fired workflow is the run id (schedules.go).
	RunID      string `json:"runId"`
	ParentID   string `json:"parentId,omitempty"`
	ParentStep string `json:"parentStep,omitempty"`
	// HeartbeatTimeout bounds a worker's silence in a backend call.
	HeartbeatTimeout time.Duration `json:"heartbeatTimeout,omitempty"`
	// MaxIterations is limits.maxIterations of the starting vmcp.
	MaxIterations int `json:"maxIterations,omitempty"`
	// MaxResultBytes is limits.maxResultBytes of the starting vmcp: it
	// bounds each query (runtime.Options.MaxResultBytes).
	MaxResultBytes int `json:"maxResultBytes,omitempty"`
	// Elicit says whether the caller can answer elicitation requests.
	Elicit bool `json:"elicit,omitempty"`
	// Owner and Trigger are the run's (runtime.RunOptions): a scheduled
	// run's are schedule:NAME.
	Owner   string `json:"owner,omitempty"`
	Trigger string `json:"trigger,omitempty"`
	// Draft marks the run of an unsaved draft (vmcp_workflow_run with a
	// source): its plan holds the draft, and its record says so.
	Draft bool `json:"draft,omitempty"`
}

// CallInput is one backend call: one attempt of a tool step.
type CallInput struct {
	Call runtime.ToolCall `json:"call"`
	// Attempt counts from 1 (vmcp's attempts, not Temporal's).
	Attempt int `json:"attempt"`
	// Deadline ends the call (the attempt's timeout, or the step's): the
	// activity bounds the backend call by it and reports TimedOut, so a
	// slow backend is vmcp's timeout, never a Temporal activity retry.
	Deadline time.Time `json:"deadline"`
}

// CallOutput is what one call gave. A backend that answered (also with
// isError) or failed is a result here, not an activity failure: vmcp's
// retry policy, not Temporal's, decides what happens next. Activity
// failures are kept for the worker itself going away.
type CallOutput struct {
	Result *runtime.ToolResult `json:"result,omitempty"`
	// Err is the call's error (transport, backend process), when it failed.
	Err string `json:"err,omitempty"`
	// TimedOut says the call hit its deadline (attemptTimeout or the
	// step's timeout).
	TimedOut bool `json:"timedOut,omitempty"`
}

// StepCall runs one step whole on a worker: the plan and tools of the run
// (the worker builds an engine over them) and the step's input
// (runtime.StepInput as JSON, encoded when the step started).
type StepCall struct {
	Plan          *ir.Plan         `json:"plan"`
	Tools         *catalog.Catalog `json:"tools,omitempty"`
	Workflow      string           `json:"workflow"`
	MaxIterations int              `json:"maxIterations,omitempty"`
	// MaxResultBytes is Input.MaxResultBytes.
	MaxResultBytes int    `json:"maxResultBytes,omitempty"`
	Input          []byte `json:"input"`
}

// encodeStepInput encodes a step's input at once (it shares the
// machine's values).
func encodeStepInput(in runtime.StepInput) ([]byte, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	if len(b) > PayloadLimit {
		return nil, fmt.Errorf("the data this step reads (the outputs of the steps before it) is %d bytes, over Temporal's payload limit of %d bytes; have the earlier steps return less", len(b), PayloadLimit)
	}
	return b, nil
}

// Question is an elicitation the run waits on, as the run query shows it.
type Question struct {
	// Seq numbers the questions of a run from 1; an answer names the
	// question it answers, so a late answer to an earlier question is
	// refused.
	Seq     int            `json:"seq"`
	StepID  string         `json:"stepId"`
	Message string         `json:"message"`
	Schema  map[string]any `json:"schema,omitempty"`
}

// Answer answers Question Seq.
type Answer struct {
	Seq    int                  `json:"seq"`
	Result runtime.ElicitResult `json:"result"`
	// Err says the question could not be put to the client (the
	// elicitation failed); Result is then unset.
	Err string `json:"err,omitempty"`
}

// Snapshot is the run query's answer: the run as it stands, the
// questions it waits on (in the order they were asked), and the child runs
// of its workflow steps.
type Snapshot struct {
	Run       *runtime.Run `json:"run"`
	Questions []Question   `json:"questions,omitempty"`
	// Children are the runs of workflow steps, in start order.
	Children []Child `json:"children,omitempty"`
}

// Child is a workflow step's child run (a Temporal child workflow whose id
// is the child's run id).
type Child struct {
	RunID    string `json:"runId"`
	Workflow string `json:"workflow"`
	Step     string `json:"step"`
}

// jsonSize is the size of v as JSON, as Temporal's converter carries it.
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0 // the converter reports it with its own error
	}
	return len(b)
}

// toolSource is the run's tools as the engine reads them: input schemas
// (argument coercion) and annotations (a tool with idempotentHint or
// readOnlyHint may be called again when its worker is lost).
type toolSource struct{ c *catalog.Catalog }

func (s toolSource) InputSchema(backend, tool string) (map[string]any, bool) {
	return s.c.InputSchema(backend, tool)
}

func (s toolSource) ToolHints(backend, tool string) (runtime.ToolHints, bool) {
	t, ok := s.c.Tool(backend, tool)
	if !ok || t.Annotations == nil {
		return runtime.ToolHints{}, false
	}
	a := t.Annotations
	return runtime.ToolHints{ReadOnly: a.ReadOnlyHint != nil && *a.ReadOnlyHint, Idempotent: a.IdempotentHint != nil && *a.IdempotentHint}, true
}

// engineOptions are the options of the engine a run's plan is run with.
func engineOptions(tools *catalog.Catalog, maxIterations, maxResultBytes int, backend runtime.Backend) runtime.Options {
	opts := runtime.Options{Backend: backend, MaxIterations: maxIterations, MaxResultBytes: maxResultBytes}
	if tools != nil {
		opts.Schemas = toolSource{tools}
	}
	return opts
}

// PlanTools is the part of live that plan's steps call, at any depth
// (bodies, finally): what a run's input carries of the catalog.
func PlanTools(plan *ir.Plan, live *catalog.Catalog) *catalog.Catalog {
	out := catalog.New()
	for _, wf := range plan.Workflows {
		visit := func(s *ir.Step) {
			if s.Tool == nil {
				return
			}
			t, ok := live.Tool(s.Tool.Backend, s.Tool.Name)
			if !ok {
				return
			}
			b := out.Backends[s.Tool.Backend]
			if b == nil {
				b = &catalog.Backend{}
				out.Backends[s.Tool.Backend] = b
			}
			if _, dup := out.Tool(s.Tool.Backend, s.Tool.Name); !dup {
				b.Tools = append(b.Tools, t)
			}
		}
		ir.EachStep(wf.Steps, visit)
		ir.EachStep(wf.Finally, visit)
	}
	return out
}
