package runtime

// The local driver: goroutines that run the steps a Machine starts.
//
// The scheduling contract: a ready queue ordered by remaining work, no
// level barriers (a step starts once its own dependencies are done and a
// slot is free), and the goroutine that finished a step's last dependency
// runs it. The machine (machine.go, which explains the queue and the
// priorities) decides the run: which step starts when, what a failure
// does, the outcome. This file performs its actions with
// goroutines, contexts and the run store, and feeds it what happened.
// There is no coordinator goroutine: the machine and the driver's own
// state (the workers, the shared deadlines) are guarded by one mutex,
// sched, and whichever goroutine finishes a step feeds its result and
// performs what follows:
//
//	drive(step):
//	    execute the step (templates, backend call) without the lock
//	    lock
//	    tell the machine a stop it has not seen (cancel, timeout, caller)
//	    feed the result: StepDone(result)
//	    perform the actions: store each record and emit its event; run
//	        the first started step on this goroutine unless older steps
//	        are queued, queue the others; stop the running steps when
//	        told to
//	    without a step of its own, take the oldest queued one, and
//	        start a worker if the queue needs one (nextJob)
//	    unlock
//	    continue with this goroutine's step, or exit (a worker)
//
// The caller of Run starts the machine the same way and runs the first
// step itself. So the goroutine that finished the last dependency of a
// step runs it: a chain runs on one goroutine, and a fan-in costs no
// hand-off. A skipped step takes no slot and no goroutine (the machine
// settles it). Queued steps go to whichever goroutine asks first: a
// worker started for them (one is being started at a time, and each
// starts the next while steps are queued), or a goroutine whose own step
// ended and made nothing ready. So a step waiting for its backend has
// its siblings taken by workers, and steps that end at once mostly run
// on the goroutines already running. Workers belong to the run (at most
// maxParallel at once, each going on from step to step while its steps
// make others ready); once the machine says the run is over, the caller
// of Run is woken if it is waiting and waits for the workers to exit, so
// no worker that ran a step outlives Run (one that found the queue empty
// touches nothing of the run and is not waited for; see workQueue).
//
// Template reads. Step goroutines evaluate templates under the read side
// of mu, the machine's DataGuard, which the machine holds while it
// writes the data: the cost of a step's template data does not depend on
// how many steps came before it, and reads never race with the writes. A
// goroutine holding sched reads without the read lock (the machine only
// writes while sched is held).
//
// Stopping. ActionStop cancels the run's context (cause errRunAborted,
// errRunCancelled or errWorkflowTimeout) and every step context: running
// backend calls see it and report back. Cancel stops the run the same
// way from any goroutine, taking only dlMu; the next goroutine to feed
// the machine tells it (syncStop). The workflow timeout has no timer of
// its own: every step context ends at the workflow's deadline at the
// latest, and the first step to see that deadline pass stops the run with
// errWorkflowTimeout (noteTimeout); the machine also sees any result at
// or past the deadline.
//
// Time. The driver reads the clock (now: the run's start plus the
// monotonic time since) once per step end, and hands that time to the
// machine, which starts what follows at the same time.
//
// Finally steps. On ActionFinally the driver gives the steps that follow
// a context of their own, detached from the caller's and without the
// workflow deadline (finally.go).

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

var (
	errRunCancelled    = errors.New("run cancelled")
	errRunAborted      = errors.New("run aborted after a step failed")
	errWorkflowTimeout = errors.New("workflow timed out")
)

// stepMsg is a step's end as an executor reports it (StepResult without
// the index and the time, which the driver adds).
type stepMsg struct {
	status        StepStatus
	output        any
	content       map[string]any // a tool step's content map
	err           *StepError
	attempts      int
	forceAbort    bool // an explicit abort action (elicitation) ignores failureMode
	skipRemaining bool
	note          string
}

