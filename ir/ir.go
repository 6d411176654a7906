package ir

import (
	"encoding/json"
	"fmt"
	"time"
)

// Version identifies the layout of a Plan. Decode refuses plans of any other
// version, so a runtime never guesses at a plan written by another compiler.
//
// v2 added Template.Segments (exact file positions inside quoted and block
// scalars); a v1 plan has none, so it must be compiled again. v3 is the
// trusted plan: the runtime reads Dependents, Sinks, Remaining and every
// default as written and no longer fills or recomputes them, so Decode
// validates them (validate.go); a v2 plan that passes is read as v3.
const Version = "vmcp.plan/v3"

// olderVersions are the versions this package once wrote; Decode tells
// their readers to recompile rather than calling them unknown.
var olderVersions = []string{"vmcp.plan/v1"}

// Step types.
const (
	StepTool        = "tool"
	StepElicitation = "elicitation"
	StepForEach     = "forEach"
	StepWorkflow    = "workflow"
)

// Error and response actions.
const (
	ActionAbort         = "abort"
	ActionContinue      = "continue"
	ActionRetry         = "retry"
	ActionSkipRemaining = "skip_remaining"
)

// MaxElicitationTimeout is the longest an elicitation waits for an
// answer, as in ToolHive: the checker warns about a longer timeout and
// caps it, and the runtime caps a hand-built plan's.
const MaxElicitationTimeout = 10 * time.Minute

// Workflow failure modes.
const (
	FailureAbort    = "abort"
	FailureContinue = "continue"
)

// Plan is the compiled form of one or more workflow sources.
type Plan struct {
	Version   string      `json:"version"`
	Workflows []*Workflow `json:"workflows"`
}

// Workflow is one composite tool, checked and planned.
type Workflow struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Pos         Pos    `json:"pos"`
	// InputSchema is the normalised JSON Schema object of the parameters
	// (type: object, properties, required), whichever form the source used.
	InputSchema map[string]any `json:"inputSchema"`
	Timeout     Duration       `json:"timeout"`
	FailureMode string         `json:"failureMode"`
	MaxParallel int            `json:"maxParallel"`
	Vars        []*Var         `json:"vars,omitempty"`
	Output      *Output        `json:"output,omitempty"`
	Annotations *Annotations   `json:"annotations,omitempty"`
	// Version says which version of the workflow this is: the number an
	// authored workflow got when it was saved ("3"), or a content hash for
	// one that came from files. Every run records it. The compiler leaves
	// it empty; the server that serves the workflow fills it in.
	Version string `json:"version,omitempty"`
	// Steps are in topological order; Step.Index is the position here and
	// every dependency index is smaller than the step's own.
	Steps []*Step `json:"steps"`
	// Levels groups step indexes by longest-path depth from a root. They are
	// for display and statistics; the runtime schedules by dependencies.
	Levels [][]int `json:"levels"`
	Stats  Stats   `json:"stats"`
	// CriticalPath is the longest dependency chain, as step indexes from a
	// root to a sink.
	CriticalPath []int `json:"criticalPath"`
	// Sinks are the indexes of steps no other step depends on.
	Sinks []int `json:"sinks"`

	// Finally are the steps that run once every step of Steps has ended,
	// whatever the run's outcome (completed, failed, cancelled or
	// timed_out). They form a graph of their own: Index, Deps, Dependents,
	// Level and Remaining count within Finally, in topological order as
	// for Steps. No step of Steps depends on them or reads them, and they
	// cannot change the run's status.
	Finally []*Step `json:"finally,omitempty"`
	// FinallyLevels groups Finally indexes by longest-path depth.
	FinallyLevels [][]int `json:"finallyLevels,omitempty"`
	// FinallyBound is the longest the finally steps can take once the run
	// has ended: the largest sum of step timeouts along a dependency chain
	// of Finally (each finally step is bounded by its own timeout, as the
	// workflow's timeout may have passed already).
	FinallyBound Duration `json:"finallyBound,omitempty"`
}

// Stats summarises the shape of a workflow's dependency graph.
type Stats struct {
	TotalLevels     int `json:"total_levels"`
	TotalSteps      int `json:"total_steps"`
	MaxParallelism  int `json:"max_parallelism"`
	MinParallelism  int `json:"min_parallelism"`
	SequentialSteps int `json:"sequential_steps"`
	// FinallySteps and FinallyLevels count Workflow.Finally and its levels.
	FinallySteps  int `json:"finally_steps,omitempty"`
	FinallyLevels int `json:"finally_levels,omitempty"`
}

// Var is a named value evaluated once when a run starts.
type Var struct {
	Name  string `json:"name"`
	Value *Value `json:"value"`
}

// Annotations are the MCP tool annotations advertised for the workflow.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
	// Derived lists the hints (readOnlyHint, destructiveHint,
	// openWorldHint) whose values were derived from the steps' backend
	// tools rather than written by the author, so a runtime can derive
	// them again from its live catalog. Sorted.
	Derived []string `json:"derived,omitempty"`
}

