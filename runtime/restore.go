package runtime

// Replay and resume: a recorded run fed back into a fresh machine.
//
// A run's record (Run.Steps: each step's status, output, content,
// attempts, start and end) holds every result the machine was fed. The
// machine decides the rest by itself: which step starts when, the
// conditions, the failure actions, the outcome. So feeding the recorded
// results in the order they came brings a fresh machine to the state the
// run had. The order is the order of EndedAt: the machine raises each
// input's time past the previous one (Machine.tick), so the recorded end
// times of the fed results are strictly increasing.
//
// The replay (restoreFrom) starts the machine at the record's StartedAt.
// Whenever the machine starts a step, the record says what became of it:
//
//   - completed or failed: the step is running (quietly: no record, no
//     action) until its recorded result is fed;
//   - skipped: the machine settles it (its condition is false again);
//   - pending or running: the step was in flight or not yet started when
//     the record ends. Resuming (live), the step is held; replaying a
//     finished run, the run must have been stopped before it (below).
//     A step is recorded running only once a call of it may have reached
//     its backend: a step whose call waited for a backend slot
//     (LimitCalls) is still pending in the record (dispatch.go).
//
// Then the in-flight step with the earliest recorded end is fed its
// result, and so on until none is in flight.
//
// Resume (Engine.Resume, live) then decides the held steps at the resume
// time, in the order they were started: a step recorded running that
// called a backend is started again only when it may run twice
// (idempotent: true on the step, the backend tool's idempotentHint or
// readOnlyHint, for a loop every call of its body, for a workflow step
// every call of the child); an elicitation is asked again. Otherwise the
// step fails with an error saying why and the run ends interrupted; the
// other held steps go back to pending. A step recorded pending starts as
// a new step would.
//
// Stops. A cancel or a workflow timeout is an input the record does not
// hold. Replaying a cancelled or timed-out run, the stop is placed where
// the record shows it: before the first fed result after which the
// machine would start a step the record never started, or that fails
// with abort (a stopped run has no first error), or before the last
// result. The replay runs once without a stop, finds that place, and
// runs again with the stop there.

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

// restoreState is a replay in progress.
type restoreState struct {
	rec  *Run
	live bool // resuming: steps the record did not finish really start
	// inflight marks the steps running in the machine until their
	// recorded result is fed; held lists the steps a live replay starts
	// once the record is fed, in the order the machine started them.
	inflight []bool
	held     []int
	// diverged is the feed position (0-based) at which a finished run's
	// replay left the record: the stop goes before that result.
	diverged int
}

// errReplayDiverged says a record cannot be the record of this workflow.
var errReplayDiverged = errors.New("the record does not match the workflow")

// launch is the replay's part of Machine.launch, once step i's condition
// held: it reports whether it took care of the step.
func (rs *restoreState) launch(m *Machine, i int) bool {
	st := rs.rec.Steps[i]
	switch st.Status {
	case StepCompleted, StepFailed:
		m.markRunning(i, st.StartedAt)
		rs.inflight[i] = true
		return true
	case StepSkipped:
		// The condition held now, so the step was skipped by
		// skip_remaining or ended as skipped some other way: keep that.
		m.markRunning(i, st.StartedAt)
		rs.inflight[i] = true
		return true
	}
	if !rs.live {
		// A finished run that never started this step was stopped.
		if rs.diverged < 0 {
			rs.diverged = -2 // the position is set by the feed loop
		}
		m.ready.push(i)
		m.stopped = true
		return true
	}
	s := m.run.Steps[i]
	s.Status = StepRunning
	m.run.Steps[i] = s
	m.running++
	m.setEntry(i, nil, nil, StepRunning, "")
	rs.held = append(rs.held, i)
	return true
}

// recordedResult is step k's recorded end as a StepResult.
func (rs *restoreState) recordedResult(m *Machine, k int) StepResult {
	st := rs.rec.Steps[k]
	sp := m.wp.steps[k]
	res := StepResult{Step: k, Status: st.Status, Output: st.Output, Content: st.Content, Attempts: st.Attempts, StartedAt: st.StartedAt, EndedAt: st.EndedAt, Note: st.Note}
	switch st.Status {
	case StepFailed:
		res.Err = &StepError{Step: sp.id, Pos: sp.step.Pos, Msg: st.Error}
		if e := rs.rec.Error; e != nil && e.Step == sp.id && e.Msg == st.Error {
			c := *e // the run's error keeps the position
			res.Err = &c
		}
		res.ForceAbort = sp.kind == ir.StepElicitation && st.Note == noteElicitAbort
	case StepCompleted:
		if sp.kind == ir.StepElicitation {
			if out, ok := st.Output.(map[string]any); ok && out["skipped"] == true {
				res.SkipRemaining = true
			}
		}
	}
	return res
}

// nextRecorded is the in-flight step with the earliest recorded end, or -1.
func (rs *restoreState) nextRecorded() int {
	best := -1
	for k, on := range rs.inflight {
		if !on {
			continue
		}
		if best < 0 || rs.rec.Steps[k].EndedAt.Before(rs.rec.Steps[best].EndedAt) {
			best = k
		}
	}
	return best
}

