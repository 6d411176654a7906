package runtime

// Workflow steps. A `type: workflow` step runs another workflow of the
// same plan (its callee) as a child run: Engine.Run with the step's
// evaluated arguments as parameters (coerced to the callee's parameter
// types, then validated as any caller's would be), a new run id, and
// RunOptions.ParentID/ParentStep, which the Run record and the store keep,
// so the child is listed under its parent (RunFilter.Parent). The step's
// output is the child's result, exactly what the composite tool returns
// (its output shaping, its single sink's output, or the sinks keyed by
// id).
//
// The child runs on the step's goroutine under the step's context, so:
//   - cancelling or aborting the parent ends the step context, which ends
//     the child's run context, which cancels the child's backend calls;
//   - the step's timeout bounds the child, and the child's own workflow
//     timeout applies inside it;
//   - a child that does not complete fails the step with the child's error
//     (and run id), and the step's onError decides as for a tool step
//     (continue with defaultResults, retry with a fresh child run per
//     attempt, abort).
//
// Backend slots (LimitCalls) are taken per backend call, never per step,
// so a parent step waiting for its child holds none: children share the
// server-wide slots with every other run and cannot deadlock on them.
//
// New links each workflow step to its callee once (linkCallees) and
// refuses a plan whose workflow steps name an unknown workflow or recurse,
// which the compiler reports too, for plans that were edited or built by
// hand.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

// linkCallees sets the callee of every workflow step of workflows
// (forEach inner steps included) among wfs, and checks that no workflow
// reaches itself.
func linkCallees(workflows []*ir.Workflow, wfs map[string]*workflowPlan) error {
	for _, wf := range workflows {
		var err error
		for _, sp := range wfs[wf.Name].steps {
			sp.eachStep(func(s *stepPlan) {
				if err != nil || s.kind != ir.StepWorkflow {
					return
				}
				callee, ok := wfs[s.step.Workflow.Name]
				if !ok {
					err = fmt.Errorf("workflow %q: step %q (%s) runs workflow %q, which the plan does not define",
						wf.Name, s.id, s.step.Workflow.Pos, s.step.Workflow.Name)
					return
				}
				s.callee = callee
			})
		}
		if err != nil {
			return err
		}
	}
	// Depth-first search over the call graph: a callee still on the path
	// is a cycle.
	const (
		unvisited = iota
		onPath
		done
	)
	state := map[*workflowPlan]int{}
	var path []string
	var visit func(wp *workflowPlan) error
	visit = func(wp *workflowPlan) error {
		state[wp] = onPath
		path = append(path, wp.wf.Name)
		var calls []*stepPlan
		for _, sp := range wp.steps {
			sp.eachStep(func(s *stepPlan) {
				if s.callee != nil {
					calls = append(calls, s)
				}
			})
		}
		for _, s := range calls {
			switch state[s.callee] {
			case onPath:
				return fmt.Errorf("workflow recursion: %s -> %s (step %q, %s)",
					strings.Join(path, " -> "), s.callee.wf.Name, s.id, s.step.Workflow.Pos)
			case unvisited:
				if err := visit(s.callee); err != nil {
					return err
				}
			}
		}
		path = path[:len(path)-1]
		state[wp] = done
		return nil
	}
	for _, wf := range workflows {
		if wp := wfs[wf.Name]; state[wp] == unvisited {
			if err := visit(wp); err != nil {
				return err
			}
		}
	}
	return nil
}

// runChild runs sp's callee once as a child of this run and returns its
// result, or the child's failure as an attempt error. For retryOn, a child
// that could not start is an error, one that ran past the attempt's
// attemptTimeout a timeout, and one that ended without completing a
// toolError (as the composite tool would return an isError result).
func (r *runState) runChild(ctx context.Context, sp, policy *stepPlan, args map[string]any) (any, error) {
	name := sp.callee.wf.Name
	actx, cancel := policy.tuning.attemptContext(ctx)
	defer cancel()
	child, err := r.e.Run(actx, name, args, RunOptions{Elicitor: r.env.Elicitor, ParentID: r.run.ID, ParentStep: sp.id, Owner: r.run.Owner})
	a := childAttempt(name, child, err, ctx.Err() == nil && actx.Err() != nil, policy.tuning.attemptTimeout)
	if !a.OK {
		return nil, &attemptError{msg: a.Msg, cause: err, kind: a.Kind}
	}
	return a.Output, nil
}

// childAttempt is the outcome of one child run of a workflow step: child
// and err are what Engine.Run returned, timedOut that the attempt hit
// attemptTimeout. For retryOn, a child that could not start is an error,
// one that ran past attemptTimeout a timeout, and one that ended without
// completing a toolError (as the composite tool would return an isError
// result).
func childAttempt(name string, child *Run, err error, timedOut bool, attemptTimeout time.Duration) Attempt {
	if err != nil {
		return Attempt{Kind: FailureError, Msg: fmt.Sprintf("workflow %s: %v", name, err)}
	}
	if child.Status == RunCompleted {
		return Attempt{OK: true, Output: child.Output}
	}
	msg := fmt.Sprintf("workflow %s (run %s) %s", name, child.ID, child.Status)
	if child.Error != nil {
		msg += ": " + child.Error.Error()
	}
	if timedOut {
		return Attempt{Kind: FailureTimeout, Msg: msg + fmt.Sprintf(" (the attempt timed out after %s, attemptTimeout)", attemptTimeout)}
	}
	return Attempt{Kind: FailureToolError, Msg: msg}
}