// Step is one node of the workflow graph.
type Step struct {
	Index int    `json:"index"`
	ID    string `json:"id"`
	Type  string `json:"type"`
	Pos   Pos    `json:"pos"`
	// Deps are the indexes of the steps this one depends on, sorted.
	Deps []int `json:"deps,omitempty"`
	// Dependents are the indexes of the steps that depend on this one, sorted.
	Dependents []int `json:"dependents,omitempty"`
	// Level is the longest-path depth from a root (roots are level 0).
	Level int `json:"level"`
	// Remaining is the number of steps on the longest path from this step
	// to a sink, counting itself; the scheduler starts the highest first.
	Remaining int `json:"remaining"`

	Condition      *Template `json:"condition,omitempty"`
	OnError        OnError   `json:"onError"`
	Timeout        Duration  `json:"timeout"`
	DefaultResults any       `json:"defaultResults,omitempty"`
	// MaySkip is true when the step can end without output of its own
	// (it has a condition or may fail with continue, so readers see
	// DefaultResults), or is an elicitation whose decline or cancel
	// continues (so its output has the content of DefaultResults).
	MaySkip bool `json:"maySkip,omitempty"`
	// Idempotent is the author's promise (idempotent: true) that calling
	// the step again has the same effect as calling it once, so a run
	// resumed after a crash may call it again when its first call was in
	// flight. A tool whose backend annotations say idempotentHint or
	// readOnlyHint counts as idempotent too; that is decided against the
	// live catalog, not stored here.
	Idempotent bool `json:"idempotent,omitempty"`

	// Tool steps.
	Tool      *ToolRef `json:"tool,omitempty"`
	Arguments *Value   `json:"arguments,omitempty"`

	// Elicitation steps.
	Message   *Template      `json:"message,omitempty"`
	Schema    map[string]any `json:"schema,omitempty"`
	OnDecline string         `json:"onDecline,omitempty"`
	OnCancel  string         `json:"onCancel,omitempty"`

	// ForEach steps.
	ForEach *ForEach `json:"forEach,omitempty"`

	// Workflow steps: the callee, run as a child run with Arguments as
	// its parameters; the step's output is the callee's result.
	Workflow *WorkflowRef `json:"workflow,omitempty"`
}

// WorkflowRef names the composite tool a workflow step runs: another
// workflow of the same plan.
type WorkflowRef struct {
	Name string `json:"name"`
	Pos  Pos    `json:"pos"`
}

// ToolRef names a backend tool as backend.tool.
type ToolRef struct {
	Backend string `json:"backend"`
	Name    string `json:"name"`
	Pos     Pos    `json:"pos"`
	// Ref is the reference as written when it was not backend.tool: a bare
	// ("echo") or aggregated ("everything_echo") tool name. Backend and
	// Name are empty until it is resolved against a tool catalog (vmcp run
	// always resolves it at startup); a runtime refuses an unresolved one.
	Ref string `json:"ref,omitempty"`
}

// Resolved reports whether the reference names a backend and a tool.
func (r ToolRef) Resolved() bool { return r.Backend != "" && r.Name != "" }

func (r ToolRef) String() string {
	if !r.Resolved() {
		return r.Ref
	}
	return r.Backend + "." + r.Name
}

// OnError says what a failed step does.
type OnError struct {
	// Action is abort, continue or retry. Empty means the workflow's
	// failure mode decides.
	Action     string   `json:"action,omitempty"`
	MaxRetries int      `json:"maxRetries,omitempty"`
	RetryDelay Duration `json:"retryDelay,omitempty"`
	// MaxDelay caps the interval between attempts (zero: DefaultMaxDelay).
	MaxDelay Duration `json:"maxDelay,omitempty"`
	// Multiplier grows the interval after each attempt (zero:
	// DefaultMultiplier).
	Multiplier float64 `json:"multiplier,omitempty"`
	// AttemptTimeout bounds each attempt; zero means only the step timeout
	// bounds them (all together).
	AttemptTimeout Duration `json:"attemptTimeout,omitempty"`
	// RetryOn lists the failures that are retried (RetryOnKinds); empty
	// means all of them.
	RetryOn []string `json:"retryOn,omitempty"`
}

// Retry defaults (design.md "Execution semantics").
const (
	DefaultMaxDelay   = Duration(60 * time.Second)
	DefaultMultiplier = 1.5
)

// Failure kinds that onError.retryOn selects.
const (
	RetryOnError     = "error"     // a transport or backend process failure
	RetryOnTimeout   = "timeout"   // an attempt that hit attemptTimeout
	RetryOnToolError = "toolError" // a result with isError: true
)

// RetryOnKinds are the values retryOn accepts, in documentation order.
var RetryOnKinds = []string{RetryOnError, RetryOnTimeout, RetryOnToolError}

// ForEachOutputFields are the fields of a forEach step's output:
// iterations ([{index, item, status, output, error}]) and the counts of
// them, count = completed + failed + skipped.
var ForEachOutputFields = []string{"iterations", "count", "completed", "failed", "skipped"}

