package runtime

// The scheduler: a ready queue, not level barriers.
//
// Each step has a counter of unfinished dependencies, set from len(Deps).
// Steps whose counter is zero are in the ready queue, a binary heap ordered
// by priority, highest first, then by index. A step's priority is its
// remaining work: its weight (1 for a call; for a forEach, the waves its
// iterations take, ceil(items / maxParallel)) plus the heaviest priority
// among its dependents. A loop's weight is known once its collection can
// be evaluated; the rise then goes up to its pending ancestors only
// (priority.go explains the rule and the update). There is no coordinator
// goroutine: the scheduling state (the Run record, the counters, the
// queue) is guarded by one mutex, and whichever goroutine finishes a step
// records it and starts what follows:
//
//	run(step):
//	    execute the step (templates, backend call) without the lock
//	    lock
//	    record the result, publish the step's entry in the template data,
//	        decrement the counter of each dependent, push those at zero,
//	        weigh the loops whose collection it was the last read of
//	    while fewer than maxParallel steps run and the queue is not empty:
//	        pop the step with the most remaining work and start it:
//	        the first one on this goroutine, the others on idle workers
//	    unlock
//	    continue with this goroutine's step, or wait for the next job
//
// The caller of Run starts the roots the same way and runs the first
// itself. So a step starts as soon as its own dependencies are done and a
// slot is free, never waiting for unrelated steps of the same level, and
// the goroutine that finished the last dependency of a step runs it: a
// chain runs on one goroutine, and a fan-in costs no hand-off. Conditions
// are evaluated when a step is popped: a skipped step takes no slot and no
// goroutine. Workers belong to the run (at most maxParallel, reused from
// step to step); once no step runs and none can start, the caller of Run
// is woken if it is waiting, ends the workers and waits for them, so no
// goroutine outlives Run.
//
// Template data. The root map (params, vars, steps, workflow) is built once
// per run. .steps is one map holding one entry per step, created at the
// start with a shared "pending" entry; when a step starts or finishes, the
// goroutine recording it replaces its entry (a new small map {output,
// content, status, error})
// under the run's write lock. When every template is a plain field chain
// into an entry, .steps is a stepView instead: a slice of entry structs
// made once per run and overwritten in place, which reads the same. Step goroutines evaluate templates under the
// read lock, so the cost of a step's template data does not depend on how
// many steps came before it, and reads never race with the writes, which
// hold the scheduling mutex too; a goroutine holding that mutex reads
// without the read lock. .workflow (id, duration_ms, step_count, status,
// start_time) is replaced by a fresh map whenever steps are about to start
// and before the result is built, only in workflows that read it
// (workflowPlan.readsWorkflow), so those values are current when a
// template reads them.
//
// Stopping. A failure whose action is abort records the first error and
// stops the run (cause errRunAborted): the run's context and every step
// context end, running backend calls see it and report back, and nothing
// new starts. Cancel stops the run the same way with its own cause. The
// workflow timeout has no timer of its own: every step context ends at the
// workflow's deadline at the latest, and the first step (or launch) to see
// that deadline pass stops the run with errWorkflowTimeout. The cause
// decides the final status (failed, cancelled, timed_out). skip_remaining
// stops new starts without cancelling: running steps finish, and every
// step that never started is marked skipped.
//
// Finally steps. They follow the top-level steps in workflowPlan.steps and
// are not roots, so the loop above never reaches them. Once it is over,
// the outcome is decided (decideOutcome), and when the workflow has
// finally steps the loop runs again over them alone, on a context of their
// own (finally.go); then the run is recorded with that outcome.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

var (
	errRunCancelled    = errors.New("run cancelled")
	errRunAborted      = errors.New("run aborted after a step failed")
	errWorkflowTimeout = errors.New("workflow timed out")
)

// Shared .steps entries for steps that have not finished. Never modified.
var (
	pendingEntry = map[string]any{"status": string(StepPending), "output": nil, "content": noContent, "error": ""}
	runningEntry = map[string]any{"status": string(StepRunning), "output": nil, "content": noContent, "error": ""}
)

// stepView is .steps in a workflow whose templates are all field chains
// that read inside a step's entry (workflowPlan.chainsOnly): one slice of
// entries per run, updated in place under the run's lock, instead of a map
// of step ids to three-key maps. Only resolveChain reads it, exactly as it
// would read the map {<id>: {output, status, error}}; no template can yield
// the view or an entry as a value (resolveChain turns an entry into that
// map if it ever would).
type stepView struct {
	byID    map[string]*stepPlan
	entries []stepEntry
}