// stopReasonOf is the stop that ended a finished run of status s.
func stopReasonOf(s RunStatus) StopReason {
	switch s {
	case RunCancelled:
		return StopCancel
	case RunTimedOut:
		return StopTimeout
	}
	return StopNone
}

// restoreFrom replays rec into m, a machine fresh from init (see the top
// of the file). stopAt is the feed position before which a finished
// run's stop goes, or -1. It returns, for a finished run, the position at
// which the replay left the record (-1 when it did not).
func (m *Machine) restoreFrom(rec *Run, live bool, stopAt int) int {
	rs := &restoreState{rec: rec, live: live, inflight: make([]bool, len(m.wp.steps)), diverged: -1}
	m.acts = m.acts[:0]
	m.restore = rs
	m.quiet = true
	m.run.StartedAt = rec.StartedAt
	m.begin(rec.StartedAt)
	m.next()
	stopped := stopReasonOf(rec.Status)
	findStop := !live && stopped != StopNone && stopAt < 0
	lastMain := -1 // the feed position of the last top-level result
	for fed := 0; m.phase != phaseDone; fed++ {
		k := rs.nextRecorded()
		if k < 0 {
			break
		}
		res := rs.recordedResult(m, k)
		if !live && stopped != StopNone && m.cause == StopNone && m.phase == phaseMain {
			if fed == stopAt {
				m.tick(res.EndedAt.Add(-time.Nanosecond))
				m.stopFor(stopped)
			} else if findStop && res.Status == StepFailed && (res.ForceAbort || m.effectiveAction(m.wp.steps[k]) == ir.ActionAbort) {
				return fed // a stopped run has no first error: the stop came before
			}
		}
		if m.phase == phaseMain {
			lastMain = fed
		}
		rs.inflight[k] = false
		res.EndedAt = m.tick(res.EndedAt)
		m.settle(res)
		m.next()
		if rs.diverged == -2 {
			return fed
		}
	}
	if findStop && m.cause == StopNone && lastMain >= 0 {
		// Nothing showed the stop: it came before the last top-level
		// result, with nothing left to start.
		return lastMain
	}
	return -1
}

// resumeHeld decides the steps a live replay held, at at (see the top of
// the file), and starts what follows.
func (m *Machine) resumeHeld(at time.Time) {
	rs := m.restore
	m.quiet, m.restore = false, nil
	m.tick(at)
	if m.pastDeadline(m.now) {
		m.stopFor(StopTimeout) // resumed after the workflow's deadline
	}
	for _, i := range rs.held {
		sp := m.wp.steps[i]
		if rs.rec.Steps[i].Status != StepRunning || m.restartable(sp) {
			continue
		}
		m.interruptStep(i)
	}
	for _, i := range rs.held {
		if m.run.Steps[i].Status != StepRunning {
			continue
		}
		if m.stopped {
			// Not started again: back to pending, as the record says.
			st := m.run.Steps[i]
			st.Status, st.StartedAt, st.Attempts = StepPending, time.Time{}, 0
			m.run.Steps[i] = st
			m.running--
			m.setEntry(i, nil, nil, StepPending, "")
			m.record(i, "") // a record without an event
			continue
		}
		m.running--
		m.markRunning(i, m.now)
		m.acts = append(m.acts, Action{Kind: ActionStart, Step: i, At: m.now})
	}
	m.next()
}

// Notes on records the replay reads back.
const (
	// noteElicitAbort marks an elicitation that failed by its abort
	// action, which fails the run whatever failureMode says.
	noteElicitAbort = "the step's action is abort: the run fails whatever failureMode says"
	// noteInterrupted marks the step a resumed run could not call again.
	noteInterrupted = "in flight when vmcp stopped"
)

// Restore continues a stored run in m, a machine fresh from NewMachine for
// the run's workflow and parameters: rec's finished steps are replayed
// (never run again) and the steps it left in flight or pending are
// decided at at, as Engine.Resume describes. It returns the actions to
// perform, as Start does. rec must be a running run of m's workflow.
func (m *Machine) Restore(rec *Run, at time.Time) ([]Action, error) {
	if m.started {
		return nil, errors.New("restore: the machine has started already")
	}
	if err := m.wp.matchRecord(rec); err != nil {
		return nil, err
	}
	m.run.ID, m.run.ParentID, m.run.ParentStep, m.run.Owner = rec.ID, rec.ParentID, rec.ParentStep, rec.Owner
	m.wfFixed = [3]any{}
	return m.resume(rec, at), nil
}

// resume is Restore once rec is known to match.
func (m *Machine) resume(rec *Run, at time.Time) []Action {
	m.restoreFrom(rec, true, -1)
	m.resumeHeld(at)
	return m.acts
}

// ErrPlanChanged is returned for a record made under another plan of its
// workflow (Run.PlanDigest differs from the engine's).
var ErrPlanChanged = errors.New("its plan changed since the run started")

