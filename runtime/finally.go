package runtime

// Finally steps: the workflow's finally list runs once every top-level
// step has ended, whatever the outcome.
//
// The finally steps follow the top-level steps in workflowPlan.steps
// (indexes nmain and up), so the scheduler runs them with the same ready
// queue, workers, records and events. They are not roots of the run: the
// top-level phase never starts them, because no top-level step is a
// dependency of a finally step. Once that phase is over (execute):
//
//  1. The outcome is decided as if there were no finally steps: the
//     status (completed, failed, cancelled or timed_out), the error, and
//     for a completed run the composite result. Nothing a finally step
//     does changes it.
//  2. .workflow.status becomes that status, and every top-level step that
//     ended without an output of its own (failed, or never started)
//     shows its defaultResults as .steps.X.output, as the checker's
//     defaultResults rule for finally steps promises (an empty object
//     when it has none, so that index reads yield nothing).
//  3. The finally phase gets a context of its own, detached from the
//     caller's (a client that cancelled is gone, and a cancelled run must
//     still clean up) and without the workflow deadline (which may have
//     passed): each finally step is bounded by its own timeout, so the
//     phase takes at most ir.Workflow.FinallyBound. Cancel and the end of
//     the caller's context no longer stop anything: the outcome is
//     decided and the phase is bounded.
//  4. The finally roots are queued and the scheduler loop runs again. A
//     failed finally step is failed with its defaultResults as output and
//     its dependents still run (effectiveAction is continue); it is
//     recorded in the run and named by Run.FailedFinally.
//  5. The run is recorded with the outcome of step 1.

import (
	"context"
	"fmt"
	"text/template"
	"time"

)

// prepareFinally appends the workflow's finally steps to wp.steps.
func (wp *workflowPlan) prepareFinally(funcs template.FuncMap) error {
	wf := wp.wf
	for i, s := range wf.Finally {
		sp, err := prepareStep(s, funcs)
		if err != nil {
			return fmt.Errorf("workflow %q: finally: %w", wf.Name, err)
		}
		sp.index = wp.nmain + i
		sp.finally = true
		sp.base = wp.nmain
		// The IR counts a finally step's Deps and Dependents within
		// Finally; the run counts them in wp.steps, after the main steps.
		sp.dependents = make([]int, len(s.Dependents))
		for k, d := range s.Dependents {
			sp.dependents[k] = wp.nmain + d
		}
		wp.steps = append(wp.steps, sp)
		wp.byID[s.ID] = sp
	}
	return nil
}

// outcome is how a run ended, decided before its finally steps run.
type outcome struct {
	status RunStatus
	err    *StepError
	output any
}

// startFinally begins the finally phase once the top-level steps have
// ended with the outcome m.decided: the driver is told (ActionFinally),
// the outcome is shown to the finally steps, and their roots are queued.
func (m *Machine) startFinally() {
	m.phase = phaseFinally
	m.stopped, m.skipRemaining = false, false
	m.cause = StopNone
	m.ready.items = m.ready.items[:0]
	m.acts = append(m.acts, Action{Kind: ActionFinally, At: m.now})
	m.exposeOutcome(m.decided.status)
	for _, i := range m.wp.finallyRoots {
		m.ready.push(i)
	}
	m.next()
}

// enterFinally gives the finally steps a context of their own: detached
// from the caller's, without the workflow deadline, and no longer
// stopped by Cancel. Called with sched held and no step running.
func (r *runState) enterFinally() {
	r.dlMu.Lock()
	defer r.dlMu.Unlock()
	r.endDeadlines()
	clear(r.deadlines)
	r.deadlines, r.spent = r.deadlines[:0], nil
	r.finalPhase = true
	r.cancel(nil)
	r.parent = context.WithoutCancel(r.parent)
	r.ctx, r.cancel = context.WithCancelCause(r.parent)
	r.ctxDeadline = time.Time{}
}

// exposeOutcome sets .workflow.status to the run's outcome and shows the
// defaultResults of every top-level step that ended without an output of
// its own (an empty object when it has none). The step records keep what
// happened.
func (m *Machine) exposeOutcome(status RunStatus) {
	m.outcome = status
	m.refreshWorkflow(string(status), m.now)
	for i, st := range m.run.Steps[:m.wp.nmain] {
		if st.Output != nil || st.Status == StepCompleted || st.Status == StepSkipped {
			continue
		}
		// Without defaultResults the checker allowed only index reads: an
		// empty object makes them yield nothing instead of failing on nil.
		var shown any = map[string]any{}
		if defaults := m.wp.steps[i].step.DefaultResults; defaults != nil {
			shown = defaults
		}
		m.setEntry(i, shown, nil, st.Status, st.Error)
	}
}
