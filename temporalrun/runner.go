package temporalrun

// The vmcp run side of the Temporal executor. Runner implements what the
// MCP server, the HTTP API and the run tools need from an engine (Run,
// Workflows, Status, Cancel), and performs each run as a Temporal workflow
// on the configured task queue:
//
//  1. The run is recorded in vmcp's run store first (status running, every
//     step pending), so a Tasks client gets its task id only once the run
//     exists, exactly as with the local executor.
//  2. The workflow is started with the run id as its workflow id and the
//     compiled plan in its input.
//  3. The runner follows it: it long-polls the workflow's history, and
//     after each workflow task it asks the workflow for its state (the run
//     query). The steps that changed are written to the store and become
//     the same events the local engine emits (progress notifications,
//     metrics, run logs). A question the workflow waits on is put to the
//     caller's Elicitor, and the answer goes back as a Temporal update.
//  4. The workflow's result, the final run, is written to the store and
//     returned.
//
// Cancelling the caller's context cancels the Temporal workflow (the
// workflow then cancels its backend calls, runs its finally steps and ends
// cancelled) unless the runner was detached first (vmcp run shutting
// down): a detached runner leaves its runs going on Temporal, and the next
// vmcp run picks them up again (Reattach).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// RunnerOptions configure a Runner.
type RunnerOptions struct {
	// Client is connected to the Temporal frontend and namespace.
	Client client.Client
	// TaskQueue is the queue the workers poll.
	TaskQueue string
	// Plan is the compiled plan (SetWorkflows replaces it). Tools are the
	// backend tools its workflows may call: the live catalog, or only the
	// part the plan calls. Each run's input carries the part of Tools that
	// its plan calls (PlanTools): their schemas and annotations.
	Plan  *ir.Plan
	Tools *catalog.Catalog
	// Store records the runs (vmcp's run store, shared with the API).
	Store runtime.Store
	// HeartbeatTimeout bounds a worker's silence in a backend call
	// (default DefaultHeartbeatTimeout).
	HeartbeatTimeout time.Duration
	// MaxIterations is limits.maxIterations.
	MaxIterations int
	// MaxResultBytes is limits.maxResultBytes: it bounds each query.
	MaxResultBytes int
	// Questions, when set, makes the questions of the runs this runner
	// follows without a caller (picked up again, or fired by a Temporal
	// Schedule) answerable from the console.
	Questions *runtime.Questions
	Logger    *slog.Logger
	// Tracer, when set, makes each run's span (vmcp.run) on this side;
	// the client's Temporal tracing interceptor (telemetry/trace) carries
	// it to the workers, whose workflow and activity spans are its
	// children (trace.go).
	Tracer runtime.Tracer
}

// Runner runs workflows on Temporal (see the top of the file).
type Runner struct {
	opts     RunnerOptions
	log      *slog.Logger
	detached atomic.Bool

	// served is the plan the runner serves now; SetWorkflows swaps it
	// whole (authored workflows come and go while vmcp runs).
	wmu    sync.RWMutex
	served servedPlan

	mu        sync.Mutex
	following map[string]bool // run ids followed by this process

	sched schedules // vmcp.yaml's schedules as Temporal Schedules (schedules.go)
}

