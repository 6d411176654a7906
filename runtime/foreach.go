package runtime

// forEach steps. The collection template yields an array (a typed array,
// or a string holding a JSON array, which is parsed); a literal collection
// (a YAML list) is evaluated like arguments, its strings as templates. A collection longer
// than maxIterations fails the step before any iteration starts. A pool of
// at most min(maxParallel, len) workers takes iteration indexes from an
// atomic counter. The calling goroutine is the first worker; each worker,
// once it has claimed its first item, starts the next while items are
// left. So a slow backend has the pool full within a goroutine start per
// worker, while a backend that answers at once lets the first workers
// take every item before the others would start. A quick loop (its
// iterations take microseconds, and few enough items to be done within a
// millisecond; the quick-loop bet, quick.go) starts no worker at all
// unless it is still running after quickLoopWait. Each iteration evaluates the inner step's
// arguments with .forEach.<itemVar> and .forEach.index added to the
// template data, and calls the backend with the inner step's retry policy
// (or the forEach step's, when the inner step has none). Results go into
// a slice slot per iteration, so workers never share writes.
//
// An inner step with a condition evaluates it per item, with the same
// .forEach data as its arguments, before anything else: false skips the
// iteration (status skipped, output the inner step's defaultResults, no
// backend call); a condition that cannot be evaluated, or is not a
// boolean, fails the iteration like any other error.
//
// With onError continue on the forEach step, failed iterations are recorded
// and the rest go on; the step completes. Otherwise the first failure
// cancels the iterations in flight, no new one starts, and the step fails
// with that iteration's error. The forEach step's timeout bounds the whole
// iteration set. The output is
// {iterations: [{index, item, status, output, error}], count, completed,
// failed, skipped}; skipped counts the iterations whose condition was false
// and those that never started, so count = completed + failed + skipped.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

var errIterationFailed = errors.New("an iteration failed")

// checkIterationLimit refuses a workflow with a forEach that allows more
// iterations than the server-wide limit (limits.maxIterations): the
// checker checked the default limit, and a plan compiled elsewhere or a
// lower configured limit is caught here, when vmcp starts.
func checkIterationLimit(wf *ir.Workflow, limit int) error {
	var err error
	ir.EachStep(wf.Steps, func(s *ir.Step) {
		if err != nil || s.ForEach == nil || s.ForEach.MaxIterations <= limit {
			return
		}
		err = fmt.Errorf("workflow %q step %q (%s): maxIterations %d is over the server-wide limit of %d iterations; lower the step's maxIterations or raise limits.maxIterations in vmcp.yaml",
			wf.Name, s.ID, s.Pos, s.ForEach.MaxIterations, limit)
	})
	return err
}

// iterPool is the state of a forEach's workers that the goroutines
// starting them share, guarded by mu: the calling goroutine, the workers
// and a quick loop's timer.
type iterPool struct {
	mu      sync.Mutex
	workers int         // started so far, the calling goroutine included
	quick   bool        // no worker starts the next (quick.go, quickLoop)
	closed  bool        // every item is claimed: no worker starts
	timer   *time.Timer // a quick loop's (the calling goroutine's only)
}

type iterResult struct {
	done    bool // ran, or was skipped by its condition
	skipped bool // its condition was false
	output  any
	err     string
	steps   map[string]any // a body's step records (body.go)
}

// runForEach runs a top-level forEach step.
func (r *runState) runForEach(ctx context.Context, sp *stepPlan) stepMsg {
	return r.runLoop(ctx, sp, r.rootFrame())
}

// runLoop runs a forEach step whose templates read fr: the run's root
// data, or for a loop in a body, the enclosing iteration's.
func (r *runState) runLoop(ctx context.Context, sp *stepPlan, fr frame) stepMsg {
	if r.e.tracer != nil {
		lctx, span := r.startSpan(ctx, SpanStart{Kind: SpanLoop, StepID: sp.id})
		m := r.untracedLoop(lctx, sp, fr)
		span.End(loopEnd(m))
		return m
	}
	return r.untracedLoop(ctx, sp, fr)
}