type stepEntry struct {
	output  any
	content any // map[string]any, never nil once set
	status  any
	err     any // the error message, a string
}

func (e *stepEntry) field(name string) (any, bool) {
	switch name {
	case "output":
		return e.output, true
	case "content":
		return e.content, true
	case "status":
		return e.status, true
	case "error":
		return e.err, true
	}
	return nil, false
}

func (e *stepEntry) asMap() map[string]any {
	return map[string]any{"output": e.output, "content": e.content, "status": e.status, "error": e.err}
}

// Boxed once: the status of a pending and of a running entry.
var (
	pendingValue any = string(StepPending)
	runningValue any = string(StepRunning)
	emptyString  any = ""
)

// setEntry replaces step i's .steps entry; a nil content is the empty
// content map. Called with sched held.
func (r *runState) setEntry(i int, output any, content map[string]any, status StepStatus, errMsg string) {
	if content == nil {
		content = noContent
	}
	if r.steps == nil {
		r.setView(r.wp.steps[i].id, map[string]any{"output": output, "content": content, "status": statusValue(status), "error": errMsg})
		return
	}
	var e any = emptyString
	if errMsg != "" {
		e = errMsg
	}
	r.mu.Lock()
	r.steps.entries[i] = stepEntry{output: output, content: content, status: statusValue(status), err: e}
	r.mu.Unlock()
}

// Step statuses as template values, boxed once.
var (
	completedValue any = string(StepCompleted)
	failedValue    any = string(StepFailed)
	skippedValue   any = string(StepSkipped)
)

func statusValue(s StepStatus) any {
	switch s {
	case StepCompleted:
		return completedValue
	case StepFailed:
		return failedValue
	case StepSkipped:
		return skippedValue
	case StepPending:
		return pendingValue
	case StepRunning:
		return runningValue
	}
	return string(s)
}

// stepMsg is a step's result (or retry notice), as recorded by handle.
type stepMsg struct {
	index         int
	retry         bool // a retry notice, not the step's end
	status        StepStatus
	output        any
	content       map[string]any // a tool step's content map
	err           *StepError
	attempts      int
	at            time.Time
	forceAbort    bool // an explicit abort action (elicitation) ignores failureMode
	skipRemaining bool
	note          string
}

type runState struct {
	e    *Engine
	wp   *workflowPlan
	opts RunOptions
	run  *Run
	// ctx ends when the run is stopped (cancel, abort, the workflow
	// timeout) or the caller's context ends; it has no deadline of its own.
	// Step contexts are made from parent, not ctx, and carry the workflow
	// deadline (see stepContext): stop ends them too.
	ctx      context.Context
	cancel   context.CancelCauseFunc
	parent   context.Context
	deadline time.Time // the end of the workflow timeout

	mu        sync.RWMutex   // guards view and steps
	view      map[string]any // .steps as maps, when steps is nil
	steps     *stepView      // .steps when the workflow is chainsOnly
	stepsView stepView       // what steps points to
	data      map[string]any // root template data; only view changes after start

	scratch *runScratch

	// Step workers (see startWorker): jobs hands steps to idle workers,
	// idle counts the workers waiting on it, workers tracks them all.
	// finished wakes the caller of loop when a worker ends the run.
	jobs     chan stepJob
	finished chan struct{}
	idle     int
	nworkers int
	workers  sync.WaitGroup

	// sched guards the scheduling state below and the Run record:
	// whichever goroutine records a step holds it. dlMu guards the shared
	// deadlines; stop takes it (and never sched), so it may be called from
	// anywhere, an event handler included.
	sched sync.Mutex
	dlMu  sync.Mutex

	pending       []int32
	ready         readyQueue
	loops         *loopState // the run's own priorities, when the workflow has watched loops
	running       int
	done          int
	completed     int       // steps that completed, for .workflow.step_count
	wfFixed       [3]any    // .workflow's id, name and start_time, boxed once
	outcome       RunStatus // the run's outcome once finally steps run, else ""
	stopped       bool      // start nothing new
	finalPhase    bool      // the finally steps run: stop has no effect (dlMu)
	interrupted   bool      // the run's context ended before every step finished
	skipRemaining bool
	firstErr      *StepError
	deadlines     []sharedDeadline
	spent         []context.CancelFunc

	// Store writes. storeCtx outlives cancellation so the final states
	// are recorded. With a store other than MemoryStore, step updates go
	// through updates to one writer goroutine; only finished steps wait
	// for their write (see storeStep), and FinishRun waits for the writer
	// to drain.
	storeCtx context.Context
	// With a MemoryStore, the store; the run's Steps are its record's.
	memStore   *MemoryStore
	updates    chan stepUpdate
	writerDone chan struct{}
	written    chan struct{} // acks of finished-step writes
}