// NewRunner checks the options and returns a Runner.
func NewRunner(opts RunnerOptions) (*Runner, error) {
	if opts.Client == nil || opts.Plan == nil || opts.Store == nil {
		return nil, errors.New("temporalrun: NewRunner needs a client, a plan and a store")
	}
	if opts.TaskQueue == "" {
		return nil, errors.New("temporalrun: NewRunner needs a task queue")
	}
	if opts.HeartbeatTimeout <= 0 {
		opts.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Runner{opts: opts, log: opts.Logger, following: map[string]bool{}}
	if err := r.SetWorkflows(opts.Plan); err != nil {
		return nil, err
	}
	return r, nil
}

// servedPlan is a plan with what the runner derives from it.
type servedPlan struct {
	plan  *ir.Plan
	tools *catalog.Catalog // the part of RunnerOptions.Tools the plan calls
	wfs   map[string]*ir.Workflow
	check *runtime.Engine // validates arguments before a run is recorded
}

// newServedPlan prepares plan (templates parsed, callees linked) to be
// served or run once.
func (r *Runner) newServedPlan(plan *ir.Plan) (servedPlan, error) {
	sp := servedPlan{plan: plan, tools: PlanTools(plan, r.opts.Tools), wfs: map[string]*ir.Workflow{}}
	for _, wf := range plan.Workflows {
		sp.wfs[wf.Name] = wf
	}
	check, err := runtime.New(plan, engineOptions(sp.tools, r.opts.MaxIterations, r.opts.MaxResultBytes, nil))
	if err != nil {
		return servedPlan{}, fmt.Errorf("temporalrun: %w", err)
	}
	sp.check = check
	return sp, nil
}

// SetWorkflows replaces the served plan (the workflows from files and the
// authored ones, as authoring.Service publishes them). Runs in flight keep
// the plan they started with: it is their Temporal input.
func (r *Runner) SetWorkflows(plan *ir.Plan) error {
	if plan == nil {
		return errors.New("temporalrun: nil plan")
	}
	sp, err := r.newServedPlan(plan)
	if err != nil {
		return err
	}
	r.wmu.Lock()
	first := r.served.plan == nil
	r.served = sp
	r.wmu.Unlock()
	if !first {
		r.reconcileAgain() // the Schedules carry the plan (schedules.go)
	}
	return nil
}

func (r *Runner) current() servedPlan {
	r.wmu.RLock()
	defer r.wmu.RUnlock()
	return r.served
}

// Workflows are the served plan's workflows.
func (r *Runner) Workflows() []*ir.Workflow { return r.current().plan.Workflows }

// Workflow returns the served plan's workflow of that name.
func (r *Runner) Workflow(name string) (*ir.Workflow, bool) {
	wf, ok := r.current().wfs[name]
	return wf, ok
}

// planFor is the plan a run of workflow starts with: the served one, or
// for a draft (opts.Draft) the served workflows with the draft in place
// of any served workflow of its name.
func (r *Runner) planFor(workflow string, opts runtime.RunOptions) (servedPlan, *ir.Workflow, error) {
	sp := r.current()
	if opts.Draft == nil {
		wf, ok := sp.wfs[workflow]
		if !ok {
			return servedPlan{}, nil, fmt.Errorf("%w %q", runtime.ErrUnknownWorkflow, workflow)
		}
		return sp, wf, nil
	}
	if opts.Draft.Name != workflow {
		return servedPlan{}, nil, fmt.Errorf("temporalrun: the draft is workflow %q, not %q", opts.Draft.Name, workflow)
	}
	plan := &ir.Plan{Version: sp.plan.Version, Workflows: []*ir.Workflow{opts.Draft}}
	for _, wf := range sp.plan.Workflows {
		if wf.Name != workflow {
			plan.Workflows = append(plan.Workflows, wf)
		}
	}
	dp, err := r.newServedPlan(plan)
	return dp, opts.Draft, err
}

// Detach makes cancelled callers leave their runs going on Temporal
// instead of cancelling them (vmcp run calls it when it shuts down).
func (r *Runner) Detach() { r.detached.Store(true) }

// ErrDetached is the error of a run whose caller went away while the
// runner was detached: the run goes on, on Temporal.
var ErrDetached = errors.New("vmcp stopped following this run; it goes on on Temporal, and the next vmcp run records its result")

// Run starts workflow as a Temporal workflow and follows it to its end.
func (r *Runner) Run(ctx context.Context, workflow string, params map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
	sp, wf, err := r.planFor(workflow, opts)
	if err != nil {
		return nil, err
	}
	// Bad arguments are refused before anything is recorded or started,
	// as the local engine refuses them.
	if err := sp.check.ValidateParams(workflow, params); err != nil {
		return nil, err
	}
	id := opts.EnsureRunID()
	run := initialRun(wf, id, opts, time.Now())
	ctx, span := r.startSpan(ctx, run)
	if err := r.opts.Store.CreateRun(ctx, run); err != nil {
		endSpan(span, nil, err)
		return nil, fmt.Errorf("run %q cannot be recorded: %w", id, err)
	}
	in := Input{
		Plan: sp.plan, Tools: sp.tools, Workflow: workflow, Params: params, RunID: id,
		ParentID: opts.ParentID, ParentStep: opts.ParentStep, Draft: opts.Draft != nil,
		HeartbeatTimeout: r.opts.HeartbeatTimeout, MaxIterations: r.opts.MaxIterations, MaxResultBytes: r.opts.MaxResultBytes,
		Elicit: opts.Elicitor != nil, Owner: opts.Owner, Trigger: opts.Trigger,
	}
	_, err = r.opts.Client.ExecuteWorkflow(context.WithoutCancel(ctx), client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                r.opts.TaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
	}, WorkflowName, in)
	if err != nil {
		r.finishLocally(run, fmt.Sprintf("starting the run on Temporal failed: %v", err))
		endSpan(span, run, nil)
		return nil, fmt.Errorf("run %q: starting it on Temporal (task queue %q): %w", id, r.opts.TaskQueue, err)
	}
	emit(opts.OnEvent, runtime.Event{Kind: runtime.EventRunStarted, RunID: id, Workflow: workflow, Time: run.StartedAt, Status: runtime.RunRunning, Total: len(run.Steps), TraceID: run.TraceID, SpanID: run.SpanID})
	final, err := r.follow(ctx, id, run, opts)
	endSpan(span, final, err)
	return final, err
}