// untracedLoop is runLoop without its span.
func (r *runState) untracedLoop(ctx context.Context, sp *stepPlan, fr frame) stepMsg {
	if sp.items != nil {
		return r.runForEachItems(ctx, sp, fr)
	}
	if items, ok := r.takeWeighed(sp); ok {
		return r.iterate(ctx, sp, fr, items, posOr(sp.collection.src.Pos, sp.step.Pos))
	}
	fr.mu.RLock()
	cv, err := sp.collection.collectionValue(fr.data)
	fr.mu.RUnlock()
	if err != nil {
		return stepMsg{status: StepFailed, attempts: 1, err: templateStepError(sp.id, sp.collection, err, "collection")}
	}
	return r.iterate(ctx, sp, fr, cv, posOr(sp.collection.src.Pos, sp.step.Pos))
}

// runForEachItems runs a forEach whose collection is a literal list.
func (r *runState) runForEachItems(ctx context.Context, sp *stepPlan, fr frame) stepMsg {
	fr.mu.RLock()
	cv, err := sp.items.eval(fr.data)
	fr.mu.RUnlock()
	if err != nil {
		var te *templateError
		if errors.As(err, &te) {
			return failed(sp, posOr(te.pos, sp.step.Pos), "collection: "+te.msg, 1)
		}
		return failed(sp, sp.step.Pos, "collection: "+err.Error(), 1)
	}
	return r.iterate(ctx, sp, fr, cv, sp.step.Pos)
}