// runScratch is a run's working memory that nothing refers to once the
// run has ended (its workers have exited and the result is built): the
// runState itself, the worker channels, the dependency counters, the ready
// heap, the shared deadlines, the stepView entries and the root data map. Runs of a workflow
// reuse them through workflowPlan.scratch.
type runScratch struct {
	state     runState
	jobs      chan stepJob
	finished  chan struct{}
	pending   []int32
	ready     []int
	deadlines []sharedDeadline
	entries   []stepEntry
	data      map[string]any // the root template data, for chains-only workflows
	loops     loopState
}

// release hands the run's state back once the run has ended and nothing
// can reach it any more (Engine.Run has removed it from the active runs).
// Everything the run referred to is dropped; r must not be used after.
func (r *runState) release() {
	sc, wp := r.scratch, r.wp
	clear(sc.entries) // drop the outputs
	clear(sc.data)
	sc.ready = r.ready.items[:0]
	clear(r.deadlines)
	sc.deadlines = r.deadlines[:0]
	*r = runState{}
	wp.scratch.Put(sc)
}

type stepUpdate struct {
	index int
	state StepState
	ack   chan struct{} // when set, signalled once the write returned
}

func newRunState(parent context.Context, e *Engine, wp *workflowPlan, id string, params map[string]any, opts RunOptions) *runState {
	n := len(wp.steps)
	sc, _ := wp.scratch.Get().(*runScratch)
	if sc == nil {
		sc = &runScratch{pending: make([]int32, n), ready: make([]int, 0, n), finished: make(chan struct{}, 1)}
		if wp.chainsOnly {
			sc.entries = make([]stepEntry, n)
		}
	}
	r := &sc.state
	*r = runState{
		e:         e,
		wp:        wp,
		opts:      opts,
		scratch:   sc,
		pending:   sc.pending,
		jobs:      sc.jobs,
		finished:  sc.finished,
		deadlines: sc.deadlines,
	}
	r.storeCtx = context.WithoutCancel(parent)
	r.parent = parent
	r.ctx, r.cancel = context.WithCancelCause(parent)
	r.run = &Run{
		ID:       id,
		Workflow: wp.wf.Name,
		ParentID: opts.ParentID,
		// The version and the draft mark of the workflow as it started.
		WorkflowVersion: wp.wf.Version,
		Draft:           opts.Draft != nil,
		ParentStep:      opts.ParentStep,
		Status:          RunRunning,
		StartedAt:       time.Now(),
		Steps:           make([]StepState, n),
	}
	if len(wp.finallyRoots) > 0 {
		r.run.FinallyFrom = wp.nmain
	}
	if wp.timeout > 0 {
		r.deadline = r.run.StartedAt.Add(wp.timeout)
	}
	copy(r.run.Steps, wp.pendingSteps)
	copy(r.pending, wp.pendingCounts)
	r.startPriorities(sc)
	r.ready.items = sc.ready[:0]
	for _, i := range wp.roots {
		r.ready.push(i)
	}
	var steps any
	if wp.chainsOnly {
		r.stepsView = stepView{byID: wp.byID, entries: sc.entries}
		r.steps = &r.stepsView
		for i := range r.steps.entries {
			r.steps.entries[i] = stepEntry{content: noContent, status: pendingValue, err: emptyString}
		}
		steps = r.steps
	} else {
		r.view = maps.Clone(wp.pendingView)
		steps = r.view
	}
	// The root map of a chains-only workflow is pooled: a chain starts at
	// one of its keys, so no template can return the map itself.
	if wp.chainsOnly {
		if sc.data == nil {
			sc.data = make(map[string]any, 4)
		}
		r.data = sc.data
	} else {
		r.data = make(map[string]any, 4)
	}
	r.data["params"] = params
	r.data["steps"] = steps
	// A chains-only workflow reads .vars and .workflow only if one of its
	// chains starts there; otherwise nothing can see them.
	if !wp.chainsOnly || wp.chainRoots["vars"] {
		r.data["vars"] = map[string]any{}
	}
	if wp.readsWorkflow {
		r.data["workflow"] = r.workflowInfo(workflowRunning, r.run.StartedAt)
	}
	return r
}

