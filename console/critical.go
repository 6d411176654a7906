package console

// The run's critical path: the chain of steps that kept a run from ending
// sooner, read from its recorded times. The plan's critical path (the
// planner's, shown on the workflow page) is the longest chain by step
// count; a run's can differ, because what makes it is how long each step
// really took.
//
// The algorithm works on one scope (the workflow's steps; loop bodies and
// finally steps are not marked) with the plan's dependencies:
//
//  1. The end of the chain is the step that ended last. A step counts when
//     it started; while the run goes on, a running step ends "now".
//  2. From a step, the chain goes back to the dependency that finished
//     last at or before the step started: the one it was waiting for.
//     Dependencies that never ran (skipped) or ended after the step
//     started (which the recorded times of a resumed run can show) are
//     passed over.
//  3. The chain stops at a step with no such dependency: it started as
//     the run began, or when a slot under maxParallel freed up.
//
// Ties go to the step that started first (at the end of the chain), then
// to the one that comes first in the plan, so the result is
// deterministic. While the run is in progress the path shown is the
// critical path so far: the chain that ends at the step that has run the
// longest among those still running (they all end now) or, when none is
// running, at the last step that ended; the page says "so far".

import (
	"time"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/ir"
)

// runCriticalPath returns the plan indices of the run's critical path in
// steps, first step first; recs are the scope's records and now ends the
// steps still running (the run's end once it has ended). It is empty when
// no step started.
func runCriticalPath(steps []*ir.Step, recs []httpapi.StepDetail, now time.Time) []int {
	byID := make(map[string]httpapi.StepDetail, len(recs))
	for _, r := range recs {
		byID[r.ID] = r
	}
	// span is when step i started and ended, and whether it started.
	span := func(i int) (start, end time.Time, ok bool) {
		if i < 0 || i >= len(steps) || steps[i] == nil {
			return
		}
		r, found := byID[steps[i].ID]
		if !found || r.StartedAt.IsZero() {
			return
		}
		end = r.EndedAt
		if end.IsZero() {
			end = now
		}
		return r.StartedAt, end, true
	}
	last := -1
	var lastStart, lastEnd time.Time
	for i := range steps {
		start, end, ok := span(i)
		if ok && (last < 0 || end.After(lastEnd) || end.Equal(lastEnd) && start.Before(lastStart)) {
			last, lastStart, lastEnd = i, start, end
		}
	}
	var chain []int
	for cur, seen := last, map[int]bool{}; cur >= 0 && !seen[cur]; {
		seen[cur] = true
		chain = append(chain, cur)
		start, _, _ := span(cur)
		cur = waitedFor(steps[cur].Deps, start, span)
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain
}

// waitedFor is the dependency (of deps) that ended last at or before
// start, when the step started, or -1: rule 2 above. span gives a step's
// recorded times.
func waitedFor(deps []int, start time.Time, span func(int) (time.Time, time.Time, bool)) int {
	best := -1
	var bestEnd time.Time
	for _, d := range deps {
		_, end, ok := span(d)
		if !ok || end.After(start) {
			continue
		}
		if best < 0 || end.After(bestEnd) || (end.Equal(bestEnd) && d < best) {
			best, bestEnd = d, end
		}
	}
	return best
}
