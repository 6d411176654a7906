package runtime

// The local driver's quick paths: what each skips, when, why it is safe,
// and what it saves, measured. None changes what the machine (machine.go)
// decides or records: each only changes which goroutine runs a step the
// machine started, or where the driver keeps what the machine wrote.
//
// Measured with BenchmarkRun (benchBackend, zero latency) and
// BenchmarkRunMCP (pipeBackend: an mcp-go server and client over
// io.Pipes, 150-250µs per step on the loaded 2-core VM), one path
// disabled at a time against all on, alternated in the same rounds
// (-benchtime 300ms -count 1; 6 rounds, and 10 more at 0µs for the two
// scheduling paths). Figures are the median ratio disabled/all-on of the
// CPU time per step and its range; docs/performance.md, "The driver's
// quick paths", has the commands.
//
//   - The quick-step bet (this file, quickSteps): when the step the
//     calling goroutine runs next and every queued step are quick (their
//     calls have averaged inlineCall or less, callTime), no worker starts
//     for the queue; the goroutines already running take the queued steps
//     one after another. A timer bounds the bet: a queue that has not
//     moved for inlineWait gets a worker (a quick tool turned slow, or
//     one waits for its sibling). Safe: the machine has started the
//     steps, recorded them and timed them already; the bet only picks the
//     goroutine, and the queue stays in the machine's order. Nothing of
//     it is recorded, so resume never sees it. Saves a goroutine start
//     and a wake-up per queued step: 0µs wide100 1.22x (0.97-1.52),
//     fanout3_fanin1 1.16x (0.78-1.78) without it; chains 0.97-1.0x (a
//     chain queues nothing). At 80µs it never engages (no call is quick).
//   - stepView (stepview.go): in a workflow whose templates are all field
//     chains into .steps entries, .steps is one slice of entry structs
//     per run, overwritten in place, instead of a map of per-step maps.
//     Safe: resolveChain reads it exactly as it would read the maps, and
//     no template can yield it as a value; the machine writes it under
//     its DataGuard as it would the maps, on resume too. Saves 1.4x the
//     allocations; 0µs chain10 1.46x (1.20-1.71), chain100 1.40x
//     (1.15-1.83), wide100 1.30x (1.15-1.92) without it; 80µs within
//     noise.
//   - The in-memory store's direct path (store.go, createShared and
//     record; runState.putStep): a new run's MemoryStore record shares
//     its Steps with the machine's Run, so the machine's own write of a
//     step (while sched is held, under which the store's readers copy
//     the record) is the store write; a resumed run's record is looked
//     up once. Safe: the record holds what UpdateStep would have written,
//     and readers copy it under the lock it is written under;
//     MemoryStore dies with the process, so no resume reads it after a
//     crash. Saves a map lookup and a StepState copy per record: 0µs
//     chain100 1.27x (1.07-1.59), wide100 1.29x (1.03-1.82) without it;
//     80µs within noise.
//   - The scratch pool (scheduler.go, runScratch): a finished run's
//     working memory (its runState, counters, ready heap, deadlines,
//     stepView entries, action buffer, work queue) serves the next run of
//     its workflow. Safe: it is handed back only once nothing refers to
//     it (the workers exited, Engine.Run dropped the run), and
//     Machine.init sets every field again. Saves 17-45% of the
//     allocations of short runs: 0µs chain10 1.18x (0.77-1.62),
//     fanout3_fanin1 1.48x (0.93-1.74), subworkflow_chain10 1.18x
//     (0.97-1.64) without it; 80µs within noise.
//
//   - The quick-loop bet (this file, quickLoop; foreach.go's iterPool):
//     a forEach whose iterations have been quick (iterTime) and whose
//     items should all be done within quickLoop runs them on the calling
//     goroutine, starting no worker, until its timer (quickLoopWait)
//     gives up and starts them. Safe: the machine sees one step either
//     way; the iterations' results go to their own slots in item order,
//     and the loop's output and records are the same. Saves a goroutine
//     start per worker and the CPUs' contention: 0µs foreach100 1.13x
//     (0.72-1.68) without it over 22 rounds, 13 of them above 1 (each set
//     alone within noise), but against 1cac6f2 in the same rounds
//     foreach100 took 1.15x (1.08-1.20) the CPU without it and 0.99x
//     (0.68-1.27) with it, so it stays. At 80µs it never engages.

