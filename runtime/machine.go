package runtime

// The run core: a deterministic state machine that decides a run.
//
// A Machine holds everything a run decides: the Run record, the template
// data (.params, .vars, .steps, .workflow), each step's count of
// unfinished dependencies, the ready queue, the failure state and the
// outcome. It does nothing by itself. A driver feeds it inputs and
// performs the actions it returns:
//
//	inputs                           actions
//	Start(at)                        ActionStart      run step i (its condition holds)
//	StepDone(StepResult)             ActionRecord     store step i's record, emit its event
//	Retrying(step, attempt, err)     ActionStop       stop the running steps (abort, timeout)
//	Stop(reason, at)                 ActionFinally    the finally phase begins
//	Restore(recorded run, at)        ActionFinish     the run is over: Run() is final
//
// The rules that make it deterministic: it reads no clock (every time
// comes in on an input, and a result's time is raised to just after the
// previous input's when it is not later, so inputs are totally ordered
// by time), draws no random numbers (retry jitter is the driver's, see
// retry.go), never decides by iterating a map, and starts no goroutine,
// makes no context and takes no lock of its own. The same inputs in the
// same order give the same actions and the same Run. A driver that
// evaluates templates while the machine runs (the local driver does, on
// its step goroutines) hands it a DataGuard, which the machine holds
// while it writes the template data. The lock with which a driver
// serialises the machine's inputs also guards Run() for its readers: the
// local driver's is runState.sched, under which a MemoryStore copies the
// record it shares with the run (createShared).
//
// Scheduling: a ready queue, not level barriers. Each step has a counter
// of unfinished dependencies, set from len(Deps). Steps whose counter is
// zero are in the ready queue, a binary heap ordered by priority, highest
// first, then by index. A step's priority is its remaining work: its
// weight (1 for a call; for a forEach, the waves its iterations take,
// ceil(items / maxParallel)) plus the heaviest priority among its
// dependents. A loop's weight is known once its collection can be
// evaluated; the rise then goes up to its pending ancestors only
// (priority.go explains the rule and the update). After every input the
// machine records what it was told, decrements the counters of the
// finished step's dependents, pushes those at zero, and then, while fewer
// than maxParallel steps run, pops the step with the most remaining work:
// a step whose condition is false (or cannot be evaluated) settles at
// once and takes no slot; any other becomes running and is returned as an
// ActionStart, in the order they were popped. So a step starts as soon
// as its own dependencies are done and a slot is free, never waiting for
// unrelated steps of the same level. (The local driver runs the first
// started step on the goroutine that fed the input, see scheduler.go.)
//
// Template data. The root map (params, vars, steps, workflow) is built
// once per run. .steps is one map holding one entry per step, created at
// the start with a shared "pending" entry; when a step starts or
// finishes, the machine replaces its entry (a new small map {output,
// content, status, error}). When every template is a plain field chain
// into an entry, .steps is a stepView instead: a slice of entry structs
// made once per run and overwritten in place, which reads the same.
// .workflow (id, duration_ms, step_count, status, start_time) is replaced
// by a fresh map, as of the input's time, whenever steps are about to
// start and before the result is built, only in workflows that read it
// (workflowPlan.readsWorkflow).
//
// Stopping. A failure whose action is abort records the first error and
// stops the run: ActionStop{Cause: StopAbort}, nothing new starts, and
// the running steps report back (failed, as the driver saw them end).
// The driver reports a cancel, the workflow timeout or a caller that went
// away with Stop; a step result or launch at or past the workflow's
// deadline (start + timeout) stops the run with StopTimeout by itself.
// The reason decides the final status (failed, cancelled, timed_out).
// skip_remaining stops new starts without stopping anything: running
// steps finish, and every step that never started is marked skipped.
//
// Finally steps. They follow the top-level steps in workflowPlan.steps
// and are not roots. Once no top-level step runs and none can start, the
// outcome is decided (decideOutcome); when the workflow has finally
// steps, the machine returns ActionFinally (the driver lifts its stop:
// the finally steps run whatever happened, see finally.go), queues the
// finally roots and goes on; then the run finishes with that outcome.

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

