package main

// The progress display of vmcp call. Engine events arrive synchronously,
// possibly from several goroutines at once; the display keeps the set of
// running steps under a lock. On a terminal it redraws one status line in
// place ("[2/5] running: fetch_logs, fetch_traces") and ends it with the
// run's outcome ("[5/5] run completed", "[2/5] run cancelled"); otherwise
// it prints one line per event, with the time since the run started, so
// logs and CI output stay readable.
//
// Once the user cancels the run (Ctrl-C cancels the context the run was
// started with), a step that ends in failure was stopped by that cancel,
// and is shown as cancelled, not failed, here and in the timeline. The
// engine reports such a step only after it saw the context end, so the
// check is not a race.

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/vmcp-dev/vmcp/runtime"
)

func isattyTerminal(fd uintptr) bool { return isatty.IsTerminal(fd) }

type progressDisplay struct {
	w        io.Writer
	terminal bool

	mu      sync.Mutex
	start   time.Time
	running map[string]bool
	done    int
	total   int
	drawn   bool
	paused  bool // a question is on the terminal
	status  runtime.RunStatus
	// user is the context the user cancels the run with.
	user context.Context
	// cancelled holds the steps that failed because the user cancelled.
	cancelled map[string]bool
}

// newProgressDisplay draws on w the progress of a run started with the
// context user.
func newProgressDisplay(w io.Writer, terminal bool, user context.Context) *progressDisplay {
	return &progressDisplay{w: w, terminal: terminal, user: user, running: map[string]bool{}, cancelled: map[string]bool{}}
}

func (d *progressDisplay) onEvent(ev runtime.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.start.IsZero() {
		d.start = ev.Time
		if d.start.IsZero() {
			d.start = time.Now()
		}
	}
	d.done, d.total = ev.Done, ev.Total
	var line string
	switch ev.Kind {
	case runtime.EventRunStarted:
		line = fmt.Sprintf("run %s of %s started (%d steps)", ev.RunID, ev.Workflow, ev.Total)
	case runtime.EventStepStarted:
		d.running[ev.StepID] = true
		line = fmt.Sprintf("step %s started", ev.StepID)
	case runtime.EventStepRetrying:
		line = fmt.Sprintf("step %s retrying (attempt %d): %s", ev.StepID, ev.Attempt, ev.Err)
	case runtime.EventStepCompleted:
		delete(d.running, ev.StepID)
		line = fmt.Sprintf("step %s completed", ev.StepID)
	case runtime.EventStepFailed:
		delete(d.running, ev.StepID)
		if d.user.Err() != nil {
			d.cancelled[ev.StepID] = true
			line = fmt.Sprintf("step %s cancelled", ev.StepID)
		} else {
			line = fmt.Sprintf("step %s failed: %s", ev.StepID, ev.Err)
		}
	case runtime.EventStepSkipped:
		delete(d.running, ev.StepID)
		line = fmt.Sprintf("step %s skipped", ev.StepID)
	case runtime.EventRunFinished:
		d.status = ev.Status
		line = fmt.Sprintf("run %s", ev.Status)
	default:
		return
	}
	if d.terminal {
		if d.paused {
			return
		}
		d.redraw()
		if (ev.Kind == runtime.EventStepFailed && !d.cancelled[ev.StepID]) || ev.Kind == runtime.EventStepRetrying {
			fmt.Fprintf(d.w, "\r\x1b[K%s\n", line)
			d.redraw()
		}
		return
	}
	at := ev.Time
	if at.IsZero() {
		at = time.Now()
	}
	fmt.Fprintf(d.w, "[%d/%d] +%s %s\n", ev.Done, ev.Total, formatElapsed(at.Sub(d.start)), line)
}

// formatElapsed prints an offset from the run's start. An event stamped
// just before the display's start (clock skew at the run's first step)
// would print "+-0.000s"; it is clamped at zero.
func formatElapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return fmt.Sprintf("%.3fs", d.Seconds())
}

// redraw rewrites the status line; callers hold mu.
func (d *progressDisplay) redraw() {
	status := fmt.Sprintf("[%d/%d]", d.done, d.total)
	if len(d.running) > 0 {
		status += " running: " + strings.Join(sortedKeys(d.running), ", ")
	}
	fmt.Fprintf(d.w, "\r\x1b[K%s", status)
	d.drawn = true
}

// pause stops (true) and resumes (false) drawing, so that a question on
// the terminal is not overwritten.
func (d *progressDisplay) pause(p bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.paused = p
	if !d.terminal {
		return
	}
	if p {
		fmt.Fprint(d.w, "\r\x1b[K")
		return
	}
	d.redraw()
}

// stepStatus is how the display names a finished step's status: a step
// that failed because the user cancelled is "cancelled".
func (d *progressDisplay) stepStatus(st runtime.StepState) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if st.Status == runtime.StepFailed && d.cancelled[st.ID] {
		return "cancelled"
	}
	return string(st.Status)
}

// finish ends the status line on a terminal with the run's outcome.
func (d *progressDisplay) finish() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.terminal && d.drawn {
		outcome := "run " + string(d.status)
		if d.status == "" {
			outcome = "run did not finish"
		}
		fmt.Fprintf(d.w, "\r\x1b[K[%d/%d] %s\n", d.done, d.total, outcome)
	}
}