// The run's status as .workflow.status shows it while steps run.
const workflowRunning = "running"

// workflowStatus is .workflow.status: running, and the run's outcome once
// the finally steps run.
func (r *runState) workflowStatus() string {
	if r.outcome != "" {
		return string(r.outcome)
	}
	return workflowRunning
}

// workflowInfo builds .workflow as of now: ToolHive's id, duration_ms,
// step_count (the steps completed so far), status and start_time (RFC
// 3339), and the workflow's name. The fields that do not change are boxed
// once per run (wfFixed).
func (r *runState) workflowInfo(status string, now time.Time) map[string]any {
	if r.wfFixed[0] == nil {
		r.wfFixed = [3]any{r.run.ID, r.wp.wf.Name, r.run.StartedAt.Format(time.RFC3339)}
	}
	return map[string]any{
		"id":          r.wfFixed[0],
		"name":        r.wfFixed[1],
		"start_time":  r.wfFixed[2],
		"duration_ms": now.Sub(r.run.StartedAt).Milliseconds(),
		"step_count":  int64(r.completed),
		"status":      status,
	}
}

// refreshWorkflow replaces .workflow with its values as of now, in
// workflows that read it. A fresh map, because a template may have handed
// the old one on as a value. Called with sched held.
func (r *runState) refreshWorkflow(status string, now time.Time) {
	if !r.wp.readsWorkflow {
		return
	}
	w := r.workflowInfo(status, now)
	r.mu.Lock()
	r.data["workflow"] = w
	r.mu.Unlock()
}

// execute runs the workflow to the end and fills r.run.
func (r *runState) execute() {
	defer r.cancel(nil)
	defer r.releaseDeadlines()
	if r.memStore == nil { // another store: writes go through a writer goroutine
		r.updates = make(chan stepUpdate, 256)
		r.writerDone = make(chan struct{})
		r.written = make(chan struct{}, 1)
		go r.storeWriter()
	}
	r.emit(Event{Kind: EventRunStarted})
	if serr := r.evalVars(); serr != nil {
		r.firstErr = serr
	} else {
		r.weighKnownLoops()
		r.loop()
	}
	r.stopWorkers()
	out := r.decideOutcome()
	if len(r.wp.finallyRoots) > 0 {
		r.runFinally(out.status)
	}
	r.finishRun(out)
}

func (r *runState) evalVars() *StepError {
	if len(r.wp.vars) == 0 {
		return nil
	}
	vars := make(map[string]any, len(r.wp.vars))
	for i, v := range r.wp.vars {
		x, err := v.value.eval(r.data)
		if err != nil {
			pos := r.wp.wf.Vars[i].Value.Template
			se := &StepError{Pos: r.wp.wf.Pos, Msg: fmt.Sprintf("var %q: %v", v.name, err)}
			var te *templateError
			if errors.As(err, &te) {
				se.Pos = te.pos
			} else if pos != nil {
				se.Pos = pos.Pos
			}
			return se
		}
		vars[v.name] = x
	}
	r.data["vars"] = vars
	return nil
}

// loop runs the workflow's steps, on the calling goroutine and on the
// run's workers, and returns once no step runs and none can start.
func (r *runState) loop() {
	r.sched.Lock()
	j, complete := r.next()
	r.sched.Unlock()
	if j.sp != nil {
		complete = r.drive(j, false)
	}
	if !complete {
		<-r.finished
	}
}

// drive runs j and then, for as long as next hands it one, each step that
// its own steps made ready. It reports whether the run completed with the
// last step it recorded. A worker that gets nothing more counts itself
// idle before it lets go of the lock, so the next launch can reuse it.
func (r *runState) drive(j stepJob, worker bool) (complete bool) {
	for {
		m := r.runStep(j.ctx, j.sp)
		r.sched.Lock()
		r.handle(m)
		j, complete = r.next()
		if j.sp == nil && worker {
			r.idle++
		}
		r.sched.Unlock()
		if j.sp == nil {
			return complete
		}
	}
}