// ActionKind says what an Action asks the driver to do.
type ActionKind uint8

const (
	// ActionStart: execute step Step, started at At. Its record (running,
	// attempt 1) comes in an ActionRecord just before. Machine.Deadline
	// says when the step must end.
	ActionStart ActionKind = iota + 1
	// ActionRecord: store step Step's record (Machine.Record) and emit
	// its event (Machine.Event) when Event is set.
	// Durable asks the driver to wait for the write before it performs
	// the next action (a non-idempotent step's start, see Durable).
	ActionRecord
	// ActionStop: stop every running step (cancel their calls); Cause
	// says why. The machine starts nothing new.
	ActionStop
	// ActionFinally: the top-level steps have ended and the outcome is
	// decided; the finally steps follow. A driver lifts its stop here:
	// finally steps run on a context of their own, bounded only by their
	// own timeouts (Deadline of their ActionStart).
	ActionFinally
	// ActionFinish: the run is over. Run() holds the final record; the
	// driver stores it and emits run_finished.
	ActionFinish
)

// StopReason is why a run stops before every step has ended.
type StopReason uint8

const (
	StopNone StopReason = iota
	// StopCancel: the run was cancelled (Engine.Cancel, the client's
	// notifications/cancelled). Final status cancelled.
	StopCancel
	// StopTimeout: the workflow timeout passed. Final status timed_out.
	StopTimeout
	// StopCallerGone: the caller's context ended. Final status cancelled.
	StopCallerGone
	// StopAbort: a step failed with action abort. Final status failed.
	// Only the machine stops for this reason.
	StopAbort
	// StopInterrupted: a resumed run found a step that was in flight when
	// vmcp stopped and may not run twice. Final status interrupted.
	StopInterrupted
)

func (s StopReason) String() string {
	switch s {
	case StopNone:
		return "none"
	case StopCancel:
		return "cancelled"
	case StopTimeout:
		return "timed out"
	case StopCallerGone:
		return "caller gone"
	case StopAbort:
		return "aborted"
	case StopInterrupted:
		return "interrupted"
	}
	return fmt.Sprintf("StopReason(%d)", uint8(s))
}

// Action is one thing the driver must do, in the order returned. It is
// plain data, kept small: the machine appends one for every start and
// every record.
type Action struct {
	Kind ActionKind
	// Cause (ActionStop) is why the running steps must stop.
	Cause StopReason
	// Durable (ActionRecord) is set on the start of a step that calls a
	// backend and is not idempotent: a driver with a durable store makes
	// the write before the step's first call, so a crash after the call
	// is never taken for a step that did not start.
	Durable bool
	// Event (ActionRecord) is the progress event the record makes, or ""
	// for none; Machine.Event builds it in full.
	Event EventKind
	Step  int // ActionStart, ActionRecord: the step's index in Run.Steps
	// Done (ActionRecord) counts the finished steps as of this record.
	Done int
	// At is the time the action was decided (an input's time).
	At time.Time
	// Msg (ActionRecord of a retry) is the failed attempt's message.
	Msg string
}

// Record is the step record an ActionRecord asks the driver to store:
// step a.Step's record in Run().Steps, which no action of the same input
// changes again. Valid until the next input.
func (m *Machine) Record(a *Action) StepState { return m.run.Steps[a.Step] }

// Event is the progress event of record action a.
func (m *Machine) Event(a *Action) Event {
	st := &m.run.Steps[a.Step]
	ev := Event{Kind: a.Event, RunID: m.run.ID, Workflow: m.run.Workflow, TraceID: m.run.TraceID, SpanID: m.run.SpanID, StepID: st.ID, Attempt: st.Attempts,
		Time: a.At, Err: st.Error, Status: m.run.Status, Done: a.Done, Total: len(m.wp.steps)}
	switch a.Event {
	case EventStepRetrying:
		ev.Err = a.Msg
	case EventStepStarted:
		ev.Time = st.StartedAt
	case EventStepCompleted, EventStepFailed:
		ev.Time = st.EndedAt
	}
	return ev
}