// initialRun is the store's first record of a run: running, every step
// pending, as the local engine records it.
func initialRun(wf *ir.Workflow, id string, opts runtime.RunOptions, now time.Time) *runtime.Run {
	run := &runtime.Run{
		ID: id, Workflow: wf.Name, WorkflowVersion: wf.Version, Draft: opts.Draft != nil,
		ParentID: opts.ParentID, ParentStep: opts.ParentStep, Owner: opts.Owner,
		Status: runtime.RunRunning, StartedAt: now,
	}
	for _, s := range wf.Steps {
		run.Steps = append(run.Steps, runtime.StepState{ID: s.ID, Status: runtime.StepPending})
	}
	if len(wf.Finally) > 0 {
		run.FinallyFrom = len(wf.Steps)
		for _, s := range wf.Finally {
			run.Steps = append(run.Steps, runtime.StepState{ID: s.ID, Status: runtime.StepPending})
		}
	}
	return run
}

// finishLocally ends a run that never reached Temporal as failed.
func (r *Runner) finishLocally(run *runtime.Run, msg string) {
	run.Status = runtime.RunFailed
	run.EndedAt = time.Now()
	run.Error = &runtime.StepError{Msg: msg}
	if err := r.opts.Store.FinishRun(context.Background(), run); err != nil {
		r.log.Error("recording a run that failed to start", "run_id", run.ID, "err", err)
	}
}

// Status is the run as the store has it (the runner keeps it current while
// it follows the run).
func (r *Runner) Status(ctx context.Context, id string) (*runtime.Run, error) {
	return r.opts.Store.GetRun(ctx, id)
}

// Store is the run store the runner records runs in (MCP Tasks read it).
func (r *Runner) Store() runtime.Store { return r.opts.Store }

// Cancel asks Temporal to cancel the run. The run then ends cancelled
// (after its finally steps) and its follower records that.
func (r *Runner) Cancel(ctx context.Context, id string) error {
	run, err := r.opts.Store.GetRun(ctx, id)
	if err != nil {
		return err
	}
	if run.Status.Finished() {
		return nil
	}
	err = r.opts.Client.CancelWorkflow(ctx, id, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil // already closed
	}
	return err
}

func emit(onEvent func(runtime.Event), ev runtime.Event) {
	if onEvent != nil {
		onEvent(ev)
	}
}

// result reads a finished workflow's result: the final run.
func (r *Runner) result(ctx context.Context, id string) (*runtime.Run, error) {
	var run runtime.Run
	err := r.opts.Client.GetWorkflow(ctx, id, "").Get(ctx, &run)
	if err == nil {
		return &run, nil
	}
	return nil, err
}

// ErrInputType is the Temporal error type of a run refused for its
// arguments; its details are the runtime.InputError.
const ErrInputType = "vmcp.InputError"

// inputError returns the arguments error a workflow failed with, if that
// is why it failed.
func inputError(err error) *runtime.InputError {
	var app *temporal.ApplicationError
	if !errors.As(err, &app) || app.Type() != ErrInputType {
		return nil
	}
	var in runtime.InputError
	if app.Details(&in) != nil {
		return nil
	}
	return &in
}

// applicationMessage unwraps a Temporal workflow failure to its message.
func applicationMessage(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	return err.Error()
}

// jsonClone deep-copies v through JSON (outputs come back from Temporal as
// JSON anyway).
func jsonClone[T any](v T) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err != nil {
		return out, err
	}
	err = json.Unmarshal(b, &out)
	return out, err
}