// next starts every step that can start now: it pops ready steps while
// fewer than maxParallel run, settling the ones whose condition is false
// at once. The first step it starts is returned for the calling goroutine
// to run; the others go to workers. complete reports that no step runs
// and none can start, so the run is over. Called with sched held.
func (r *runState) next() (own stepJob, complete bool) {
	var now time.Time // one clock read for the steps started together
	if !r.stopped && len(r.ready.items) > 0 {
		now = r.now()
		if !r.deadline.IsZero() && !now.Before(r.deadline) {
			// Past the workflow's deadline, even if the step that got
			// here ignored its context.
			r.stop(errWorkflowTimeout)
		}
		r.refreshWorkflow(r.workflowStatus(), now)
	}
	if !r.stopped && r.ctx.Err() != nil {
		// Cancelled, timed out or aborted: nothing new starts.
		r.stopped = true
		if r.firstErr == nil {
			r.interrupted = true
		}
	}
	for !r.stopped && r.running < r.wp.maxParallel && len(r.ready.items) > 0 {
		j, ok := r.launch(r.ready.pop(), now)
		switch {
		case !ok:
		case own.sp == nil:
			own = j
		default:
			r.startWorker(j)
		}
	}
	if own.sp != nil || r.running > 0 {
		return own, false
	}
	if r.ctx.Err() != nil && r.done < r.wp.nmain && !r.skipRemaining {
		r.interrupted = true
	}
	return own, true
}

// launch starts step i at now and returns its job, or settles it at once
// (and returns false) when its condition is false or cannot be evaluated.
// Called with sched held.
func (r *runState) launch(i int, now time.Time) (stepJob, bool) {
	sp := r.wp.steps[i]
	if sp.cond != nil {
		v, err := sp.cond.value(r.data)
		if err != nil {
			r.handle(stepMsg{index: i, status: StepFailed, at: now, err: r.templateStepError(sp.id, sp.cond, err, "condition")})
			return stepJob{}, false
		}
		ok, err := asBool(v)
		if err != nil {
			r.handle(stepMsg{index: i, status: StepFailed, at: now, err: &StepError{Step: sp.id, Pos: posOr(sp.cond.src.Pos, sp.step.Pos), Msg: err.Error()}})
			return stepJob{}, false
		}
		if !ok {
			r.handle(stepMsg{index: i, status: StepSkipped, at: now, output: sp.step.DefaultResults, note: "condition is false"})
			return stepJob{}, false
		}
	}
	st := r.run.Steps[i]
	st.Status = StepRunning
	st.StartedAt = now
	st.Attempts = 1
	if r.steps != nil {
		r.setEntry(i, nil, nil, StepRunning, "")
	} else {
		r.setView(sp.id, runningEntry)
	}
	r.putStep(i, st)
	r.emit(Event{Kind: EventStepStarted, StepID: sp.id, Attempt: 1, Time: st.StartedAt})
	r.running++
	return stepJob{ctx: r.stepContext(st.StartedAt, sp.timeout), sp: sp}, true
}

// stepJob is a step handed to a worker, with the context it runs under.
// A job without a step tells the worker to exit.
type stepJob struct {
	ctx context.Context
	sp  *stepPlan
}

// startWorker runs j on a worker goroutine. Workers belong to the run: one
// that has nothing more to run waits on jobs for the next step, so a run
// starts fewer than maxParallel goroutines however many steps it has, and
// a worker's stack, grown by its first step, serves the rest. idle counts
// the waiting workers, so a send on jobs, whose capacity is maxParallel,
// never blocks. Called with sched held.
func (r *runState) startWorker(j stepJob) {
	if r.idle > 0 {
		r.idle--
		r.jobs <- j
		return
	}
	if r.jobs == nil {
		r.jobs = make(chan stepJob, min(r.wp.maxParallel, len(r.wp.steps)))
		r.scratch.jobs = r.jobs
	}
	r.nworkers++
	r.workers.Add(1)
	go r.work(j)
}

func (r *runState) work(j stepJob) {
	defer r.workers.Done()
	for j.sp != nil {
		if r.drive(j, true) {
			r.finished <- struct{}{}
		}
		j = <-r.jobs
	}
}

// stopWorkers ends the run's workers once no step runs: every worker is
// idle, so each takes one exit job. It returns when they have all exited,
// so no goroutine outlives the run.
func (r *runState) stopWorkers() {
	for range r.nworkers {
		r.jobs <- stepJob{}
	}
	r.workers.Wait()
	r.nworkers, r.idle = 0, 0
}