// Deadline is when running step i must end: its start plus its timeout,
// or the workflow's deadline when that is earlier (in the finally phase,
// only its own timeout).
func (m *Machine) Deadline(i int) time.Time {
	return m.stepDeadline(m.wp.steps[i], m.run.Steps[i].StartedAt)
}

// StepResult is a step's end, as the driver observed it.
type StepResult struct {
	Step     int
	Status   StepStatus // completed or failed (skipped only for a replayed record)
	Output   any
	Content  map[string]any // a tool step's content map (output.go)
	Err      *StepError     // set when Status is failed
	Attempts int
	// StartedAt is informational (the machine keeps the start it
	// decided); EndedAt is the input's time.
	StartedAt time.Time
	EndedAt   time.Time
	Note      string
	// ForceAbort: an explicit abort action (an elicitation's onDecline or
	// onCancel) that fails the run whatever failureMode says.
	ForceAbort bool
	// SkipRemaining: an elicitation's skip_remaining action; every step
	// not started yet is skipped and the run completes.
	SkipRemaining bool
}

// machinePhase is where a run is: its top-level steps, its finally steps,
// or over.
type machinePhase uint8

const (
	phaseMain machinePhase = iota
	phaseFinally
	phaseDone
)

// MachineOptions configure a machine.
type MachineOptions struct {
	// ParentID and ParentStep link a child run to its parent (see
	// RunOptions).
	ParentID   string
	ParentStep string
	// Trigger is the run's Trigger (see RunOptions).
	Trigger string
	// Draft marks the run of an unsaved draft (see RunOptions.Draft).
	Draft bool
	// Owner is the run's owner (RunOptions.Owner).
	Owner string
	// DataGuard, when set, is held while the machine writes the run's
	// template data, for drivers that evaluate templates (Machine.ToolCall,
	// the step executors) on other goroutines under its read side. A
	// single-threaded driver leaves it nil.
	DataGuard sync.Locker
}

// Machine is the deterministic core of one run (see the top of this
// file). It is not safe for concurrent use: the driver serialises its
// inputs.
type Machine struct {
	e     *Engine
	wp    *workflowPlan
	run   *Run
	guard sync.Locker

	view      map[string]any // .steps as maps, when steps is nil
	steps     *stepView      // .steps when the workflow is chainsOnly
	stepsView stepView       // what steps points to
	data      map[string]any // root template data

	pending       []int32
	ready         readyQueue
	loops         *loopState // the run's own priorities, when the workflow has watched loops
	running       int
	done          int
	completed     int       // steps that completed, for .workflow.step_count
	wfFixed       [3]any    // .workflow's id, name and start_time, boxed once
	outcome       RunStatus // the run's outcome once finally steps run, else ""
	decided       outcome   // the outcome, decided when the top-level steps end
	phase         machinePhase
	stopped       bool // start nothing new
	interrupted   bool // stopped (not by an abort) before every step finished
	skipRemaining bool
	cause         StopReason
	firstErr      *StepError
	deadline      time.Time // the end of the workflow timeout
	now           time.Time // the time of the current input
	started       bool

	acts []Action

	// quiet suppresses ActionRecord while a recorded run is replayed;
	// restore holds that replay's state (restore.go).
	quiet   bool
	restore *restoreState
}

// NewMachine validates params against the workflow's input schema
// (applying defaults, as Run does) and returns a machine for a new run
// with id runID. Nothing starts until Start.
func (e *Engine) NewMachine(workflow, runID string, params map[string]any, opts MachineOptions) (*Machine, error) {
	wp, params, err := e.prepareRun(workflow, params)
	if err != nil {
		return nil, err
	}
	m := &Machine{}
	m.init(e, wp, runID, params, opts, nil)
	return m, nil
}

