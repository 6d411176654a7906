package console

// The run timeline: every step of a run, of its loop iterations and of its
// child runs, as a bar on one time axis.
//
// The axis runs from the run's start to its end (or to now while it runs).
// A step's bar starts at its StartedAt and ends at its EndedAt (now while
// it runs), both as percentages of the axis, so bars of steps that ran at
// once overlap on the screen as they did in time. Body steps of a loop and
// the steps of child runs are placed on the same axis, with their real
// times: an iteration that waited for a slot under maxParallel starts
// later, visibly.
//
// Waiting is drawn too, as a faint bar before the step's own:
//   - a step with dependencies became ready when its last dependency
//     ended; from the end of its first dependency to its start it was
//     waiting for the others, and the dependency that ended last (the
//     slow sibling) is named;
//   - any gap between "ready" and the start beyond a few milliseconds is
//     waiting for a free slot (maxParallel).
//
// Scopes: dependencies are indices into the step list of their own scope
// (the workflow's steps, or a loop body's), so each scope is laid out with
// its own ir steps and the records of that scope (the run's Steps, or one
// iteration's).
//
// Bars get a minimum width so that a 1 ms step stays visible; labels on
// the axis are at round intervals (1, 2 or 5 times a power of ten ms).

import (
	"fmt"
	"math"
	"time"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// minBarPercent is the narrowest bar drawn, as a percentage of the axis.
const minBarPercent = 0.4

// slotWaitThreshold is the smallest gap between ready and start that is
// drawn as waiting for a slot (with 2% of the axis, whichever is more).
const slotWaitThreshold = 5 * time.Millisecond

// axis maps times to percentages of the timeline's width.
type axis struct {
	start time.Time
	span  time.Duration
	Ticks []tick
}

type tick struct {
	Left  float64
	Label string
}

func newAxis(start, end time.Time) axis {
	span := end.Sub(start)
	if span < time.Millisecond {
		span = time.Millisecond
	}
	a := axis{start: start, span: span}
	step := niceStep(span / 5)
	for t := time.Duration(0); t <= span; t += step {
		a.Ticks = append(a.Ticks, tick{Left: a.pct(start.Add(t)), Label: formatDuration(t)})
	}
	return a
}

// niceStep rounds d up to 1, 2 or 5 times a power of ten milliseconds.
func niceStep(d time.Duration) time.Duration {
	ms := float64(d) / float64(time.Millisecond)
	if ms < 1 {
		return time.Millisecond
	}
	p := math.Pow(10, math.Floor(math.Log10(ms)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= ms {
			return time.Duration(m * p * float64(time.Millisecond))
		}
	}
	return time.Duration(10 * p * float64(time.Millisecond))
}

func (a axis) pct(t time.Time) float64 {
	p := float64(t.Sub(a.start)) / float64(a.span) * 100
	return math.Max(0, math.Min(100, p))
}

// bar is a step's place on the axis.
type bar struct {
	Left, Width         float64
	WaitLeft, WaitWidth float64 // zero width: no wait drawn
	WaitNote            string
}

// place computes the bar of a step record st, whose dependencies in its
// scope are deps (their records), with scopeStart the time its scope
// began (the run's or the iteration's start, as far as known).
func (a axis) place(st httpapi.StepDetail, deps []httpapi.StepDetail, depIDs []string, scopeStart, now time.Time) bar {
	if st.StartedAt.IsZero() {
		return bar{}
	}
	end := st.EndedAt
	if end.IsZero() {
		end = now
	}
	b := bar{Left: a.pct(st.StartedAt)}
	b.Width = math.Max(minBarPercent, a.pct(end)-b.Left)
	if b.Left+b.Width > 100 {
		b.Left = math.Max(0, 100-b.Width)
	}
	// ready: when the last dependency ended (the scope's start without
	// dependencies); waitFrom: when the first one ended.
	ready, waitFrom, slowest := scopeStart, time.Time{}, ""
	for i, d := range deps {
		if d.EndedAt.IsZero() {
			continue
		}
		if waitFrom.IsZero() || d.EndedAt.Before(waitFrom) {
			waitFrom = d.EndedAt
		}
		if slowest == "" || d.EndedAt.After(ready) {
			ready, slowest = d.EndedAt, depIDs[i]
		}
	}
	if waitFrom.IsZero() {
		waitFrom = ready
	}
	var notes []string
	if len(deps) > 1 && slowest != "" && ready.Sub(waitFrom) > slotWaitThreshold {
		notes = append(notes, fmt.Sprintf("waited %s for %s (the last dependency to end)", formatDuration(ready.Sub(waitFrom)), slowest))
	}
	// A gap of a few ms is the engine's own start-up, not a wait: only a
	// gap over slotWaitThreshold and 2% of the axis counts.
	if gap := st.StartedAt.Sub(ready); gap > max(slotWaitThreshold, a.span/50) && !ready.IsZero() {
		notes = append(notes, fmt.Sprintf("waited %s for a free slot (maxParallel)", formatDuration(gap)))
	}
	if len(notes) > 0 && !waitFrom.IsZero() && st.StartedAt.After(waitFrom) {
		b.WaitLeft = a.pct(waitFrom)
		b.WaitWidth = math.Max(0, b.Left-b.WaitLeft)
		b.WaitNote = notes[0]
		if len(notes) > 1 {
			b.WaitNote += "; " + notes[1]
		}
	}
	return b
}

// formatDuration prints d for people: "850ms", "1.25s", "3m04s".
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.3gs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// stepInfo is what the plan says about a step, for its row.
type stepInfo struct {
	Pos      string // file:line:col
	Action   string // "logs.fetch", "workflow triage", "elicitation", "forEach"
	Critical bool
	Deps     []string
	Body     []*ir.Step // a loop body's steps (steps: form)
}

// scopeInfo describes the steps of one scope (a workflow, or a loop body)
// by id.
func scopeInfo(steps []*ir.Step, critical []int) map[string]stepInfo {
	crit := map[int]bool{}
	for _, i := range critical {
		crit[i] = true
	}
	out := make(map[string]stepInfo, len(steps))
	for i, s := range steps {
		if s == nil {
			continue
		}
		info := stepInfo{Pos: s.Pos.String(), Action: action(s), Critical: crit[i]}
		for _, d := range s.Deps {
			if d >= 0 && d < len(steps) && steps[d] != nil {
				info.Deps = append(info.Deps, steps[d].ID)
			}
		}
		if s.ForEach != nil {
			info.Body = s.ForEach.Steps
		}
		out[s.ID] = info
	}
	return out
}

func action(s *ir.Step) string {
	switch s.Type {
	case ir.StepTool, "":
		if s.Tool != nil {
			return s.Tool.Backend + "." + s.Tool.Name
		}
	case ir.StepWorkflow:
		if s.Workflow != nil {
			return "workflow " + s.Workflow.Name
		}
	case ir.StepForEach:
		if s.ForEach != nil && s.ForEach.Step != nil {
			return "forEach: " + action(s.ForEach.Step)
		}
		return "forEach"
	}
	return s.Type
}

// statusOf returns a step record's status as a string for data-status.
func statusOf(s runtime.StepStatus) string {
	if s == "" {
		return string(runtime.StepPending)
	}
	return string(s)
}
