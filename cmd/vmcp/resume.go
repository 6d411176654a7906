package main

// Resume on start: `vmcp run` with state.store: sqlite goes on with the
// runs the previous process left running (it crashed, was killed or lost
// its machine).
//
// The store opens with sqlite.Options.KeepUnfinished, so those runs are
// still `running` in the file, listed oldest first. Once the backends are
// connected and the engine is built, resumeRuns decides each one:
//
//   - A child run (a workflow step's) is not resumed on its own: its
//     parent's workflow step decides, so it ends interrupted saying so.
//   - A run whose stored record cannot be read (a column that does not
//     hold valid JSON: sqlite.Store.Unreadable) ends interrupted naming
//     the column, never its content.
//   - A run whose workflow is no longer served, or whose workflow changed
//     since the run started (ir.Digest of the served workflow differs from
//     the one recorded when the run started; moving the workflow in its
//     file does not count), ends interrupted with an error saying why. So
//     does a run recorded before the store kept what a resume needs (no
//     digest), and one with a step whose output the store truncated
//     (state.maxOutputBytes): the steps after it could not read it.
//   - Every other run is handed to runtime.Engine.Resume, in the
//     background, under the same run id, through the run tracker (so a
//     graceful shutdown waits for it and cancels it like any run). Resume
//     replays the finished steps without calling them, calls a step that
//     was in flight again only when it is idempotent (otherwise the run
//     ends interrupted naming the step), and asks a waiting elicitation
//     again: the run is adopted as a live MCP task under its id, so the
//     question shows as input_required to task clients (tasks/get, answered
//     by tasks/update or on tasks/result). vmcp logs one line per resumed
//     run, and one when it ends.
//
// With state.store: postgres the database is shared by several replicas,
// and "the previous process" is any replica that stopped: its runs keep a
// lease it no longer renews (store/postgres/lease.go). Every vmcp run
// claims the runs whose lease expired, at start and then every second
// (or third of the lease) until it drains (takeOver), and decides each as
// above; a run is claimed by exactly one replica, so exactly one resumes
// it.
//
// Clients see the same run id throughout: `vmcp runs show ID`, the run API
// and tasks/get on the old task id show the run going on and finishing.
// `vmcp call` leaves unfinished runs for the next `vmcp run`; the memory
// store has nothing to resume.

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/telemetry/observe"
)

// unfinishedStore is what resuming needs from the store beyond
// runtime.Store (*sqlite.Store has it).
type unfinishedStore interface {
	GetRun(ctx context.Context, id string) (*runtime.Run, error)
	Interrupt(ctx context.Context, id, reason string) (bool, error)
	TruncatedSteps(ctx context.Context, id string) ([]string, error)
	Unreadable(ctx context.Context, id string) ([]string, error)
}

// claimer takes over the runs of stopped replicas (*postgres.Store).
type claimer interface {
	Claim(ctx context.Context) ([]string, error)
	LeaseTTL() time.Duration
}

// takeOver claims the runs whose lease expired, now and then every third
// of the lease or every second, whichever comes first (a released run,
// of a replica that drained, has no lease to wait out), and resumes them,
// until stop ends (the drain).
func (rs *resumeSet) takeOver(stop, ctx context.Context, c claimer) {
	t := time.NewTicker(max(min(c.LeaseTTL()/3, time.Second), time.Millisecond))
	defer t.Stop()
	for {
		ids, err := c.Claim(stop)
		if err != nil && stop.Err() == nil {
			rs.log.Warn("claiming the runs of stopped replicas failed", "err", err)
		}
		if len(ids) > 0 {
			rs.log.Info("resuming runs of a stopped replica", "count", len(ids))
			rs.resumeRuns(ctx, ids)
		}
		select {
		case <-stop.Done():
			return
		case <-t.C:
		}
	}
}

// resumeEngine is what resuming needs from the engine.
type resumeEngine interface {
	Workflow(name string) (*ir.Workflow, bool)
}

// runResumer is runtime.Engine.Resume: a stored run goes on under its id.
type runResumer interface {
	Resume(ctx context.Context, run *runtime.Run, opts runtime.RunOptions) (*runtime.Run, error)
}