// prepareRun finds a workflow and validates a run's parameters.
func (e *Engine) prepareRun(workflow string, params map[string]any) (*workflowPlan, map[string]any, error) {
	wp, ok := e.lookup(workflow)
	if !ok {
		return nil, nil, fmt.Errorf("%w %q", ErrUnknownWorkflow, workflow)
	}
	params, err := wp.checkParams(params)
	if err != nil {
		return nil, nil, err
	}
	return wp, params, nil
}

// checkParams applies the input limits and validates params against the
// workflow's parameters (defaults filled in). A run without parameters
// gets a copy of what validating none gave when the workflow was
// prepared (noParams), or its error.
func (wp *workflowPlan) checkParams(params map[string]any) (map[string]any, error) {
	if len(params) == 0 {
		if wp.noParamsErr != nil {
			return nil, wp.noParamsErr
		}
		return deepCopy(wp.noParams).(map[string]any), nil
	}
	if err := checkInputLimits(wp.wf.Name, params); err != nil {
		return nil, err
	}
	return wp.validateParams(params)
}

// init sets m up for a new run. sc, when set, lends the run's working
// memory (the local driver's pool, scheduler.go).
func (m *Machine) init(e *Engine, wp *workflowPlan, id string, params map[string]any, opts MachineOptions, sc *runScratch) {
	n := len(wp.steps)
	// m is zero: a new Machine, or a released run's (runState.release),
	// so only what a run sets is written.
	m.e, m.wp, m.guard = e, wp, opts.DataGuard
	var entries []stepEntry
	if sc != nil {
		m.pending, m.ready.items, m.acts, entries = sc.pending, sc.ready[:0], sc.acts[:0], sc.entries
	} else {
		m.pending = make([]int32, n)
		if wp.chainsOnly {
			entries = make([]stepEntry, n)
		}
	}
	m.run = &Run{
		ID:         id,
		Workflow:   wp.wf.Name,
		ParentID:   opts.ParentID,
		ParentStep: opts.ParentStep,
		Trigger:    opts.Trigger,
		Draft:      opts.Draft,
		Owner:      opts.Owner,
		Status:     RunRunning,
		Params:     params,
		PlanDigest: wp.digest,
		// The version of the workflow as it started.
		WorkflowVersion: wp.wf.Version,
		Steps:           make([]StepState, n),
	}
	if len(wp.finallyRoots) > 0 {
		m.run.FinallyFrom = wp.nmain
	}
	copy(m.run.Steps, wp.pendingSteps)
	copy(m.pending, wp.pendingCounts)
	var ls *loopState
	if sc != nil {
		ls = &sc.loops
	}
	m.startPriorities(ls)
	for _, i := range wp.roots {
		m.ready.push(i)
	}
	var steps any
	if wp.chainsOnly {
		m.stepsView = stepView{byID: wp.byID, entries: entries}
		m.steps = &m.stepsView
		for i := range entries {
			entries[i] = stepEntry{content: noContent, status: pendingValue, err: emptyString}
		}
		steps = m.steps
	} else {
		m.view = maps.Clone(wp.pendingView)
		steps = m.view
	}
	// The root map of a chains-only workflow is pooled: a chain starts at
	// one of its keys, so no template can return the map itself.
	if wp.chainsOnly && sc != nil {
		if sc.data == nil {
			sc.data = make(map[string]any, 4)
		}
		m.data = sc.data
	} else {
		m.data = make(map[string]any, 4)
	}
	m.data["params"] = params
	m.data["steps"] = steps
	// A chains-only workflow reads .vars and .workflow only if one of its
	// chains starts there; otherwise nothing can see them.
	if !wp.chainsOnly || wp.chainRoots["vars"] {
		m.data["vars"] = map[string]any{}
	}
}