// notify records a retry notice from a running step.
func (r *runState) notify(m stepMsg) {
	r.sched.Lock()
	r.handle(m)
	r.sched.Unlock()
}

// now is the current time, read from the monotonic clock only: the run's
// start plus the time since. It costs one clock read instead of time.Now's
// two, and the step times of a run stay consistent with each other.
func (r *runState) now() time.Time {
	return r.run.StartedAt.Add(time.Since(r.run.StartedAt))
}

// stop ends the run because of cause (errRunCancelled, errRunAborted or
// errWorkflowTimeout; the first cause stays): the run's context and every
// step context made so far end, and stepContext makes no new live one.
func (r *runState) stop(cause error) {
	r.dlMu.Lock()
	defer r.dlMu.Unlock()
	if r.finalPhase {
		return // the outcome is decided; finally steps have their own bounds
	}
	r.cancel(cause)
	r.endDeadlines()
}

// endCause is why the run's context ended: errRunCancelled,
// errRunAborted, errWorkflowTimeout or the cause of the caller's context.
func (r *runState) endCause() error { return context.Cause(r.ctx) }

// noteTimeout stops the run with errWorkflowTimeout when ctx, a step's
// context, ended at the workflow's deadline. Step contexts carry that
// deadline; the run's context has none, so this is how a run times out.
func (r *runState) noteTimeout(ctx context.Context) {
	if r.deadline.IsZero() || r.ctx.Err() != nil || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return
	}
	if dl, ok := ctx.Deadline(); ok && !dl.Before(r.deadline) {
		r.stop(errWorkflowTimeout)
	}
}

// stepContext returns a context that ends at most timeout after now (the
// step's start), and at the latest at the workflow's deadline. Contexts
// are children of the caller's context, not of the run's: one link fewer
// per run, and stop ends them itself. Step deadlines are shared: a context
// made for an earlier step with the same timeout is reused while its
// deadline is at most timeout/1000 earlier than a fresh one would be (a 5m
// step timeout may end up to 300ms early, never late). Chains and wide
// fan-outs then need one timer per run instead of one per step. Shared
// contexts are never ended early; they end with the run. Steps cut short
// by the workflow's deadline share one context that ends exactly then.
// Called with sched held.
func (r *runState) stepContext(now time.Time, timeout time.Duration) context.Context {
	want, key := now.Add(timeout), timeout
	if !r.deadline.IsZero() && !r.deadline.After(want) {
		want, key = r.deadline, 0
	}
	r.dlMu.Lock()
	defer r.dlMu.Unlock()
	if r.ctx.Err() != nil {
		return r.ctx // stopped: the step ends at once
	}
	slack := key / 1000
	for i := range r.deadlines {
		d := &r.deadlines[i]
		if d.timeout != key {
			continue
		}
		if d.ctx.Err() == nil && want.Sub(d.at) <= slack {
			return d.ctx
		}
		// Steps may still hold the old context: it ends with the run.
		r.spent = append(r.spent, d.cancel)
		d.ctx, d.cancel = context.WithDeadline(r.parent, want)
		d.at = want
		return d.ctx
	}
	ctx, cancel := context.WithDeadline(r.parent, want)
	r.deadlines = append(r.deadlines, sharedDeadline{timeout: key, at: want, ctx: ctx, cancel: cancel})
	return ctx
}

// endDeadlines ends the shared step contexts and stops their timers.
// Called with dlMu held.
func (r *runState) endDeadlines() {
	for _, d := range r.deadlines {
		d.cancel()
	}
	for _, c := range r.spent {
		c()
	}
}

// releaseDeadlines stops the timers of the shared step contexts once no
// step runs any more.
func (r *runState) releaseDeadlines() {
	r.dlMu.Lock()
	r.endDeadlines()
	r.dlMu.Unlock()
}

// sharedDeadline is a step context shared by steps with the same timeout.
type sharedDeadline struct {
	timeout time.Duration
	at      time.Time
	ctx     context.Context
	cancel  context.CancelFunc
}

// runStep executes a step and returns its final message.
func (r *runState) runStep(ctx context.Context, sp *stepPlan) stepMsg {
	var m stepMsg
	switch sp.kind {
	case ir.StepElicitation:
		m = r.runElicitation(ctx, sp)
	case ir.StepForEach:
		m = r.runForEach(ctx, sp)
	default: // tool and workflow steps (call runs a workflow step's child)
		m = r.runTool(ctx, sp)
	}
	m.index = sp.index
	m.at = r.now()
	return m
}