// resumeSet is one start-up's resume: the runs to decide and where the
// resumed ones report.
type resumeSet struct {
	store   unfinishedStore
	engine  resumeEngine
	runs    *runTracker
	log     *slog.Logger
	onEvent func(runtime.Event) // metrics and run logs, as for new runs
	// adopt, when set, runs a resumed run as a live MCP task under its id
	// (server.Server.AdoptRun), so that an elicitation it asks again
	// reaches task clients as input_required; nil runs it without one.
	adopt func(ctx context.Context, id, workflow string, run func(context.Context, runtime.Elicitor) (*runtime.Run, error)) (*runtime.Run, error)
	// digests caches ir.Digest per served workflow.
	digests map[string]string
}

// resumeRuns decides every run in ids (see the top of this file) and
// returns once each is either interrupted or resuming in the background;
// the returned channel is closed when every resumed run has ended.
func (rs *resumeSet) resumeRuns(ctx context.Context, ids []string) <-chan struct{} {
	done := make(chan struct{})
	var resuming []func()
	for _, id := range ids {
		if start := rs.decide(ctx, id); start != nil {
			resuming = append(resuming, start)
		}
	}
	if len(resuming) == 0 {
		close(done)
		return done
	}
	ended := make(chan struct{}, len(resuming))
	for _, start := range resuming {
		go func() {
			defer func() { ended <- struct{}{} }()
			start()
		}()
	}
	go func() {
		for range resuming {
			<-ended
		}
		close(done)
	}()
	return done
}

// decide reads run id and either interrupts it (returning nil) or returns
// the function that resumes it.
func (rs *resumeSet) decide(ctx context.Context, id string) func() {
	run, err := rs.store.GetRun(ctx, id)
	if err != nil {
		// The error may quote the row: it goes to the log, not the run.
		rs.log.Error("cannot read a run left unfinished; it ends interrupted", "run_id", id, "err", err)
		rs.interrupt(ctx, id, "its stored record cannot be read (vmcp's log has the error)")
		return nil
	}
	reason := rs.cannotResume(ctx, run)
	if reason == "" {
		if _, ok := rs.engine.(runResumer); !ok {
			reason = "this vmcp build has no run resume"
		}
	}
	if reason != "" {
		rs.interrupt(ctx, id, reason)
		return nil
	}
	finished, inFlight := stepCounts(run)
	rs.log.Info("resuming run left unfinished by the previous stop", "run_id", id, "workflow", run.Workflow,
		"finished_steps", finished, "in_flight", strings.Join(inFlight, ","), "total_steps", len(run.Steps))
	return func() { rs.resume(ctx, run) }
}

// cannotResume says why run cannot resume, or "" when it can.
func (rs *resumeSet) cannotResume(ctx context.Context, run *runtime.Run) string {
	if run.ParentID != "" {
		return fmt.Sprintf("it is the child run of step %q of run %s, and a child run is not resumed on its own (its parent's workflow step decides)",
			run.ParentStep, run.ParentID)
	}
	bad, err := rs.store.Unreadable(ctx, run.ID)
	if err != nil {
		return fmt.Sprintf("its record cannot be read: %v", err)
	}
	if len(bad) > 0 {
		return "its stored record cannot be read: " + strings.Join(bad, "; ")
	}
	wf, ok := rs.engine.Workflow(run.Workflow)
	if !ok {
		return fmt.Sprintf("the workflow %q is no longer served", run.Workflow)
	}
	if run.PlanDigest == "" {
		return "it was recorded by a vmcp that did not keep what a resume needs"
	}
	if run.PlanDigest != rs.digest(wf) {
		return fmt.Sprintf("the workflow %q changed since the run started; its finished steps are kept above", run.Workflow)
	}
	cut, err := rs.store.TruncatedSteps(ctx, run.ID)
	if err != nil {
		return fmt.Sprintf("its record cannot be read: %v", err)
	}
	if len(cut) > 0 {
		return fmt.Sprintf("the store truncated the recorded output of step %q (state.maxOutputBytes), so the steps after it cannot read it", cut[0])
	}
	return ""
}

func (rs *resumeSet) digest(wf *ir.Workflow) string {
	if d, ok := rs.digests[wf.Name]; ok {
		return d
	}
	if rs.digests == nil {
		rs.digests = map[string]string{}
	}
	d := ir.Digest(wf)
	rs.digests[wf.Name] = d
	return d
}

func (rs *resumeSet) interrupt(ctx context.Context, id, reason string) {
	if _, err := rs.store.Interrupt(ctx, id, reason); err != nil {
		rs.log.Error("cannot mark a run interrupted", "run_id", id, "reason", reason, "err", err)
	}
}