// Run is the run's record. It changes with every input; once
// ActionFinish has been returned it is final.
func (m *Machine) Run() *Run { return m.run }

// Done reports whether the run is over (ActionFinish was returned).
func (m *Machine) Done() bool { return m.phase == phaseDone }

// StopReason is why the run stopped, or StopNone.
func (m *Machine) StopReason() StopReason { return m.cause }

// Workflow is the workflow the machine runs.
func (m *Machine) Workflow() *ir.Workflow { return m.wp.wf }

// Step is the IR of step i of Run.Steps: a top-level step, or from
// Run.FinallyFrom on a finally step.
func (m *Machine) Step(i int) *ir.Step { return m.wp.steps[i].step }

// Running reports how many steps are running.
func (m *Machine) Running() int { return m.running }

// Start starts the run at at: it evaluates the workflow's vars and
// starts the roots.
func (m *Machine) Start(at time.Time) []Action {
	m.acts = m.acts[:0]
	if m.started {
		return m.acts
	}
	m.begin(at)
	m.next()
	return m.acts
}

// begin sets the start time and evaluates the vars.
func (m *Machine) begin(at time.Time) {
	m.started = true
	m.now = at
	m.run.StartedAt = at
	if m.wp.timeout > 0 {
		m.deadline = at.Add(m.wp.timeout)
	}
	if m.wp.readsWorkflow {
		m.data["workflow"] = m.workflowInfo(workflowRunning, at)
	}
	if serr := m.evalVars(); serr != nil {
		m.firstErr = serr
		m.stopped = true
		return
	}
	m.weighKnownLoops()
}

// tick advances the machine's time to at, or to just after the last
// input when at is not later, so that inputs are strictly ordered.
func (m *Machine) tick(at time.Time) time.Time {
	if !at.After(m.now) {
		at = m.now.Add(time.Nanosecond)
	}
	m.now = at
	return at
}

// StepDone records the end of a running step and starts what follows.
// A result for a step that is not running is ignored.
func (m *Machine) StepDone(res StepResult) []Action {
	m.acts = m.acts[:0]
	if res.Step < 0 || res.Step >= len(m.run.Steps) || m.run.Steps[res.Step].Status != StepRunning || m.phase == phaseDone {
		return m.acts
	}
	res.EndedAt = m.tick(res.EndedAt)
	m.settle(res)
	m.next()
	return m.acts
}

// Retrying records that step's attempt failed and another follows:
// attempt is the attempt that comes next, err the failure (its message
// says when).
func (m *Machine) Retrying(step, attempt int, err *StepError) []Action {
	m.acts = m.acts[:0]
	if step < 0 || step >= len(m.run.Steps) || m.run.Steps[step].Status != StepRunning {
		return m.acts
	}
	st := m.run.Steps[step]
	st.Attempts = attempt
	m.run.Steps[step] = st
	msg := ""
	if err != nil {
		msg = err.Msg
	}
	m.record(step, EventStepRetrying)
	m.acts[len(m.acts)-1].Msg = msg
	return m.acts
}

// Stop stops the run at at for reason: nothing new starts, the driver is
// told to stop the running steps (ActionStop), and once they have
// reported back the run ends. It has no effect once the finally steps
// run (their outcome is decided) or when the run stopped already.
func (m *Machine) Stop(reason StopReason, at time.Time) []Action {
	m.acts = m.acts[:0]
	if m.phase != phaseMain || m.cause != StopNone || reason == StopNone || !m.started {
		return m.acts
	}
	m.tick(at)
	m.stopFor(reason)
	m.next()
	return m.acts
}

// stopFor stops the run for reason (the first reason stays).
func (m *Machine) stopFor(reason StopReason) {
	m.stopped = true
	if m.phase != phaseMain || m.cause != StopNone {
		return
	}
	m.cause = reason
	if reason != StopAbort && m.firstErr == nil {
		m.interrupted = true
	}
	m.acts = append(m.acts, Action{Kind: ActionStop, At: m.now, Cause: reason})
}

