package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"text/template"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

// Options configure an Engine.
type Options struct {
	Backend Backend
	// Schemas, when set, lets the engine coerce string arguments to the
	// types a backend tool declares and check every call's arguments
	// against the tool's input schema before the call (argschema.go).
	Schemas SchemaSource
	// Store keeps runs; nil means an in-memory store.
	Store  Store
	Logger *slog.Logger
	// Clock is the time, the retry sleeps and their jitter as the step
	// executors see them; nil means SystemClock.
	Clock Clock
	// MaxIterations is the server-wide cap on a forEach's iterations
	// (limits.maxIterations); 0 means ir.DefaultIterationLimit. New
	// refuses a plan with a forEach whose maxIterations is over it.
	MaxIterations int
	// MaxResultBytes bounds what the functions of one query evaluation
	// build (limits.maxResultBytes; internal/jmes limits.go): a query over
	// it fails its step. 0 or less means jmes.DefaultMaxBytes.
	MaxResultBytes int
	// Tracer, when set, is told where each run's spans begin and end
	// (trace.go); nil traces nothing and costs nothing.
	Tracer Tracer
}

// RunOptions configure one run.
type RunOptions struct {
	// RunID is used when set (it must be unique); otherwise NewRunID makes one.
	RunID string
	// Elicitor answers elicitation steps; nil makes them fail clearly (or
	// take their onCancel action).
	Elicitor Elicitor
	// OnEvent receives progress events, synchronously, in order per step.
	// The engine calls it from one goroutine per run, so events of one run
	// are totally ordered; it must not block for long.
	OnEvent func(Event)
	// ParentID and ParentStep link a child run (a workflow step's) to the
	// run and step that started it; both are recorded on the Run.
	ParentID   string
	ParentStep string
	// Owner is recorded as the run's Run.Owner; a child run gets its
	// parent's.
	Owner string
	// Draft, when set, is an unsaved workflow to run once instead of the
	// served workflow of that name (Run's workflow must be Draft.Name):
	// it is prepared for this run alone, its workflow steps call the
	// served workflows, and the run record is marked Draft. It must be a
	// checked workflow, as the compiler makes them.
	Draft *ir.Workflow
	// Trigger is recorded as the Run's Trigger (rerun:ID).
	Trigger string

	// resumed is the trace of the run Resume continues (its record's
	// TraceID and SpanID), which the resumed run's span continues.
	resumed resumedTrace
}

type resumedTrace struct{ traceID, spanID string }

// Engine executes the workflows of a plan. It is safe for concurrent use:
// many runs, of the same or different workflows, may go at once.
type Engine struct {
	// wmu guards plan and wfs, which SetWorkflows replaces as a whole; a
	// run keeps the prepared workflow it started with.
	wmu     sync.RWMutex
	plan    *ir.Plan
	wfs     map[string]*workflowPlan
	backend Backend
	schemas SchemaSource
	// fixedSchemas: schemas is a FixedSchemaSource.
	fixedSchemas bool
	// argSchemas are the compiled input schemas of the tools called so
	// far (argschema.go).
	argSchemas argSchemas
	store      Store
	log        *slog.Logger
	mu         sync.Mutex
	active     map[string]*runState
	// iterationLimit is Options.MaxIterations with its default.
	iterationLimit int
	// queryBytes is Options.MaxResultBytes: the budget of each query.
	queryBytes int
	clock      Clock
	tracer     Tracer
}

