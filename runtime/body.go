package runtime

// Loop bodies: a forEach with steps: runs a small graph of steps once per
// item (design.md "Loop bodies and sub-workflows").
//
// Template data. A loop's iterations start from a frame: the run's root
// data for a top-level loop, or the iteration data of the body the loop
// sits in. Each iteration copies its frame once: the root keys, a .steps
// map holding the frame's entries plus one entry per body step (pending
// at first), and a .forEach map holding the enclosing loops' items plus
// this loop's item and index. The body steps of the iteration read and
// replace their entries in that map under the iteration's lock (body.mu),
// the way top-level steps use the run's; the frame's entries that a body
// may read are those of finished steps (the checker proved it), so the
// copy never misses an update. A loop inside a body takes the iteration
// as its frame, so nesting costs one copy per iteration per level.
//
// Scheduling inside an iteration is the same ready queue as at top level,
// without a slot limit of its own (the loop's maxParallel bounds the
// iterations): every body step has a counter of unfinished dependencies;
// the goroutine that finishes a step records it, decrements its
// dependents' counters and starts each one that reaches zero, the one
// with the longest remaining path first. A step whose condition is false
// is skipped (its output is its defaultResults) and its dependents run. A
// failure whose action is continue (onError, or the workflow's failureMode)
// records the step as failed with its defaultResults; any other failure
// stops the iteration: its context is cancelled (running backend calls
// end), nothing new starts, and the iteration fails with that step's
// error, which the loop then handles as any failed iteration.
//
// Result. Once every started step has ended, the iteration's output is
// the loop's output: declaration evaluated over the iteration data, or
// without one the body's result by the workflow rule: the single sink's
// output, or an object keyed by sink id. The iteration's record in the
// loop output carries its body steps' records under "steps" (status,
// attempts, startedAt, endedAt, output, error per step id), so the run's
// store, vmcp runs show and the API show every body step.

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"text/template"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

// bodyPlan is a loop body ready to run.
type bodyPlan struct {
	steps []*stepPlan // topological order; indexes, dependents count within
	roots []int
	sinks []int
	// output shapes each iteration's output (nil: the sinks rule).
	output   []*outputPlan
	required []string
}

// frame is the template data a loop's iterations start from, and the
// lock that guards its .steps entries.
type frame struct {
	data map[string]any
	mu   *sync.RWMutex
}

// rootFrame is the run's template data, for a top-level loop.
func (r *runState) rootFrame() frame { return frame{data: r.data, mu: &r.mu} }

// prepareBody prepares a forEach's body steps and output.
func prepareBody(fe *ir.ForEach, funcs template.FuncMap) (*bodyPlan, error) {
	b := &bodyPlan{sinks: fe.Sinks}
	for i, s := range fe.Steps {
		sp, err := prepareStep(s, funcs)
		if err != nil {
			return nil, err
		}
		b.steps = append(b.steps, sp)
		if sp.ndeps == 0 {
			b.roots = append(b.roots, i)
		}
	}
	// The body's roots start longest remaining path first (the planner's
	// Remaining), ties in plan order.
	sort.SliceStable(b.roots, func(x, y int) bool { return fe.Steps[b.roots[x]].Remaining > fe.Steps[b.roots[y]].Remaining })
	if fe.Output != nil {
		var err error
		if b.output, err = prepareOutput(fe.Output.Properties, funcs); err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
		b.required = fe.Output.Required
	}
	return b, nil
}

// bodyRun is one iteration's run of a loop body.
type bodyRun struct {
	r    *runState
	loop *stepPlan
	body *bodyPlan
	ctx  context.Context
	stop context.CancelCauseFunc

	mu    sync.RWMutex   // guards the entries of steps (read by templates)
	data  map[string]any // the iteration's template data
	steps map[string]any // data["steps"]

	sched    sync.Mutex // guards what follows
	pending  []int32
	records  []StepState
	firstErr *StepError
	stopped  bool
	wg       sync.WaitGroup
}

// errBodyStepFailed stops an iteration's other body steps.
var errBodyStepFailed = fmt.Errorf("a body step failed")

// runBody runs loop's body once for item i of its collection, from frame
// fr. It returns the iteration's output and its body steps' records.
func (r *runState) runBody(ctx context.Context, loop *stepPlan, fr frame, itemVar string, i int, item any) (any, map[string]any, *StepError) {
	b := loop.body
	br := &bodyRun{r: r, loop: loop, body: b, pending: make([]int32, len(b.steps)), records: make([]StepState, len(b.steps))}
	br.ctx, br.stop = context.WithCancelCause(ctx)
	defer br.stop(nil)

	fr.mu.RLock()
	br.data = make(map[string]any, len(fr.data)+2)
	for k, v := range fr.data {
		br.data[k] = v
	}
	outer, _ := fr.data["steps"].(map[string]any)
	br.steps = make(map[string]any, len(outer)+len(b.steps))
	for k, v := range outer {
		br.steps[k] = v
	}
	outerFE, _ := fr.data["forEach"].(map[string]any)
	fe := make(map[string]any, len(outerFE)+2)
	for k, v := range outerFE {
		fe[k] = v
	}
	fr.mu.RUnlock()
	fe[itemVar] = item
	fe["index"] = int64(i)
	br.data["forEach"] = fe
	br.data["steps"] = br.steps
	for k, sp := range b.steps {
		br.steps[sp.id] = pendingEntry
		br.pending[k] = int32(sp.ndeps)
		br.records[k] = StepState{ID: sp.id, Status: StepPending}
	}

	br.sched.Lock()
	own := -1
	for _, k := range b.roots {
		own = br.start(k, own)
	}
	br.sched.Unlock()
	br.drive(own)
	br.wg.Wait()

	records := br.recordMap()
	if br.firstErr != nil {
		return nil, records, br.firstErr
	}
	out, serr := br.result()
	return out, records, serr
}

