package main

// The progress display of vmcp call. Engine events arrive synchronously,
// possibly from several goroutines at once; the display keeps the set of
// running steps under a lock. On a terminal it redraws one status line in
// place ("[2/5] running: fetch_logs, fetch_traces"); otherwise it prints one
// line per event, with the time since the run started, so logs and CI
// output stay readable.

import (
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
}

func newProgressDisplay(w io.Writer, terminal bool) *progressDisplay {
	return &progressDisplay{w: w, terminal: terminal, running: map[string]bool{}}
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
		line = fmt.Sprintf("step %s failed: %s", ev.StepID, ev.Err)
	case runtime.EventStepSkipped:
		delete(d.running, ev.StepID)
		line = fmt.Sprintf("step %s skipped", ev.StepID)
	case runtime.EventRunFinished:
		line = fmt.Sprintf("run %s", ev.Status)
	default:
		return
	}
	if d.terminal {
		if d.paused {
			return
		}
		d.redraw()
		if ev.Kind == runtime.EventStepFailed || ev.Kind == runtime.EventStepRetrying {
			fmt.Fprintf(d.w, "\r\x1b[K%s\n", line)
			d.redraw()
		}
		return
	}
	at := ev.Time
	if at.IsZero() {
		at = time.Now()
	}
	fmt.Fprintf(d.w, "[%d/%d] +%.3fs %s\n", ev.Done, ev.Total, at.Sub(d.start).Seconds(), line)
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

// finish ends the status line on a terminal.
func (d *progressDisplay) finish() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.terminal && d.drawn {
		fmt.Fprintf(d.w, "\r\x1b[K[%d/%d] done\n", d.done, d.total)
	}
}