// New parses every template of the plan once and returns an engine.
func New(plan *ir.Plan, opts Options) (*Engine, error) {
	if plan == nil {
		return nil, errors.New("runtime: nil plan")
	}
	if plan.Version != "" && plan.Version != ir.Version {
		return nil, fmt.Errorf("runtime: plan version %q is not supported (want %q)", plan.Version, ir.Version)
	}
	e := &Engine{
		backend: opts.Backend,
		schemas: opts.Schemas,
		store:   opts.Store,
		log:     opts.Logger,
		active:  make(map[string]*runState),
	}
	_, e.fixedSchemas = opts.Schemas.(FixedSchemaSource)
	if e.store == nil {
		e.store = NewMemoryStore(0)
	}
	if e.log == nil {
		e.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	e.clock = opts.Clock
	e.tracer = opts.Tracer
	if e.clock == nil {
		e.clock = SystemClock{}
	}
	e.queryBytes = opts.MaxResultBytes
	e.iterationLimit = opts.MaxIterations
	if e.iterationLimit <= 0 {
		e.iterationLimit = ir.DefaultIterationLimit
	}
	wfs, err := e.prepare(plan)
	if err != nil {
		return nil, err
	}
	e.plan, e.wfs = plan, wfs
	return e, nil
}

// prepare parses the templates of every workflow of plan and links the
// workflow steps to their callees.
func (e *Engine) prepare(plan *ir.Plan) (map[string]*workflowPlan, error) {
	funcs := templateFuncsWith(e.queryBytes)
	wfs := make(map[string]*workflowPlan, len(plan.Workflows))
	for _, wf := range plan.Workflows {
		if wf == nil {
			return nil, errors.New("runtime: plan holds a null workflow")
		}
		if _, dup := wfs[wf.Name]; dup {
			return nil, fmt.Errorf("runtime: workflow %q is defined twice", wf.Name)
		}
		wp, err := e.prepareOne(wf, funcs)
		if err != nil {
			return nil, err
		}
		wfs[wf.Name] = wp
	}
	if err := linkCallees(plan.Workflows, wfs); err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	return wfs, nil
}

func (e *Engine) prepareOne(wf *ir.Workflow, funcs template.FuncMap) (*workflowPlan, error) {
	if err := checkIterationLimit(wf, e.iterationLimit); err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	wp, err := prepareWorkflow(wf, funcs)
	if err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	return wp, nil
}

// SetWorkflows replaces the engine's workflows with those of plan, as New
// would prepare them; on an error the engine keeps the ones it had. Runs
// in flight go on with the workflow they started with; a workflow step
// started later runs the callee of the new set.
func (e *Engine) SetWorkflows(plan *ir.Plan) error {
	if plan == nil {
		return errors.New("runtime: nil plan")
	}
	wfs, err := e.prepare(plan)
	if err != nil {
		return err
	}
	e.wmu.Lock()
	e.plan, e.wfs = plan, wfs
	e.wmu.Unlock()
	return nil
}

// Workflows returns the plan's workflows in plan order.
func (e *Engine) Workflows() []*ir.Workflow {
	e.wmu.RLock()
	defer e.wmu.RUnlock()
	return e.plan.Workflows
}

// Workflow returns the named workflow of the plan.
func (e *Engine) Workflow(name string) (*ir.Workflow, bool) {
	wp, ok := e.lookup(name)
	if !ok {
		return nil, false
	}
	return wp.wf, true
}

func (e *Engine) lookup(name string) (*workflowPlan, bool) {
	e.wmu.RLock()
	defer e.wmu.RUnlock()
	wp, ok := e.wfs[name]
	return wp, ok
}

// Store returns the store that keeps the engine's runs.
func (e *Engine) Store() Store { return e.store }

// ErrUnknownWorkflow is returned (wrapped) by Run for a name the plan
// does not define.
var ErrUnknownWorkflow = errors.New("unknown workflow")

// Run validates params against the workflow's input schema (applying
// defaults) and executes the workflow to the end. It returns the final run
// record (read-only: with a MemoryStore it is the store's own); a
// workflow failure is Run.Status failed with Run.Error set, not a Go
// error. The error is non-nil only when the run could not start: an
// unknown workflow or invalid parameters (*InputError).
func (e *Engine) Run(ctx context.Context, workflow string, params map[string]any, opts RunOptions) (*Run, error) {
	if opts.Draft != nil {
		if opts.Draft.Name != workflow {
			return nil, fmt.Errorf("runtime: the draft is workflow %q, not %q", opts.Draft.Name, workflow)
		}
		return e.runDraft(ctx, params, opts)
	}
	wp, ok := e.lookup(workflow)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownWorkflow, workflow)
	}
	return e.run(ctx, wp, params, opts)
}

// runDraft runs opts.Draft once without serving it (see RunOptions.Draft).
func (e *Engine) runDraft(ctx context.Context, params map[string]any, opts RunOptions) (*Run, error) {
	wf := opts.Draft
	wp, err := e.prepareOne(wf, templateFuncsWith(e.queryBytes))
	if err != nil {
		return nil, err
	}
	e.wmu.RLock()
	wfs := make(map[string]*workflowPlan, len(e.wfs)+1)
	for name, p := range e.wfs {
		wfs[name] = p
	}
	e.wmu.RUnlock()
	wfs[wf.Name] = wp
	if err := linkCallees([]*ir.Workflow{wf}, wfs); err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	return e.run(ctx, wp, params, opts)
}

// run is Run once the workflow is known.
func (e *Engine) run(ctx context.Context, wp *workflowPlan, params map[string]any, opts RunOptions) (*Run, error) {
	workflow := wp.wf.Name
	params, err := wp.checkParams(params)
	if err != nil {
		return nil, err
	}
	if e.backend == nil && needsBackend(wp) {
		return nil, fmt.Errorf("workflow %q calls backend tools but the engine has no backend", workflow)
	}
	id := opts.EnsureRunID()
	r := newRunState(ctx, e, wp, id, params, opts)
	return e.drive(ctx, r, false, nil)
}