// matchRecord checks that rec is a record of wp's workflow.
func (wp *workflowPlan) matchRecord(rec *Run) error {
	if rec.Workflow != wp.wf.Name {
		return fmt.Errorf("run %q is a run of workflow %q, not %q", rec.ID, rec.Workflow, wp.wf.Name)
	}
	if rec.PlanDigest != "" && rec.PlanDigest != wp.digest {
		return fmt.Errorf("run %q ran another version of workflow %q: %w", rec.ID, wp.wf.Name, ErrPlanChanged)
	}
	if len(rec.Steps) != len(wp.steps) {
		return fmt.Errorf("run %q has %d steps but workflow %q has %d now: its plan changed since the run started", rec.ID, len(rec.Steps), wp.wf.Name, len(wp.steps))
	}
	for i, st := range rec.Steps {
		if st.ID != wp.steps[i].id {
			return fmt.Errorf("run %q: step %d is %q in the record but %q in workflow %q: its plan changed since the run started", rec.ID, i, st.ID, wp.steps[i].id, wp.wf.Name)
		}
	}
	return nil
}

// Replay feeds a finished run's record into a fresh machine and returns
// the run the machine decides: for a record this engine made, equal to
// rec (the replay test shows it). Nothing is called and nothing is
// stored. It is how a driver checks that a record and a plan agree.
func (e *Engine) Replay(rec *Run) (*Run, error) {
	wp, ok := e.lookup(rec.Workflow)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownWorkflow, rec.Workflow)
	}
	if !rec.Status.Finished() {
		return nil, fmt.Errorf("run %q is %s: only a finished run replays (a running one resumes)", rec.ID, rec.Status)
	}
	if err := wp.matchRecord(rec); err != nil {
		return nil, err
	}
	stopAt := -1
	for range 2 {
		m := &Machine{}
		m.init(e, wp, rec.ID, rec.Params, MachineOptions{ParentID: rec.ParentID, ParentStep: rec.ParentStep, Owner: rec.Owner}, nil)
		at := m.restoreFrom(rec, false, stopAt)
		if at < 0 {
			if !m.Done() {
				return m.run, fmt.Errorf("replay of run %q: %w (it ends with steps in flight)", rec.ID, errReplayDiverged)
			}
			return m.run, nil
		}
		stopAt = at
	}
	return nil, fmt.Errorf("replay of run %q: %w", rec.ID, errReplayDiverged)
}

// restartable reports whether a step that was in flight when vmcp
// stopped may be started again.
func (m *Machine) restartable(sp *stepPlan) bool {
	return sp.kind == ir.StepElicitation || m.idempotent(sp)
}

// whyNotRestartable names what makes sp unsafe to call twice.
func (m *Machine) whyNotRestartable(sp *stepPlan) string {
	switch sp.kind {
	case ir.StepForEach:
		return "its loop makes calls that are not idempotent"
	case ir.StepWorkflow:
		return "its workflow makes calls that are not idempotent"
	}
	return "is not idempotent"
}

// idempotent reports whether calling sp twice has the effect of calling
// it once: idempotent: true on the step, or every call it makes is
// idempotent (a tool by its annotations, a loop's inner step or body, a
// child workflow's steps).
func (m *Machine) idempotent(sp *stepPlan) bool {
	return m.e.stepIdempotent(sp.step, 0)
}

// stepIdempotent is idempotent for an IR step; depth bounds the walk
// through child workflows (recursion is a compile error; this only
// guards a hand-built plan).
func (e *Engine) stepIdempotent(s *ir.Step, depth int) bool {
	if s == nil || depth > 16 {
		return false
	}
	if s.Idempotent {
		return true
	}
	switch s.Type {
	case ir.StepElicitation:
		return true // asking again calls nothing
	case ir.StepForEach:
		fe := s.ForEach
		if fe == nil {
			return false
		}
		if fe.Step != nil {
			return e.stepIdempotent(fe.Step, depth+1)
		}
		return len(fe.Steps) > 0 && !slices.ContainsFunc(fe.Steps, func(b *ir.Step) bool { return !e.stepIdempotent(b, depth+1) })
	case ir.StepWorkflow:
		if s.Workflow == nil {
			return false
		}
		wp, ok := e.lookup(s.Workflow.Name)
		if !ok {
			return false
		}
		return !slices.ContainsFunc(wp.wf.Steps, func(c *ir.Step) bool { return !e.stepIdempotent(c, depth+1) })
	}
	if s.Tool == nil {
		return false
	}
	if h, ok := e.schemas.(ToolHintSource); ok {
		if hints, ok := h.ToolHints(s.Tool.Backend, s.Tool.Name); ok {
			return hints.Idempotent || hints.ReadOnly
		}
	}
	return false
}

// ToolHintSource is implemented by a SchemaSource that also knows the
// backend tools' annotations. The engine reads them to decide whether a
// step left in flight by a crash may be called again (Engine.Resume).
type ToolHintSource interface {
	ToolHints(backend, tool string) (ToolHints, bool)
}

// ToolHints are the MCP annotations of a backend tool that matter to
// resume.
type ToolHints struct {
	ReadOnly   bool // readOnlyHint
	Idempotent bool // idempotentHint
}