// handle records a step message. Called with sched held.
func (r *runState) handle(m stepMsg) {
	sp := r.wp.steps[m.index]
	st := r.run.Steps[m.index]
	if m.retry {
		st.Attempts = m.attempts
		r.putStep(m.index, st)
		r.emit(Event{Kind: EventStepRetrying, StepID: sp.id, Attempt: m.attempts, Err: m.err.Msg})
		return
	}
	if st.Status == StepRunning {
		r.running--
	}
	if m.attempts > 0 {
		st.Attempts = m.attempts
	}
	st.EndedAt = m.at
	st.Status = m.status
	st.Note = m.note
	st.Error = ""
	output := m.output
	kind := EventStepCompleted
	switch m.status {
	case StepFailed:
		kind = EventStepFailed
		st.Error = m.err.Msg
		if r.ctx.Err() == nil && !r.deadline.IsZero() && !time.Now().Before(r.deadline) {
			r.stop(errWorkflowTimeout) // however the step saw it end
		}
		switch {
		case r.ctx.Err() != nil:
			// Stopped by cancel, timeout or another step's abort.
			if r.firstErr == nil {
				r.interrupted = true
			}
			r.stopped = true
		case m.forceAbort || r.effectiveAction(sp) == ir.ActionAbort:
			r.abort(m.err)
		default:
			output = sp.step.DefaultResults
		}
	case StepSkipped:
		kind = EventStepSkipped
	case StepCompleted:
		r.completed++
	}
	if m.skipRemaining {
		r.skipRemaining = true
		r.stopped = true
	}
	st.Output = output
	r.setEntry(m.index, output, m.content, m.status, st.Error)
	r.putStep(m.index, st)
	r.done++
	r.emit(Event{Kind: kind, StepID: sp.id, Attempt: st.Attempts, Err: st.Error, Time: m.at})
	for _, d := range sp.dependents {
		r.pending[d]--
		if r.pending[d] == 0 {
			r.ready.push(d)
		}
	}
	if r.loops != nil {
		r.noteRead(m.index)
	}
}

// effectiveAction is what a failed step does once its retries are spent.
func (r *runState) effectiveAction(sp *stepPlan) string {
	if sp.finally {
		return ir.ActionContinue // a failed finally step never stops the others
	}
	switch sp.action {
	case ir.ActionContinue:
		return ir.ActionContinue
	case ir.ActionAbort:
		return ir.ActionAbort
	}
	if r.wp.wf.FailureMode == ir.FailureContinue {
		return ir.ActionContinue
	}
	return ir.ActionAbort
}

func (r *runState) abort(err *StepError) {
	if r.firstErr == nil {
		r.firstErr = err
	}
	r.stopped = true
	r.stop(errRunAborted)
}

func (r *runState) setView(id string, entry map[string]any) {
	r.mu.Lock()
	r.view[id] = entry
	r.mu.Unlock()
}

// putStep sets step i's record and stores it. With a MemoryStore, the
// run's Steps are the store's record too (see MemoryStore.createShared):
// the assignment is made under the store's lock, and that is the write.
func (r *runState) putStep(i int, st StepState) {
	if ms := r.memStore; ms != nil {
		ms.mu.Lock()
		r.run.Steps[i] = st
		ms.mu.Unlock()
		return
	}
	r.run.Steps[i] = st
	r.storeStep(i)
}

// storeStep writes step i to a store other than MemoryStore. With a background writer, a finished step
// (completed, failed or skipped) waits for its write: the step becomes
// durable before its event goes out and before its dependents start, so a
// crash never loses a step that anyone saw finish. Starts are not waited for.
func (r *runState) storeStep(i int) {
	if r.updates == nil {
		r.writeStep(i, r.run.Steps[i])
		return
	}
	st := r.run.Steps[i]
	if st.Status == StepPending || st.Status == StepRunning {
		r.updates <- stepUpdate{index: i, state: st}
		return
	}
	r.updates <- stepUpdate{index: i, state: st, ack: r.written}
	<-r.written
}

func (r *runState) writeStep(i int, st StepState) {
	if err := r.e.store.UpdateStep(r.storeCtx, r.run.ID, i, st); err != nil {
		r.e.log.Warn("run store: step update failed", "run_id", r.run.ID, "step_id", st.ID, "err", err)
	}
}