type runState struct {
	// Machine decides the run; the driver's fields follow.
	Machine
	opts RunOptions
	// span is the run's span when the engine traces (trace.go).
	span Span
	env  StepEnv // what the step executors use of the outside world (env.go)
	// onRetry, for a step run by ExecuteStep, hears its retry notices.
	onRetry func(attempt int, err *StepError)
	// ctx ends when the run is stopped (cancel, abort, the workflow
	// timeout) or the caller's context ends; it has no deadline of its own.
	// Step contexts are made from parent, not ctx, and carry the workflow
	// deadline (see stepContext): stop ends them too.
	ctx         context.Context
	cancel      context.CancelCauseFunc
	parent      context.Context
	ctxDeadline time.Time // the end of the workflow timeout, for step contexts

	mu sync.RWMutex // the machine's DataGuard: template reads take its read side

	scratch *runScratch

	// Step workers (see place): workers tracks them all. finished
	// wakes the caller of loop when a worker ends the run. queue holds
	// the started steps that no goroutine has taken yet.
	finished chan struct{}
	workers  sync.WaitGroup
	queue    *workQueue // the scratch's, made by its first hand-off

	// sched guards the machine and the driver state below: whichever
	// goroutine feeds the machine holds it. It is the run's own, not the
	// pooled state's: a MemoryStore's reader may still take it after the
	// run has ended and this state serves another run (createShared).
	// dlMu guards the shared deadlines; stop takes it (and never sched),
	// so it may be called from anywhere, an event handler included.
	sched *sync.Mutex
	dlMu  sync.Mutex

	finalPhase bool // the finally steps run: stop has no effect (dlMu)
	deadlines  []sharedDeadline
	spent      []context.CancelFunc

	// Store writes. storeCtx outlives cancellation so the final states
	// are recorded. With a store other than MemoryStore, step updates go
	// through updates to one writer goroutine; finished steps and durable
	// starts wait for their write (see storeStep), and FinishRun waits for
	// the writer to drain.
	storeCtx   context.Context
	memStore   *MemoryStore
	memRecord  *Run // with a MemoryStore, the run's record in it
	memShared  bool // memRecord shares its Steps with the run (a new run)
	updates    chan stepUpdate
	writerDone chan struct{}
	written    chan struct{} // acks of waited-for writes
}

// runScratch is a run's working memory that nothing refers to once the
// run has ended (its workers have exited and the result is built): the
// runState itself, the wake-up channel, the dependency counters, the ready
// heap, the shared deadlines, the stepView entries, the machine's action
// buffer and the root data map. Runs of a workflow reuse them through
// workflowPlan.scratch.
type runScratch struct {
	state     runState
	finished  chan struct{}
	pending   []int32
	ready     []int
	deadlines []sharedDeadline
	entries   []stepEntry
	acts      []Action
	queue     *workQueue
	data      map[string]any // the root template data, for chains-only workflows
	loops     loopState
}

// release hands the run's state back once the run has ended and nothing
// can reach it any more (Engine.Run has removed it from the active runs).
// Everything the run referred to is dropped; r must not be used after.
func (r *runState) release() {
	sc, wp := r.scratch, r.wp
	if q := r.queue; q != nil {
		q.mu.Lock()
		q.r = nil // a late worker or timer now serves no run
		q.mu.Unlock()
	}
	clear(sc.entries) // drop the outputs
	clear(sc.data)
	clear(sc.loops.weighed) // and collections weighed for loops that never started
	sc.ready = r.ready.items[:0]
	acts := r.acts[:cap(r.acts)]
	clear(acts)
	sc.acts = acts[:0]
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
	r := &sc.state // zero: new, or cleared by release
	r.opts, r.scratch, r.finished, r.deadlines, r.queue = opts, sc, sc.finished, sc.deadlines, sc.queue
	r.sched = new(sync.Mutex)
	if q := r.queue; q != nil {
		q.mu.Lock()
		q.r = r
		q.mu.Unlock()
	}
	r.Machine.init(e, wp, id, params, MachineOptions{ParentID: opts.ParentID, ParentStep: opts.ParentStep, Trigger: opts.Trigger, Draft: opts.Draft != nil, Owner: opts.Owner, DataGuard: &r.mu}, sc)
	r.env = StepEnv{Backend: e.backend, Elicitor: opts.Elicitor, Clock: e.clock}
	parent = r.withQuestions(parent) // relay.go
	if e.tracer != nil {
		parent, r.span = e.tracer.Start(parent, SpanStart{Kind: SpanRun, RunID: id, Workflow: wp.wf.Name, ParentRunID: opts.ParentID, ParentStep: opts.ParentStep,
			Trigger: opts.Trigger, ResumedTraceID: opts.resumed.traceID, ResumedSpanID: opts.resumed.spanID})
		r.run.TraceID = r.span.TraceID()
		if s, ok := r.span.(interface{ SpanID() string }); ok {
			r.run.SpanID = s.SpanID()
		}
	}
	r.storeCtx = parent
	if parent.Done() != nil { // a context that can end
		r.storeCtx = context.WithoutCancel(parent)
	}
	r.parent = parent
	r.ctx, r.cancel = context.WithCancelCause(parent)
	r.run.StartedAt = time.Now()
	if wp.timeout > 0 {
		r.ctxDeadline = r.run.StartedAt.Add(wp.timeout)
	}
	return r
}