// pastDeadline reports whether at is at or past the workflow's deadline
// (never in the finally phase, which has no workflow deadline).
func (m *Machine) pastDeadline(at time.Time) bool {
	return m.phase == phaseMain && !m.deadline.IsZero() && !at.Before(m.deadline)
}

// next starts every step that can start now: it pops ready steps while
// fewer than maxParallel run, settling the ones whose condition is false
// at once. When no step runs and none can start, the phase ends.
func (m *Machine) next() {
	if m.phase == phaseDone {
		return
	}
	if !m.stopped && len(m.ready.items) > 0 {
		if m.pastDeadline(m.now) {
			m.stopFor(StopTimeout) // even if the step that got here ignored its deadline
		}
		m.refreshWorkflow(m.workflowStatus(), m.now)
	}
	for !m.stopped && m.running < m.wp.maxParallel && len(m.ready.items) > 0 {
		m.launch(m.ready.pop())
	}
	if m.running > 0 {
		return
	}
	m.endPhase()
}

// endPhase ends the top-level phase (deciding the outcome and going on
// with the finally steps, if any) or the finally phase.
func (m *Machine) endPhase() {
	if m.phase == phaseMain {
		m.decided = m.decideOutcome()
		if len(m.wp.finallyRoots) > 0 {
			m.startFinally()
			return
		}
	}
	m.finish()
}

// launch starts step i now, or settles it at once when its condition is
// false or cannot be evaluated.
func (m *Machine) launch(i int) {
	sp := m.wp.steps[i]
	if sp.cond != nil {
		v, err := sp.cond.value(m.data)
		if err != nil {
			m.settle(StepResult{Step: i, Status: StepFailed, EndedAt: m.now, Err: templateStepError(sp.id, sp.cond, err, "condition")})
			return
		}
		ok, err := asBool(v)
		if err != nil {
			m.settle(StepResult{Step: i, Status: StepFailed, EndedAt: m.now, Err: &StepError{Step: sp.id, Pos: posOr(sp.cond.src.Pos, sp.step.Pos), Msg: err.Error()}})
			return
		}
		if !ok {
			m.settle(StepResult{Step: i, Status: StepSkipped, EndedAt: m.now, Output: sp.step.DefaultResults, Note: "condition is false"})
			return
		}
	}
	if m.restore != nil && m.restore.launch(m, i) {
		return // replayed from a record (restore.go)
	}
	m.markRunning(i, m.now)
	m.acts = append(m.acts, Action{Kind: ActionStart, Step: i, At: m.now})
}

// markRunning makes step i running as of at and records it.
func (m *Machine) markRunning(i int, at time.Time) {
	sp := m.wp.steps[i]
	// A chains-only workflow's entry of a running step stays pending: its
	// templates read .steps.X only through a chain into X's entry, and
	// only where X is a transitive dependency (the checker's rule), so
	// none reads the entry of a step that has not ended. Other workflows
	// may read .steps whole (a loop body's {{json .steps}}), and see it.
	if m.steps == nil {
		m.setView(sp.id, runningEntry)
	}
	st := &m.run.Steps[i]
	st.Status = StepRunning
	st.StartedAt = at
	st.Attempts = 1
	m.running++
	m.record(i, EventStepStarted)
	if n := len(m.acts); n > 0 && m.acts[n-1].Kind == ActionRecord {
		m.acts[n-1].Durable = m.durableStart(sp)
	}
}

// stepDeadline is when step sp, started at at, must end.
func (m *Machine) stepDeadline(sp *stepPlan, at time.Time) time.Time {
	dl := at.Add(sp.timeout)
	if m.phase == phaseMain && !m.deadline.IsZero() && m.deadline.Before(dl) {
		dl = m.deadline
	}
	return dl
}