func (r *runState) storeWriter() {
	defer close(r.writerDone)
	for u := range r.updates {
		r.writeStep(u.index, u.state)
		if u.ack != nil {
			u.ack <- struct{}{}
		}
	}
}

func (r *runState) emit(ev Event) {
	if r.opts.OnEvent == nil {
		return
	}
	ev.RunID = r.run.ID
	ev.Workflow = r.run.Workflow
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	ev.Status = r.run.Status
	ev.Done = r.done
	ev.Total = len(r.wp.steps)
	r.opts.OnEvent(ev)
}

// decideOutcome decides the run's status, error and result once the
// top-level steps have ended, before any finally step runs.
func (r *runState) decideOutcome() outcome {
	run := r.run
	wf := r.wp.wf
	switch {
	case r.firstErr != nil:
		return outcome{status: RunFailed, err: r.firstErr}
	case r.interrupted:
		if errors.Is(r.endCause(), errWorkflowTimeout) {
			return outcome{status: RunTimedOut, err: &StepError{Pos: wf.Pos, Msg: fmt.Sprintf("workflow timed out after %s", r.wp.timeout)}}
		}
		return outcome{status: RunCancelled, err: &StepError{Pos: wf.Pos, Msg: "run cancelled"}}
	default:
		if r.skipRemaining {
			now := time.Now()
			for i := range run.Steps[:r.wp.nmain] {
				st := run.Steps[i]
				if st.Status != StepPending {
					continue
				}
				sp := r.wp.steps[i]
				st.Status = StepSkipped
				st.EndedAt = now
				st.Output = sp.step.DefaultResults
				st.Note = "skipped by skip_remaining"
				r.setEntry(i, st.Output, nil, StepSkipped, "")
				r.putStep(i, st)
				r.done++
				r.emit(Event{Kind: EventStepSkipped, StepID: sp.id})
			}
		}
		r.refreshWorkflow(string(RunCompleted), time.Now())
		out, serr := r.compositeResult()
		if serr != nil {
			return outcome{status: RunFailed, err: serr}
		}
		return outcome{status: RunCompleted, output: out}
	}
}

// finishRun records the run with its outcome.
func (r *runState) finishRun(out outcome) {
	run := r.run
	run.Status, run.Error, run.Output = out.status, out.err, out.output
	run.EndedAt = time.Now()
	if r.updates != nil {
		close(r.updates)
		<-r.writerDone
	}
	if err := r.e.store.FinishRun(r.storeCtx, run); err != nil {
		r.e.log.Warn("run store: finishing run failed", "run_id", run.ID, "err", err)
	}
	r.emit(Event{Kind: EventRunFinished, Err: errString(run.Error)})
}

func errString(e *StepError) string {
	if e == nil {
		return ""
	}
	return e.Error()
}

// readyQueue is a binary max-heap of step indexes by (priority desc,
// index asc); prio holds the run's priorities (see priority.go).
type readyQueue struct {
	prio  []int32
	items []int
}

func (q *readyQueue) less(a, b int) bool {
	pa, pb := q.prio[a], q.prio[b]
	if pa != pb {
		return pa > pb
	}
	return a < b
}

func (q *readyQueue) push(i int) {
	q.items = append(q.items, i)
	c := len(q.items) - 1
	for c > 0 {
		p := (c - 1) / 2
		if !q.less(q.items[c], q.items[p]) {
			break
		}
		q.items[c], q.items[p] = q.items[p], q.items[c]
		c = p
	}
}

func (q *readyQueue) pop() int {
	top := q.items[0]
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	q.items = q.items[:last]
	q.down(0)
	return top
}

// down moves the item at p down to its place below.
func (q *readyQueue) down(p int) {
	for {
		l := 2*p + 1
		if l >= len(q.items) {
			break
		}
		m := l
		if rr := l + 1; rr < len(q.items) && q.less(q.items[rr], q.items[l]) {
			m = rr
		}
		if !q.less(q.items[m], q.items[p]) {
			break
		}
		q.items[m], q.items[p] = q.items[p], q.items[m]
		p = m
	}
}

// fix restores the heap order after priorities changed.
func (q *readyQueue) fix() {
	for p := len(q.items)/2 - 1; p >= 0; p-- {
		q.down(p)
	}
}