// ForEach describes an iterating step.
type ForEach struct {
	// Collection is the template that yields the items; nil when the
	// source wrote a literal list, which is then Items.
	Collection *Template `json:"collection,omitempty"`
	// Items is a literal collection (a KindArray Value whose strings may
	// be templates, as in arguments).
	Items         *Value `json:"items,omitempty"`
	ItemVar       string `json:"itemVar"`
	MaxParallel   int    `json:"maxParallel"`
	MaxIterations int    `json:"maxIterations"`
	// Step is the inner tool or workflow step run once per item. Its ID is
	// the forEach step's ID and it has no dependencies of its own. Its
	// Condition, when set, is evaluated per item; an iteration it skips has
	// its DefaultResults as output. Nil when the loop has a body (Steps).
	Step *Step `json:"step,omitempty"`

	// Steps is the loop body: a graph of its own run once per item, in
	// topological order, with Index, Deps, Dependents, Level and Remaining
	// counting within Steps (as for Workflow.Steps). A body step reads
	// this iteration's run of the other body steps, the current iteration
	// of every enclosing body, and top-level steps. Nil when the loop has
	// an inner Step.
	Steps []*Step `json:"steps,omitempty"`
	// Levels, Sinks and CriticalPath describe Steps as the workflow's
	// fields describe Workflow.Steps.
	Levels       [][]int `json:"levels,omitempty"`
	Sinks        []int   `json:"sinks,omitempty"`
	CriticalPath []int   `json:"criticalPath,omitempty"`
	// Output shapes each iteration's output from the body (the same form
	// as a workflow's output). Without it an iteration's output is the
	// body's result by the workflow rule: the single sink's output, or an
	// object keyed by sink id.
	Output *Output `json:"output,omitempty"`
}

// EachStep calls f for every step of steps and, depth first, for the
// inner step or the body steps of every forEach among them, so walkers
// of a plan reach loop bodies at any depth.
func EachStep(steps []*Step, f func(*Step)) {
	for _, s := range steps {
		if s == nil {
			continue
		}
		f(s)
		if s.ForEach == nil {
			continue
		}
		if s.ForEach.Step != nil {
			f(s.ForEach.Step)
		}
		EachStep(s.ForEach.Steps, f)
	}
}

// Output describes the composite tool's result.
type Output struct {
	Properties []*OutputProperty `json:"properties"`
	Required   []string          `json:"required,omitempty"`
	// Schema is the JSON Schema advertised as the tool's outputSchema.
	Schema map[string]any `json:"schema"`
}

// OutputProperty is one field of the result. A leaf has a Value template;
// an object has nested Properties.
type OutputProperty struct {
	Name        string            `json:"name"`
	Type        string            `json:"type,omitempty"`
	Description string            `json:"description,omitempty"`
	Pos         Pos               `json:"pos"`
	Value       *Template         `json:"value,omitempty"`
	Default     any               `json:"default,omitempty"`
	HasDefault  bool              `json:"hasDefault,omitempty"`
	Properties  []*OutputProperty `json:"properties,omitempty"`
	Required    []string          `json:"required,omitempty"`
}

// Template is the source text of a Go text/template and where it starts.
// Plans keep the source, not the parsed tree, so that they serialise; a
// runtime parses each template once when it loads the plan.
type Template struct {
	Source string `json:"source"`
	// Pos is where Source's first byte is in the file (for a quoted
	// scalar, the byte after the quote).
	Pos Pos `json:"pos"`
	// Segments maps byte offsets of Source back to the file (see
	// segments.go and Template.OffsetPos). The compiler leaves it empty
	// when Source is one run of the file's text starting at Pos.
	Segments []Segment `json:"segments,omitempty"`
	// Path is the YAML path of the scalar, e.g. steps[2].arguments.body.
	Path string `json:"path,omitempty"`
	// Single is true when the whole string is one action ("{{.x}}"), so the
	// value keeps its type instead of becoming a string.
	Single bool `json:"single,omitempty"`
}

// Value kinds.
const (
	KindLiteral  = "literal"  // a scalar with no template action, or null
	KindTemplate = "template" // a string with at least one action
	KindObject   = "object"
	KindArray    = "array"
)

// Value is an argument tree whose strings may be templates.
type Value struct {
	Kind     string    `json:"kind"`
	Literal  any       `json:"literal,omitempty"`
	Template *Template `json:"template,omitempty"`
	Fields   []*Field  `json:"fields,omitempty"` // objects, in source order
	Items    []*Value  `json:"items,omitempty"`  // arrays
}

// Field is one key of an object Value.
type Field struct {
	Key   string `json:"key"`
	Value *Value `json:"value"`
}

// Pos is a 1-based position in a source file. The zero Pos means unknown.
type Pos struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
}

// IsValid reports whether the position names a line.
func (p Pos) IsValid() bool { return p.Line > 0 }

// String prints file:line:col, leaving out the parts that are unknown.
func (p Pos) String() string {
	switch {
	case p.Line == 0 && p.File == "":
		return "-"
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Duration is a time.Duration that reads and writes Go duration strings
// ("1m30s") in JSON.
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"1m30s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}