// durableStart reports whether a step's start must be durable before it
// runs: it calls a backend or a child workflow and may not run twice.
func (m *Machine) durableStart(sp *stepPlan) bool {
	if sp.kind == ir.StepElicitation {
		return false
	}
	return !m.idempotent(sp)
}

// settle records a step's end (a result, or a decision at launch).
func (m *Machine) settle(res StepResult) {
	i := res.Step
	sp := m.wp.steps[i]
	if m.run.Steps[i].Status == StepRunning {
		m.running--
	}
	errMsg := ""
	output := res.Output
	kind := EventStepCompleted
	switch res.Status {
	case StepFailed:
		kind = EventStepFailed
		if res.Err != nil {
			errMsg = res.Err.Msg
		}
		if m.cause == StopNone && m.pastDeadline(res.EndedAt) {
			m.stopFor(StopTimeout) // however the step saw it end
		}
		switch {
		case m.cause != StopNone:
			// Stopped by cancel, timeout or another step's abort.
			m.stopped = true
		case res.ForceAbort || m.effectiveAction(sp) == ir.ActionAbort:
			m.abort(res.Err)
		default:
			output = sp.step.DefaultResults
		}
	case StepSkipped:
		kind = EventStepSkipped
	case StepCompleted:
		m.completed++
	}
	if res.SkipRemaining {
		m.skipRemaining = true
		m.stopped = true
	}
	m.setEntry(i, output, res.Content, res.Status, errMsg)
	st := &m.run.Steps[i]
	if res.Attempts > 0 {
		st.Attempts = res.Attempts
	}
	st.EndedAt = res.EndedAt
	st.Status = res.Status
	st.Note = res.Note
	st.Error = errMsg
	st.Content = res.Content
	st.Output = output
	m.done++
	m.record(i, kind)
	for _, d := range sp.dependents {
		m.pending[d]--
		if m.pending[d] == 0 {
			m.ready.push(d)
		}
	}
	if m.loops != nil {
		m.noteRead(i)
	}
}

// record appends step i's record and its event kind (or "").
func (m *Machine) record(i int, kind EventKind) {
	if m.quiet {
		return
	}
	m.acts = append(m.acts, Action{Kind: ActionRecord, Event: kind, Step: i, Done: m.done, At: m.now})
}

// effectiveAction is what a failed step does once its retries are spent.
func (m *Machine) effectiveAction(sp *stepPlan) string {
	if sp.finally {
		return ir.ActionContinue // a failed finally step never stops the others
	}
	switch sp.action {
	case ir.ActionContinue:
		return ir.ActionContinue
	case ir.ActionAbort:
		return ir.ActionAbort
	}
	if m.wp.wf.FailureMode == ir.FailureContinue {
		return ir.ActionContinue
	}
	return ir.ActionAbort
}

func (m *Machine) abort(err *StepError) {
	if m.firstErr == nil {
		m.firstErr = err
	}
	m.stopFor(StopAbort)
}

// decideOutcome decides the run's status, error and result once the
// top-level steps have ended, before any finally step runs.
func (m *Machine) decideOutcome() outcome {
	run := m.run
	wf := m.wp.wf
	switch {
	case m.cause == StopInterrupted:
		return outcome{status: RunInterrupted, err: m.firstErr}
	case m.firstErr != nil:
		return outcome{status: RunFailed, err: m.firstErr}
	case m.interrupted:
		if m.cause == StopTimeout {
			return outcome{status: RunTimedOut, err: &StepError{Pos: wf.Pos, Msg: fmt.Sprintf("workflow timed out after %s", m.wp.timeout)}}
		}
		return outcome{status: RunCancelled, err: &StepError{Pos: wf.Pos, Msg: "run cancelled"}}
	}
	if m.skipRemaining {
		for i := range run.Steps[:m.wp.nmain] {
			if run.Steps[i].Status != StepPending {
				continue
			}
			sp := m.wp.steps[i]
			st := run.Steps[i]
			st.Status = StepSkipped
			st.EndedAt = m.now
			st.Output = sp.step.DefaultResults
			st.Note = "skipped by skip_remaining"
			m.setEntry(i, st.Output, nil, StepSkipped, "")
			m.run.Steps[i] = st
			m.done++
			m.record(i, EventStepSkipped)
		}
	}
	m.refreshWorkflow(string(RunCompleted), m.now)
	out, serr := m.compositeResult()
	if serr != nil {
		return outcome{status: RunFailed, err: serr}
	}
	return outcome{status: RunCompleted, output: out}
}