// execute runs the workflow to the end and fills r.run. start feeds the
// machine its first input (Start, or Restore for a resumed run).
func (r *runState) execute(start func() []Action) {
	defer func() { r.cancel(nil) }()
	defer r.releaseDeadlines()
	if r.memStore == nil { // another store: writes go through a writer goroutine
		r.updates = make(chan stepUpdate, 256)
		r.writerDone = make(chan struct{})
		r.written = make(chan struct{}, 1)
		go r.storeWriter()
	}
	r.emit(Event{Kind: EventRunStarted})
	r.sched.Lock()
	j, complete := r.perform(start())
	j = r.nextJob(j)
	r.sched.Unlock()
	r.loop(j, complete)
	r.stopWorkers()
	r.finishRun()
}

// loop runs j, the caller's own step, and returns once the run is over.
func (r *runState) loop(j stepJob, complete bool) {
	if j.sp != nil {
		complete = r.drive(j)
	}
	if !complete {
		<-r.finished
	}
}

// drive runs j and then, for as long as the machine hands it one, each
// step that its own steps made ready. It reports whether the run ended
// with the last result it fed.
//
// One clock read per step: a step's end is the next one's start, as the
// machine records it (StepDone's EndedAt is the StartedAt of the steps it
// starts), so a step's time for the quick rules (quick.go) also counts
// what this goroutine did between the two (the run's lock and the
// machine's bookkeeping, well under a microsecond against the 20µs a
// quick call may take), never a queued step's wait before that.
func (r *runState) drive(j stepJob) (complete bool) {
	began := r.now()
	for {
		m := r.runStep(j.ctx, j.sp)
		at := r.now()
		r.sched.Lock()
		j.sp.noteCall(at.Sub(began))
		r.syncStop(at)
		j, complete = r.perform(r.Machine.StepDone(StepResult{
			Step: j.sp.index, Status: m.status, Output: m.output, Content: m.content, Err: m.err,
			Attempts: m.attempts, EndedAt: at, Note: m.note, ForceAbort: m.forceAbort, SkipRemaining: m.skipRemaining,
		}))
		j = r.nextJob(j)
		r.sched.Unlock()
		if j.sp == nil {
			return complete
		}
		began = at
	}
}

// syncStop tells the machine that the run's context ended, when it has
// not been told: a cancel, the workflow timeout seen by a step, or the
// caller's context. Called with sched held.
func (r *runState) syncStop(at time.Time) {
	if r.Machine.cause != StopNone || r.phase != phaseMain {
		return
	}
	var cause error
	switch {
	case r.ctx.Err() != nil:
		cause = context.Cause(r.ctx)
	case r.parent.Err() != nil:
		// The caller's context ends before the run's, its child, hears
		// of it: a step context (also the caller's child) may end first,
		// and its step may report back in between.
		cause = context.Cause(r.parent)
	default:
		return
	}
	r.perform(r.Machine.Stop(causeReason(cause), at))
}

// causeReason is the stop reason for the run context's cause.
func causeReason(cause error) StopReason {
	switch cause {
	case errRunCancelled:
		return StopCancel
	case errWorkflowTimeout:
		return StopTimeout
	case errRunAborted:
		return StopAbort
	}
	return StopCallerGone
}

// perform carries out the machine's actions in order. The first step
// started is returned for the calling goroutine to run; the others go to
// workers. complete reports that the run is over. Called with sched held.
func (r *runState) perform(acts []Action) (own stepJob, complete bool) {
	deferred := -1 // a step whose start record its first call writes (dispatch.go)
	durable := false
	for k := range acts {
		a := &acts[k]
		switch a.Kind {
		case ActionRecord:
			if r.updates != nil && a.Event == EventStepStarted && r.defersStart(r.wp.steps[a.Step]) {
				deferred, durable = a.Step, a.Durable
			} else {
				r.putStep(a.Step, &r.run.Steps[a.Step], a.Durable)
			}
			if r.opts.OnEvent != nil && a.Event != "" {
				r.opts.OnEvent(r.Machine.Event(a))
			}
		case ActionStart:
			sp := r.wp.steps[a.Step]
			ctx := r.stepContext(a.At, sp.timeout)
			if a.Step == deferred {
				ctx, deferred = r.deferStart(ctx, a.Step, durable), -1
			}
			own = r.place(stepJob{ctx: ctx, sp: sp}, own)
		case ActionStop:
			r.stop(stopCause(a.Cause))
		case ActionFinally:
			r.enterFinally()
		case ActionFinish:
			complete = true
		}
	}
	return own, complete
}