import (
	"sync/atomic"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

// The quick-step bet: a tool step whose calls take inlineCall or less on
// average has the steps queued behind it wait for it rather than for a
// new worker, until the queue has stood still for inlineWait (Go's timers
// wake an idle process with millisecond precision, so then up to about a
// millisecond).
const (
	inlineCall = 20 * time.Microsecond
	inlineWait = 50 * time.Microsecond
)

// quickSteps is a workQueue's quick-step bet, guarded by the queue's mu.
// The queue is first in, first out, so a slow job is queued while
// lastSlow (the push count just after the latest slow job) is past taken.
type quickSteps struct {
	pushed, taken, lastSlow uint64
	timer                   *time.Timer // armed while quick steps wait
	armed                   bool
	seen                    uint64 // taken when the timer was armed
}

// queued notes that a job for sp joined the queue.
func (b *quickSteps) queued(sp *stepPlan) {
	b.pushed++
	if !sp.calls.quick() {
		b.lastSlow = b.pushed
	}
}

// wait reports whether q's queued jobs wait for the running goroutines:
// they and next, the step the deciding goroutine runs next, are quick.
// It arms the timer then, unless it is armed or a worker is starting.
func (b *quickSteps) wait(q *workQueue, next *stepPlan) bool {
	if next == nil || !next.calls.quick() || b.lastSlow > b.taken {
		return false
	}
	if !b.armed && !q.starting {
		b.armed, b.seen = true, b.taken
		if b.timer == nil {
			b.timer = time.AfterFunc(inlineWait, q.timedOut)
		} else {
			b.timer.Reset(inlineWait)
		}
	}
	return true
}

// timedOut starts a worker for the queued steps when none was taken in
// the last inlineWait; while steps are being taken the queue is moving
// and a worker would only contend for the machine's lock, so the timer
// waits another inlineWait instead.
func (q *workQueue) timedOut() {
	q.mu.Lock()
	defer q.mu.Unlock()
	b := &q.bet
	if !b.armed {
		return // disarmed after the timer fired
	}
	if b.taken != b.seen && !q.empty() {
		b.seen = b.taken
		b.timer.Reset(inlineWait)
		return
	}
	b.armed = false
	q.startWorker()
}

// disarm stops the timer.
func (b *quickSteps) disarm() {
	if b.armed {
		b.timer.Stop()
		b.armed = false
	}
}

// Quick loops. A loop whose iterations each take about as long as
// starting a goroutine does not gain from workers: on a small machine a
// second worker contends with the first for the CPUs, the data and the
// results, and costs more than it saves. So a loop whose iterations have
// been quick (iterTime: each worker's mean time per iteration, whatever
// the iteration runs: a tool call, a child run, a body) and whose items
// should all be done within quickLoop runs them one after another on the
// calling goroutine. A timer bounds the bet: a loop still running after
// quickLoopWait (its tool turned slow, or one iteration waits for
// another) starts its workers as any loop does. The timer is far off
// because a timer that fires while a loop runs wakes the idle CPU, which
// costs a short loop more than it would gain.
const (
	quickLoop     = time.Millisecond
	quickLoopWait = 100 * time.Millisecond
)

// quickLoop reports whether a loop over n items, at most par at once, is
// quick (see quickLoop).
func (sp *stepPlan) quickLoop(n, par int) bool {
	if par < 2 || !sp.iterTime.quick() {
		return false
	}
	return time.Duration(sp.iterTime.mean.Load())*time.Duration(n) <= quickLoop
}

// noteCall adds d, the time a step took to run, to a tool step's call
// time (a workflow step's time is its child run's, not a call's).
func (sp *stepPlan) noteCall(d time.Duration) {
	if sp.kind == ir.StepTool && sp.callee == nil {
		sp.calls.note(d)
	}
}

// callTime is a tool step's call time (or a loop's time per iteration),
// averaged over all runs of its workflow: an exponentially weighted mean, each call weighing 1/8, of
// the calls' times capped at callCap. The cap keeps a pause of the
// process (a garbage collection, the machine lending the CPU elsewhere:
// about one call in a thousand takes over 150µs on a quiet 2-core VM)
// from making a quick step look slow for the next dozen runs, while a
// tool that turns slow stops being quick at its second call of callCap
// or more (from a mean of 2µs), and after a few calls when it is less
// slow; meanwhile the queue's timer sees that the steps behind it wait.
// Concurrent runs may lose each other's updates; the mean stays a mean.
type callTime struct{ CallMean }

// callCap is the longest one call counts for in a callTime.
const callCap = 4 * inlineCall

func (c *callTime) note(d time.Duration) { c.Note(d, callCap) }

func (c *callTime) quick() bool { return c.AtMost(inlineCall) }

// CallMean is the mean call time the quick paths decide by: an
// exponentially weighted mean, each call weighing 1/8, of the calls'
// times, each counted for at most a cap (see callTime for why). The
// Temporal executor keeps one per tool on each worker to choose local
// activities (temporalrun/quick.go). Concurrent notes may lose each
// other's updates; the mean stays a mean.
type CallMean struct{ mean atomic.Int64 } // ns; 0 until the first call

// Note adds one call that took d, counted for at most limit.
func (c *CallMean) Note(d, limit time.Duration) {
	n := min(max(int64(d), 1), int64(limit))
	if old := c.mean.Load(); old != 0 {
		n = old + (n-old)/8
	}
	c.mean.Store(n)
}

// AtMost reports whether a call was noted and the mean is at most d.
func (c *CallMean) AtMost(d time.Duration) bool {
	m := c.mean.Load()
	return m > 0 && m <= int64(d)
}