// finish records the outcome on the run and ends it.
func (m *Machine) finish() {
	m.phase = phaseDone
	run := m.run
	run.Status, run.Error, run.Output = m.decided.status, m.decided.err, m.decided.output
	run.EndedAt = m.now
	m.acts = append(m.acts, Action{Kind: ActionFinish, At: m.now})
}

// The run's status as .workflow.status shows it while steps run.
const workflowRunning = "running"

// workflowStatus is .workflow.status: running, and the run's outcome once
// the finally steps run.
func (m *Machine) workflowStatus() string {
	if m.outcome != "" {
		return string(m.outcome)
	}
	return workflowRunning
}

// workflowInfo builds .workflow as of now: ToolHive's id, duration_ms,
// step_count (the steps completed so far), status and start_time (RFC
// 3339), and the workflow's name. The fields that do not change are boxed
// once per run (wfFixed).
func (m *Machine) workflowInfo(status string, now time.Time) map[string]any {
	if m.wfFixed[0] == nil {
		m.wfFixed = [3]any{m.run.ID, m.wp.wf.Name, m.run.StartedAt.Format(time.RFC3339)}
	}
	return map[string]any{
		"id":          m.wfFixed[0],
		"name":        m.wfFixed[1],
		"start_time":  m.wfFixed[2],
		"duration_ms": now.Sub(m.run.StartedAt).Milliseconds(),
		"step_count":  int64(m.completed),
		"status":      status,
	}
}

// refreshWorkflow replaces .workflow with its values as of now, in
// workflows that read it. A fresh map, because a template may have handed
// the old one on as a value.
func (m *Machine) refreshWorkflow(status string, now time.Time) {
	if !m.wp.readsWorkflow {
		return
	}
	w := m.workflowInfo(status, now)
	m.lock()
	m.data["workflow"] = w
	m.unlock()
}

// lock and unlock hold the DataGuard, when there is one, around writes
// to the template data.
func (m *Machine) lock() {
	if m.guard != nil {
		m.guard.Lock()
	}
}

func (m *Machine) unlock() {
	if m.guard != nil {
		m.guard.Unlock()
	}
}

// setEntry replaces step i's .steps entry; a nil content is the empty
// content map.
func (m *Machine) setEntry(i int, output any, content map[string]any, status StepStatus, errMsg string) {
	if content == nil {
		content = noContent
	}
	if m.steps == nil {
		m.setView(m.wp.steps[i].id, map[string]any{"output": output, "content": content, "status": statusValue(status), "error": errMsg})
		return
	}
	var e any = emptyString
	if errMsg != "" {
		e = errMsg
	}
	m.lock()
	m.steps.entries[i] = stepEntry{output: output, content: content, status: statusValue(status), err: e}
	m.unlock()
}

func (m *Machine) setView(id string, entry map[string]any) {
	m.lock()
	m.view[id] = entry
	m.unlock()
}

func (m *Machine) evalVars() *StepError {
	if len(m.wp.vars) == 0 {
		return nil
	}
	vars := make(map[string]any, len(m.wp.vars))
	for i, v := range m.wp.vars {
		x, err := v.value.eval(m.data)
		if err != nil {
			pos := m.wp.wf.Vars[i].Value.Template
			se := &StepError{Pos: m.wp.wf.Pos, Msg: fmt.Sprintf("var %q: %v", v.name, err)}
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
	m.lock()
	m.data["vars"] = vars
	m.unlock()
	return nil
}