// iterate runs the iterations over the collection's value cv; collPos is
// where errors about the collection point.
func (r *runState) iterate(ctx context.Context, sp *stepPlan, fr frame, cv any, collPos ir.Pos) stepMsg {
	fe := sp.step.ForEach
	items, ok := collectionItems(cv)
	if !ok {
		return failed(sp, collPos, notACollection(cv), 1)
	}
	// maxIterations, maxParallel and the item's name are the checker's
	// (defaults included); the engine's iteration limit may only lower
	// the first.
	maxIter := min(fe.MaxIterations, r.e.iterationLimit)
	if len(items) > maxIter {
		return failed(sp, collPos, fmt.Sprintf("collection has %d items, more than maxIterations (%d)", len(items), maxIter), 1)
	}
	par := min(fe.MaxParallel, len(items))
	itemVar := fe.ItemVar
	policy := sp.inner
	if policy != nil && policy.action == "" && sp.action == ir.ActionRetry {
		policy = sp
	}
	keepGoing := sp.action == ir.ActionContinue

	results := make([]iterResult, len(items))
	iterCtx, stopIters := context.WithCancelCause(ctx)
	defer stopIters(nil)
	// An iteration gives its inner step a context of the step's own
	// timeout only while the loop's deadline is further away. Once it is
	// not, it never is again, so when it is not at the start no iteration
	// asks.
	innerTimer := sp.inner != nil && sp.inner.timeout > 0
	if dl, ok := iterCtx.Deadline(); innerTimer && ok && time.Until(dl) <= sp.inner.timeout {
		innerTimer = false
	}
	stop := func() { stopIters(errIterationFailed) }
	var (
		next      atomic.Int64
		wg        sync.WaitGroup
		failOnce  sync.Once
		firstFail *StepError
		// The calling goroutine is the first worker. A quick loop runs
		// its iterations on it (see the top of the file); pool.quick says
		// so until the loop's timer gives up.
		pool = iterPool{workers: 1, quick: sp.quickLoop(len(items), par)}
	)
	var worker func()
	// spawn starts the next worker while items are left and the pool is
	// not full. Called with pool.mu held.
	spawn := func() {
		if pool.closed || pool.workers >= par || int(next.Load()) >= len(items) {
			return
		}
		pool.workers++
		wg.Add(1)
		go worker()
	}
	worker = func() {
		defer wg.Done()
		// The worker's template data: the run's root plus .forEach, which
		// each iteration replaces. No template can keep the root map, so
		// one copy serves all of the worker's iterations.
		// The read lock, because steps that start meanwhile replace
		// .workflow in the root (scheduler.go, refreshWorkflow).
		// A body copies its frame per iteration (body.go) instead.
		var (
			data    map[string]any
			outerFE map[string]any
			fe      map[string]any
		)
		// Claim the first item before copying the data: a worker that
		// starts after the others have taken every item (a fast backend)
		// copies nothing.
		i := int(next.Add(1) - 1)
		if i >= len(items) || iterCtx.Err() != nil {
			return
		}
		pool.mu.Lock()
		if !pool.quick {
			spawn()
		}
		pool.mu.Unlock()
		if sp.body == nil {
			fr.mu.RLock()
			data = make(map[string]any, len(fr.data)+1)
			for k, v := range fr.data {
				data[k] = v
			}
			fr.mu.RUnlock()
			// The enclosing loops' items, for a loop in a body.
			outerFE, _ = data["forEach"].(map[string]any)
			// .forEach too, unless a template can yield it as a value.
			if sp.sharedForEach {
				fe = make(map[string]any, len(outerFE)+2)
				for k, v := range outerFE {
					fe[k] = v
				}
				data["forEach"] = fe
			}
		}
		// The worker's mean time per iteration joins the loop's, which
		// decides whether it is quick.
		began, ran := time.Now(), 0
		defer func() {
			if ran > 0 {
				sp.iterTime.note(time.Since(began) / time.Duration(ran))
			}
		}()
		for ; i < len(items) && iterCtx.Err() == nil; i = int(next.Add(1) - 1) {
			ran++
			var (
				out     any
				skipped bool
				serr    *StepError
			)
			res := &results[i]
			ictx, span := iterCtx, Span(nil)
			if r.e.tracer != nil {
				ictx, span = r.startSpan(iterCtx, SpanStart{Kind: SpanIteration, StepID: sp.id, Index: i, Item: IterationLabel(i, items[i])})
			}
			if sp.body != nil {
				out, res.steps, serr = r.runBody(ictx, sp, fr, itemVar, i, items[i])
				if serr != nil {
					serr = iterationError(iterCtx, sp, i, items[i], serr)
				}
			} else {
				out, skipped, serr = r.runIteration(ictx, sp, policy, fr.mu, data, outerFE, fe, itemVar, i, items[i], innerTimer)
			}
			if span != nil {
				span.End(iterationEnd(skipped, serr))
			}
			res.done = true
			if serr == nil {
				res.output, res.skipped = out, skipped
				continue
			}
			res.err = serr.Msg
			if !keepGoing {
				failOnce.Do(func() {
					firstFail = serr
					stop()
				})
			}
		}
	}
	if pool.quick {
		// The bet on a quick loop is lost once it has run for
		// quickLoopWait: from then on it starts its workers as a slow
		// tool's loop does. Only this goroutine reads pool.timer.
		pool.timer = time.AfterFunc(quickLoopWait, func() {
			pool.mu.Lock()
			defer pool.mu.Unlock()
			pool.quick = false
			spawn()
		})
	}
	wg.Add(1)
	worker()
	// Every item is claimed (or the loop stopped): no worker starts any
	// more, so the wait below is for the ones running.
	if pool.timer != nil {
		pool.timer.Stop()
	}
	pool.mu.Lock()
	pool.closed = true
	pool.mu.Unlock()
	wg.Wait()

	iterations := make([]any, len(items))
	var completed, failedN, skippedN int64
	for i, res := range results {
		status := skippedValue
		switch {
		case !res.done || res.skipped:
			skippedN++
		case res.err == "":
			status = completedValue
			completed++
		default:
			status = failedValue
			failedN++
		}
		iter := map[string]any{"index": int64(i), "item": items[i], "status": status, "output": res.output, "error": res.err}
		if sp.body != nil {
			iter["steps"] = res.steps
		}
		iterations[i] = iter
	}
	output := map[string]any{"iterations": iterations, "count": int64(len(items)), "completed": completed, "failed": failedN, "skipped": skippedN}
	if firstFail != nil {
		m := stepMsg{status: StepFailed, attempts: 1, output: output, err: firstFail}
		return m
	}
	if msg := r.interruptMsg(ctx, sp.timeout); msg != "" && notAllDone(results) {
		return failed(sp, sp.step.Pos, msg, 1)
	}
	return stepMsg{status: StepCompleted, output: output, attempts: 1}
}