// start marks body step k running. The calling goroutine runs the
// first step it starts itself (own is -1 until then, and start returns
// k in its place); any other starts on a goroutine of its own, so a chain
// runs on one goroutine. Called with sched held.
func (br *bodyRun) start(k, own int) int {
	if br.stopped {
		return own
	}
	br.records[k].Status = StepRunning
	br.records[k].StartedAt = br.r.env.Clock.Now()
	br.setEntry(k, runningEntry)
	if own < 0 {
		return k
	}
	br.wg.Add(1)
	go func() {
		defer br.wg.Done()
		br.drive(k)
	}()
	return own
}

// drive runs body step k, records it and goes on with the first step
// that released, until none is left for this goroutine (k < 0).
func (br *bodyRun) drive(k int) {
	for k >= 0 {
		m := br.runStep(br.body.steps[k])
		br.sched.Lock()
		k = br.finish(k, m)
		br.sched.Unlock()
	}
}

// runStep runs one body step against the iteration's data.
func (br *bodyRun) runStep(sp *stepPlan) stepMsg {
	r := br.r
	if sp.cond != nil {
		br.mu.RLock()
		v, err := sp.cond.value(br.data)
		br.mu.RUnlock()
		if err != nil {
			return stepMsg{status: StepFailed, attempts: 1, err: templateStepError(sp.id, sp.cond, err, "condition")}
		}
		ok, err := asBool(v)
		if err != nil {
			return failed(sp, posOr(sp.cond.src.Pos, sp.step.Pos), err.Error(), 1)
		}
		if !ok {
			return stepMsg{status: StepSkipped, output: sp.step.DefaultResults}
		}
	}
	ctx := br.ctx
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > sp.timeout {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, sp.timeout)
		defer cancel()
	}
	if sp.kind == ir.StepForEach {
		return r.runLoop(ctx, sp, frame{data: br.data, mu: &br.mu})
	}
	br.mu.RLock()
	args, serr := r.evalArgs(sp, br.data)
	br.mu.RUnlock()
	if serr != nil {
		return stepMsg{status: StepFailed, attempts: 1, err: serr}
	}
	res, attempts, msg := r.call(ctx, sp, sp, args, nil, sp.timeout)
	if msg != "" {
		if context.Cause(br.ctx) == errBodyStepFailed {
			msg = "cancelled because another step of the iteration failed"
		}
		return failed(sp, sp.step.Pos, msg, attempts)
	}
	return stepMsg{status: StepCompleted, output: res.output, content: res.content, attempts: attempts}
}

// finish records body step k's result and starts the dependents it
// released; it returns the one the calling goroutine runs next, or -1.
// Called with sched held.
func (br *bodyRun) finish(k int, m stepMsg) int {
	sp := br.body.steps[k]
	st := &br.records[k]
	st.EndedAt = br.r.env.Clock.Now()
	st.Status = m.status
	st.Attempts = m.attempts
	output := m.output
	if m.status == StepFailed {
		st.Error = m.err.Msg
		if br.ctx.Err() != nil || br.r.effectiveAction(sp) != ir.ActionContinue {
			if br.firstErr == nil {
				br.firstErr = m.err
				br.stopped = true
				br.stop(errBodyStepFailed)
			}
			output = nil
		} else {
			output = sp.step.DefaultResults
		}
	}
	st.Output = output
	content := m.content
	if content == nil {
		content = noContent
	}
	br.setEntry(k, map[string]any{"output": output, "content": content, "status": statusValue(m.status), "error": st.Error})
	next := -1
	for _, d := range sp.dependents {
		br.pending[d]--
		if br.pending[d] == 0 {
			next = br.start(d, next)
		}
	}
	return next
}

func (br *bodyRun) setEntry(k int, entry map[string]any) {
	br.mu.Lock()
	br.steps[br.body.steps[k].id] = entry
	br.mu.Unlock()
}

// result is the iteration's output once its body has ended.
func (br *bodyRun) result() (any, *StepError) {
	b := br.body
	if b.output != nil {
		out, serr := br.r.buildObject(br.data, b.output, b.required, "")
		if serr != nil && serr.Step == "" {
			serr.Step = br.loop.id
		}
		return out, serr
	}
	if len(b.sinks) == 1 {
		return br.records[b.sinks[0]].Output, nil
	}
	m := make(map[string]any, len(b.sinks))
	for _, k := range b.sinks {
		m[b.steps[k].id] = br.records[k].Output
	}
	return m, nil
}

// recordMap is the body steps' records as the iteration's "steps" value:
// plain JSON data, keyed by step id.
func (br *bodyRun) recordMap() map[string]any {
	br.sched.Lock()
	defer br.sched.Unlock()
	out := make(map[string]any, len(br.records))
	for _, st := range br.records {
		rec := map[string]any{"status": string(st.Status), "attempts": int64(st.Attempts), "output": st.Output, "error": st.Error}
		if !st.StartedAt.IsZero() {
			rec["startedAt"] = st.StartedAt.UTC().Format(time.RFC3339Nano)
		}
		if !st.EndedAt.IsZero() {
			rec["endedAt"] = st.EndedAt.UTC().Format(time.RFC3339Nano)
		}
		out[st.ID] = rec
	}
	return out
}