// StopCause is the context cause that stands for stop reason s: a driver
// that cancels the context of a step run by Engine.ExecuteStep with
// context.WithCancelCause and this cause gets the local driver's wording
// for the step's failure ("cancelled because another step failed", ...).
func StopCause(s StopReason) error { return stopCause(s) }

// stopCause is the run context's cause for a machine's stop reason.
func stopCause(s StopReason) error {
	switch s {
	case StopAbort, StopInterrupted:
		return errRunAborted
	case StopTimeout:
		return errWorkflowTimeout
	}
	return errRunCancelled
}

// stepJob is a step handed to a worker, with the context it runs under.
type stepJob struct {
	ctx context.Context
	sp  *stepPlan
}

// place decides who runs j, a step the machine just started: the calling
// goroutine, as its own step, when it has none yet and no older step
// waits in the queue; otherwise j joins the queue, behind the steps
// started before it. So queued steps run in the order the machine
// started them, and none waits behind a goroutine that keeps getting
// steps of its own. It returns the calling goroutine's own step. Called
// with sched held.
func (r *runState) place(j, own stepJob) stepJob {
	q := r.queue
	if q == nil {
		if own.sp == nil {
			return j
		}
		q = &workQueue{r: r}
		r.queue, r.scratch.queue = q, q
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if own.sp == nil && q.empty() {
		return j
	}
	q.jobs = append(q.jobs, j)
	q.bet.queued(j.sp)
	return own
}

// nextJob is the step the calling goroutine runs next: own, the step the
// machine started for it, or else the oldest queued step. Whichever
// goroutine needs work takes queued steps: this one, or a worker; nextJob
// then makes sure the steps still queued are taken in time (dispatch).
// Called with sched held.
func (r *runState) nextJob(own stepJob) stepJob {
	q := r.queue
	if q == nil {
		return own
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	next := own
	if next.sp == nil {
		next = q.take()
	}
	q.dispatch(next.sp)
	return next
}

// workQueue holds a run's started steps that no goroutine has taken yet.
// It is kept with the run's scratch (with its timer) and serves the runs
// of the workflow that reuse it, one after another: r is the run using it
// now, nil between runs. A worker or a timer acts for whichever run uses
// the queue when it looks, so one that comes late (a worker started for a
// step that the goroutine finishing a sibling took first) either finds
// the queue empty and exits, touching no run, or serves the run that has
// the queue then. Such a worker is not waited for: it ends as soon as it
// is scheduled.
//
// When to start a worker. A step that waits for its backend must not hold
// up the steps queued behind it, so normally a worker starts at once; one
// worker is being started at a time, and each starts the next while
// steps are queued, so the queue is taken within a goroutine start per
// step. The one exception is the quick-step bet (quick.go, quickSteps):
// when every queued step and the one the deciding goroutine runs next are
// quick, no worker starts until the queue has stood still for a while.
type workQueue struct {
	mu       sync.Mutex
	r        *runState
	jobs     []stepJob // from head on
	head     int
	starting bool       // a worker has been started and has not looked yet
	bet      quickSteps // the quick-step bet (quick.go)
}

// dispatch starts a worker for the queued steps, unless the quick-step
// bet holds them for next, the step the deciding goroutine runs next.
// Called with mu held.
func (q *workQueue) dispatch(next *stepPlan) {
	if q.empty() || q.bet.wait(q, next) {
		return
	}
	q.startWorker()
}

// startWorker starts a worker unless one is starting already or nothing
// is queued. Called with mu held.
func (q *workQueue) startWorker() {
	if q.starting || q.empty() {
		return
	}
	q.bet.disarm()
	q.starting = true
	go q.work()
}

// empty reports whether no job is queued. Called with mu held.
func (q *workQueue) empty() bool { return q.head == len(q.jobs) }

// take removes and returns the oldest job. Called with mu held.
func (q *workQueue) take() stepJob {
	if q.empty() {
		return stepJob{}
	}
	j := q.jobs[q.head]
	q.jobs[q.head] = stepJob{}
	q.bet.taken++
	if q.head++; q.head == len(q.jobs) {
		q.jobs, q.head = q.jobs[:0], 0
		q.bet.disarm()
	}
	return j
}

// work is a worker: it takes a queued step, sees to the steps still
// queued (dispatch), and goes on from step to step while its steps make
// others ready (drive). It exits once it gets none: a worker does not
// wait for more work, so none needs waking at the end of the run. A
// worker that took a step joins r.workers before the step can end, so
// the run, which cannot end before that step, waits for it.
func (q *workQueue) work() {
	q.mu.Lock()
	q.starting = false
	j, r := q.take(), q.r
	if j.sp == nil {
		q.mu.Unlock()
		return
	}
	r.workers.Add(1)
	q.dispatch(j.sp)
	q.mu.Unlock()
	defer r.workers.Done()
	if r.drive(j) {
		r.finished <- struct{}{}
	}
}

// stopWorkers waits for the run's workers to exit once no step runs, so
// no worker that ran a step outlives the run.
func (r *runState) stopWorkers() { r.workers.Wait() }

// notify records a retry notice from a running step: attempt comes next.
func (r *runState) notify(index, attempt int, err *StepError) {
	if r.onRetry != nil { // a step run by ExecuteStep
		r.onRetry(attempt, err)
		return
	}
	r.sched.Lock()
	r.perform(r.Machine.Retrying(index, attempt, err))
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
	if r.ctxDeadline.IsZero() || r.ctx.Err() != nil || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return
	}
	if dl, ok := ctx.Deadline(); ok && !dl.Before(r.ctxDeadline) {
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
	if !r.ctxDeadline.IsZero() && !r.ctxDeadline.After(want) {
		want, key = r.ctxDeadline, 0
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

// runStep executes a step and returns its end.
func (r *runState) runStep(ctx context.Context, sp *stepPlan) stepMsg {
	switch sp.kind {
	case ir.StepElicitation:
		return r.runElicitation(ctx, sp)
	case ir.StepForEach:
		return r.runForEach(ctx, sp)
	}
	return r.runTool(ctx, sp) // tool and workflow steps (call runs a workflow step's child)
}

// putStep stores step i's record. A new run's MemoryStore record is the
// machine's Run itself (MemoryStore.createShared), and the machine writes
// a step while sched is held (the store's readers copy it under sched):
// that is the write. A
// resumed run's MemoryStore record is the store's own: an assignment
// under the store's lock. Another store is written by the writer
// goroutine; see storeStep.
func (r *runState) putStep(i int, st *StepState, durable bool) {
	if r.memShared {
		return // the machine wrote the store's record itself (under its lock)
	}
	if rec := r.memRecord; rec != nil {
		r.memStore.mu.Lock()
		rec.Steps[i] = *st
		r.memStore.mu.Unlock()
		return
	}
	r.storeStep(i, *st, durable)
}

// storeStep writes step i to a store other than MemoryStore. With a
// background writer, a finished step (completed, failed or skipped) waits
// for its write: the step becomes durable before its event goes out and
// before its dependents start, so a crash never loses a step that anyone
// saw finish. A durable start (a step that calls a backend and is not
// idempotent) waits too, so the step is recorded running before its first
// call: after a crash, resume knows it may have been called. Other starts
// are not waited for. The start of a step that only calls backends is
// written by its first call, once that has its slot (dispatch.go).
func (r *runState) storeStep(i int, st StepState, durable bool) {
	if r.updates == nil {
		r.writeStep(i, st)
		return
	}
	if !durable && (st.Status == StepPending || st.Status == StepRunning) {
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

// emit sends a run event of the driver's own (run_started, run_finished).
func (r *runState) emit(ev Event) {
	if r.opts.OnEvent == nil {
		return
	}
	ev.RunID = r.run.ID
	ev.Workflow = r.run.Workflow
	ev.TraceID, ev.SpanID = r.run.TraceID, r.run.SpanID
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	ev.Status = r.run.Status
	ev.Done = r.done
	ev.Total = len(r.wp.steps)
	r.opts.OnEvent(ev)
}

// finishRun records the run with its outcome.
func (r *runState) finishRun() {
	run := r.run
	if r.updates != nil {
		close(r.updates)
		<-r.writerDone
	}
	if err := r.e.store.FinishRun(r.storeCtx, run); err != nil {
		r.e.log.Warn("run store: finishing run failed", "run_id", run.ID, "err", err)
	}
	if failed := run.FailedFinally(); len(failed) > 0 {
		r.e.log.Info("finally steps failed", "run_id", run.ID, "workflow", run.Workflow, "steps", failed)
	}
	r.emit(Event{Kind: EventRunFinished, Err: errString(run.Error)})
	if r.span != nil {
		r.span.End(SpanEnd{Status: string(run.Status), Err: errString(run.Error)})
	}
}

func errString(e *StepError) string {
	if e == nil {
		return ""
	}
	return e.Error()
}