// drive lists r among the active runs, records it (CreateRun, unless
// resumed), runs it with the local driver and releases its state.
// resumed holds the record a resumed run continues.
func (e *Engine) drive(ctx context.Context, r *runState, resume bool, rec *Run) (*Run, error) {
	id := r.run.ID
	e.mu.Lock()
	if _, dup := e.active[id]; dup {
		e.mu.Unlock()
		r.cancel(nil)
		r.release()
		return nil, fmt.Errorf("run id %q is already running", id)
	}
	e.active[id] = r
	e.mu.Unlock()
	// The run's state goes back to a pool once it has ended, so it must
	// first leave the active runs (Cancel holds mu while it stops a run).
	ended := false
	unlist := func() {
		e.mu.Lock()
		delete(e.active, id)
		e.mu.Unlock()
		ended = true
	}
	defer func() {
		if !ended { // a panic
			unlist()
		}
	}()
	var err error
	ms, mem := e.store.(*MemoryStore)
	switch {
	case mem && !resume:
		// The store's record is the run's own: the machine writes it
		// while sched is held, and the store's readers copy it under
		// sched (scheduler.go putStep, Machine.finish).
		r.memStore, r.memShared = ms, true
		err = ms.createShared(r.run, r.sched)
	case !resume:
		err = e.store.CreateRun(ctx, r.run)
	default:
		if _, gerr := e.store.GetRun(ctx, id); errors.Is(gerr, ErrRunNotFound) {
			err = e.store.CreateRun(ctx, rec)
		}
		if mem && err == nil {
			r.memStore = ms
			r.memRecord, err = ms.record(id)
		}
	}
	if err != nil {
		unlist()
		r.cancel(nil)
		r.release()
		return nil, fmt.Errorf("run %q cannot be recorded: %w", id, err)
	}
	start := func() []Action { return r.Machine.Start(r.run.StartedAt) }
	if resume {
		start = func() []Action { return r.Machine.resume(rec, time.Now()) }
	}
	r.execute(start)
	run := r.run
	unlist()
	r.release()
	return run, nil
}

// Resume continues a stored run that was running when vmcp stopped,
// under the same id. Its finished steps (completed, failed, skipped) are
// replayed from the record and never run again; a step recorded running
// (which a step is once its first backend call has its slot, see
// dispatch.go) is started again only when that is safe: it is idempotent (idempotent:
// true, or the backend tool's idempotentHint or readOnlyHint; a loop or
// workflow step when every call it makes is), or it is an elicitation,
// which is asked again. Otherwise that step fails with an error naming it
// and the run ends interrupted. Steps recorded pending start as they
// would have. The workflow timeout still counts from the run's start.
// A traced run's span continues the record's trace (SpanStart.Resumed*).
// run.Params must hold the run's parameters. The result and error are as
// Run's; an error means the run could not resume (unknown workflow, a
// plan that changed, a run that is not running) and nothing was called.
func (e *Engine) Resume(ctx context.Context, run *Run, opts RunOptions) (*Run, error) {
	if run == nil {
		return nil, errors.New("resume: no run")
	}
	if run.Status != RunRunning {
		return nil, fmt.Errorf("run %q is %s: only a running run resumes", run.ID, run.Status)
	}
	wp, params, err := e.prepareRun(run.Workflow, run.Params)
	if err != nil {
		return nil, fmt.Errorf("run %q cannot resume: %w", run.ID, err)
	}
	if err := wp.matchRecord(run); err != nil {
		return nil, err
	}
	if e.backend == nil && needsBackend(wp) {
		return nil, fmt.Errorf("workflow %q calls backend tools but the engine has no backend", run.Workflow)
	}
	if opts.ParentID == "" {
		opts.ParentID, opts.ParentStep = run.ParentID, run.ParentStep
	}
	if opts.Owner == "" {
		opts.Owner = run.Owner
	}
	opts.resumed = resumedTrace{run.TraceID, run.SpanID}
	r := newRunState(ctx, e, wp, run.ID, params, opts)
	r.run.StartedAt = run.StartedAt
	if wp.timeout > 0 {
		r.ctxDeadline = run.StartedAt.Add(wp.timeout)
	}
	return e.drive(ctx, r, true, run)
}

func needsBackend(wp *workflowPlan) bool {
	for _, sp := range wp.steps {
		if sp.kind == ir.StepTool || sp.kind == ir.StepForEach {
			return true
		}
	}
	return false
}

// Status returns a copy of a run's record, running or finished.
func (e *Engine) Status(ctx context.Context, id string) (*Run, error) {
	return e.store.GetRun(ctx, id)
}

// Cancel stops a running run: backend calls in flight are cancelled and the
// run ends with status cancelled. It returns ErrRunNotFound for an unknown
// id; cancelling a finished run is not an error. An unfinished run that
// this engine does not run is cancelled through a RemoteCanceller store.
func (e *Engine) Cancel(ctx context.Context, id string) error {
	e.mu.Lock()
	r, ok := e.active[id]
	if ok {
		r.stop(errRunCancelled) // under mu: r is not reused while listed
	}
	e.mu.Unlock()
	if ok {
		return nil
	}
	run, err := e.store.GetRun(ctx, id)
	if err != nil {
		return err
	}
	// Another process on a shared store (a replica) runs it: ask it.
	if rc, ok := e.store.(RemoteCanceller); ok && !run.Status.Finished() {
		return rc.RequestCancel(ctx, id)
	}
	return nil
}

// InputError reports parameters that do not match the workflow's input
// schema. It names the parameter and the rule, never the value.
type InputError struct {
	Workflow string
	Problems []string
}

func (e *InputError) Error() string {
	msg := "invalid arguments for " + e.Workflow + ":"
	for _, p := range e.Problems {
		msg += " " + p + ";"
	}
	return msg[:len(msg)-1]
}