// notAllDone reports whether some iteration neither ran nor was skipped by
// its condition.
func notAllDone(results []iterResult) bool {
	for _, res := range results {
		if !res.done {
			return true
		}
	}
	return false
}

// iterationError names the iteration (by its item, IterationLabel) and
// the body step whose failure failed it, in the loop's error.
func iterationError(ctx context.Context, sp *stepPlan, i int, item any, serr *StepError) *StepError {
	msg := serr.Msg
	if context.Cause(ctx) == errIterationFailed {
		msg = "cancelled because another iteration failed"
	}
	if serr.Step != "" && serr.Step != sp.id {
		msg = fmt.Sprintf("step %q: %s", serr.Step, msg)
	}
	return &StepError{Step: sp.id, Pos: posOr(serr.Pos, sp.step.Pos), Msg: IterationLabel(i, item) + ": " + msg}
}

// runIteration runs the inner step once for item i. data is the calling
// worker's own template data, read under mu (its frame's lock). Its
// .forEach holds the enclosing loops' items (outerFE) and this one: fe,
// when the worker reuses one map for it (already data's .forEach), or a
// new map put there when fe is nil. innerTimer says that the inner step's
// timeout may end before the loop's deadline (iterate). skipped is true
// when the inner step's condition is false; out is then its
// defaultResults.
func (r *runState) runIteration(ctx context.Context, sp, policy *stepPlan, mu *sync.RWMutex, data, outerFE, fe map[string]any, itemVar string, i int, item any, innerTimer bool) (out any, skipped bool, serr *StepError) {
	inner := sp.inner
	if fe == nil {
		fe = make(map[string]any, len(outerFE)+2)
		for k, v := range outerFE {
			fe[k] = v
		}
		data["forEach"] = fe
	}
	fe[itemVar] = item
	fe["index"] = int64(i)
	mu.RLock()
	run := true
	if inner.cond != nil {
		run, serr = r.iterationCondition(sp, data)
	}
	var args map[string]any
	if serr == nil && run {
		args, serr = r.evalArgs(inner, data)
	}
	mu.RUnlock()
	if serr != nil {
		serr.Msg = IterationLabel(i, item) + ": " + serr.Msg
		return nil, false, serr
	}
	if !run {
		return inner.step.DefaultResults, true, nil
	}
	if innerTimer {
		if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > inner.timeout {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, inner.timeout)
			defer cancel()
		}
	}
	timeout := inner.timeout
	if timeout <= 0 {
		timeout = sp.timeout
	}
	res, _, msg := r.call(ctx, inner, policy, args, nil, timeout)
	if msg != "" {
		if context.Cause(ctx) == errIterationFailed {
			msg = "cancelled because another iteration failed"
		}
		return nil, false, &StepError{Step: sp.id, Pos: posOr(inner.step.Pos, sp.step.Pos), Msg: IterationLabel(i, item) + ": " + msg}
	}
	return res.output, false, nil
}

// iterationCondition evaluates the inner step's condition against one
// iteration's data. Callers hold the read lock.
func (r *runState) iterationCondition(sp *stepPlan, data map[string]any) (bool, *StepError) {
	cond := sp.inner.cond
	v, err := cond.value(data)
	if err != nil {
		return false, templateStepError(sp.id, cond, err, "condition")
	}
	ok, err := asBool(v)
	if err != nil {
		return false, &StepError{Step: sp.id, Pos: posOr(cond.src.Pos, sp.step.Pos), Msg: err.Error()}
	}
	return ok, nil
}