// resume runs Engine.Resume under the tracker and logs how the run ended.
// A run that Resume refuses outright ends interrupted with its error.
func (rs *resumeSet) resume(ctx context.Context, run *runtime.Run) {
	res := rs.engine.(runResumer)
	opts := runtime.RunOptions{RunID: run.ID, OnEvent: rs.onEvent}
	got, err := rs.runs.track(ctx, func(ctx context.Context) (*runtime.Run, error) {
		if rs.adopt == nil {
			return res.Resume(ctx, run, opts)
		}
		return rs.adopt(ctx, run.ID, run.Workflow, func(ctx context.Context, el runtime.Elicitor) (*runtime.Run, error) {
			o := opts
			o.Elicitor = el
			return res.Resume(ctx, run, o)
		})
	})
	if err != nil {
		rs.log.Warn("resumed run could not go on", "run_id", run.ID, "err", err)
		rs.interrupt(context.WithoutCancel(ctx), run.ID, err.Error())
		return
	}
	attrs := []any{"run_id", got.ID, "workflow", got.Workflow, "status", string(got.Status)}
	if got.Error != nil {
		attrs = append(attrs, "error", got.Error.Msg)
	}
	rs.log.Info("resumed run ended", attrs...)
}

// stepCounts returns how many steps of run have finished and the ids of
// those that were in flight.
func stepCounts(run *runtime.Run) (finished int, inFlight []string) {
	for _, st := range run.Steps {
		switch st.Status {
		case runtime.StepCompleted, runtime.StepFailed, runtime.StepSkipped:
			finished++
		case runtime.StepRunning:
			inFlight = append(inFlight, st.ID)
		}
	}
	return finished, inFlight
}

// catalogHints is the tool catalog the engine was built with as its
// SchemaSource, answering runtime.ToolHintSource too: a step whose backend
// tool declares idempotentHint or readOnlyHint may be called again when a
// resumed run finds it in flight. The engine asks for a tool's schema on
// every call, so the catalog (a snapshot nothing changes) is indexed by
// backend and tool once: catalog.Tool scans a backend's tools, which for a
// backend of 100 tools cost more than the engine's own work per call.
type catalogHints struct {
	tools map[[2]string]*catalog.Tool
}

func newCatalogHints(cat *catalog.Catalog) catalogHints {
	h := catalogHints{tools: map[[2]string]*catalog.Tool{}}
	if cat == nil {
		return h
	}
	for name, b := range cat.Backends {
		for _, t := range b.Tools {
			if _, dup := h.tools[[2]string{name, t.Name}]; !dup { // catalog.Tool's answer: the first
				h.tools[[2]string{name, t.Name}] = t
			}
		}
	}
	return h
}

// Tool returns the named tool of a backend and whether both exist.
func (c catalogHints) Tool(backend, tool string) (*catalog.Tool, bool) {
	t, ok := c.tools[[2]string{backend, tool}]
	return t, ok
}

// SchemasFixed marks the hints as a runtime.FixedSchemaSource: the
// catalog snapshot never changes, so the engine asks once per tool step.
func (catalogHints) SchemasFixed() {}

var _ runtime.FixedSchemaSource = catalogHints{}

// InputSchema implements runtime.SchemaSource.
func (c catalogHints) InputSchema(backend, tool string) (map[string]any, bool) {
	t, ok := c.Tool(backend, tool)
	if !ok || t.InputSchema == nil {
		return nil, false
	}
	return t.InputSchema, true
}

func (c catalogHints) ToolHints(backend, tool string) (runtime.ToolHints, bool) {
	t, ok := c.Tool(backend, tool)
	if !ok || t.Annotations == nil {
		return runtime.ToolHints{}, false
	}
	a := t.Annotations
	return runtime.ToolHints{
		ReadOnly:   a.ReadOnlyHint != nil && *a.ReadOnlyHint,
		Idempotent: a.IdempotentHint != nil && *a.IdempotentHint,
	}, true
}

// newResumeSet builds the resume of one `vmcp run` start from the ops'
// store and the engine; nil when the store has nothing to resume.
func (o *ops) newResumeSet(eng resumeEngine, runs *runTracker) (*resumeSet, []string) {
	if o.unfinished == nil || (len(o.unfinishedIDs) == 0 && o.claimer == nil) {
		return nil, nil
	}
	return &resumeSet{
		store: o.unfinished, engine: eng, runs: runs, log: o.log,
		onEvent: observe.Tee(o.metrics.Observe, observe.Logger(o.log)),
	}, o.unfinishedIDs
}
