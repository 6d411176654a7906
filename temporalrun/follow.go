package temporalrun

// Following a run (runner.go, step 3): the workflow's history is long-polled
// (GetWorkflowHistory with isLongPoll: the server answers as soon as there
// are new events, so nothing here sleeps or polls on a clock). After each
// completed workflow task the run query gives the run as the workflow now
// has it; the difference from the last answer becomes store writes and
// events, in step order. A waiting question is put to the caller's
// Elicitor on its own goroutine (the history goes on meanwhile: the
// question may time out on the workflow's side, which withdraws it).

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/vmcp-dev/vmcp/runtime"
)

// follower follows one run.
type follower struct {
	r     *Runner
	id    string
	opts  runtime.RunOptions
	last  *runtime.Run // what the store and the events have seen
	owner string       // the run's owner, which its child runs inherit
	trace string       // the run's trace id (the workflow does not know it)
	span  string       // and its span's id, on this side
	done  int          // finished top-level steps, for events

	mu    sync.Mutex
	asked map[int]context.CancelFunc // questions put to the Elicitor, by Seq

	// children are the child runs the snapshots named; followed, the ones
	// whose follower has started.
	children map[string]Child
	followed map[string]bool
	wg       sync.WaitGroup
}

// follow follows run id to its end (see the top of the file). last is the
// run as the store has it.
func (r *Runner) follow(ctx context.Context, id string, last *runtime.Run, opts runtime.RunOptions) (*runtime.Run, error) {
	r.mu.Lock()
	r.following[id] = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.following, id)
		r.mu.Unlock()
	}()
	f := &follower{r: r, id: id, opts: opts, last: last, owner: last.Owner, trace: last.TraceID, span: last.SpanID, asked: map[int]context.CancelFunc{},
		children: map[string]Child{}, followed: map[string]bool{}}
	for _, st := range last.Steps {
		if st.Status == runtime.StepCompleted || st.Status == runtime.StepFailed || st.Status == runtime.StepSkipped {
			f.done++
		}
	}
	hctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	defer f.wg.Wait() // child followers record their runs first
	defer f.withdrawAll()
	go func() {
		select {
		case <-ctx.Done():
			if r.detached.Load() {
				stop()
				return
			}
			// The caller cancelled: cancel the workflow and keep following
			// it, so the caller gets the run's cancelled result.
			if err := r.opts.Client.CancelWorkflow(hctx, id, ""); err != nil {
				r.log.Warn("cancelling a Temporal run", "run_id", id, "err", err)
			}
		case <-hctx.Done():
		}
	}()
	it := r.opts.Client.GetWorkflowHistory(hctx, id, "", true, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	closed := false
	var result *commonpb.Payloads // the completed workflow's, from its close event
	for !closed && it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			if hctx.Err() != nil {
				return nil, ErrDetached
			}
			return nil, fmt.Errorf("run %q: following it on Temporal: %w", id, err)
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			f.refresh(hctx, true)
		case enumspb.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED:
			if we := ev.GetChildWorkflowExecutionStartedEventAttributes().GetWorkflowExecution(); we != nil {
				f.followChild(hctx, we.GetWorkflowId())
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
			result = ev.GetWorkflowExecutionCompletedEventAttributes().GetResult()
			closed = true
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
			closed = true
		}
	}
	if hctx.Err() != nil {
		return nil, ErrDetached
	}
	return f.finish(hctx, result)
}

// refresh asks the workflow for its state and records what changed. With
// onlyOpen, a workflow that has closed is not asked: its result covers
// the same, and a query of a closed workflow costs a worker a replay of
// the whole history (the server rejects it at once instead). Finding a
// child run needs the snapshot also when the parent has closed.
func (f *follower) refresh(ctx context.Context, onlyOpen bool) {
	req := &client.QueryWorkflowWithOptionsRequest{WorkflowID: f.id, QueryType: QueryRun}
	if onlyOpen {
		req.QueryRejectCondition = enumspb.QUERY_REJECT_CONDITION_NOT_OPEN
	}
	resp, err := f.r.opts.Client.QueryWorkflowWithOptions(ctx, req)
	if err != nil || resp.QueryRejected != nil {
		// The workflow may have closed meanwhile; the final result covers it.
		f.r.log.Debug("run query failed", "run_id", f.id, "err", err)
		return
	}
	var snap Snapshot
	if err := resp.QueryResult.Get(&snap); err != nil || snap.Run == nil {
		f.r.log.Warn("run query answer unreadable", "run_id", f.id, "err", err)
		return
	}
	f.record(snap.Run, false)
	for _, c := range snap.Children {
		f.children[c.RunID] = c
	}
	f.ask(ctx, snap.Questions)
}

// followChild records and follows the child run id, once, on its own
// goroutine. Its events are not the parent's (as locally, a child run's
// steps are not progress of the parent's call); questions it asks go to
// the parent's Elicitor.
func (f *follower) followChild(ctx context.Context, id string) {
	if f.followed[id] {
		return
	}
	c, ok := f.children[id]
	if !ok {
		f.refresh(ctx, false) // the snapshot that names it
		if c, ok = f.children[id]; !ok {
			f.r.log.Warn("a child workflow that the run does not name", "run_id", f.id, "child", id)
			return
		}
	}
	wf, ok := f.r.Workflow(c.Workflow)
	if !ok {
		return
	}
	f.followed[id] = true
	run := initialRun(wf, id, runtime.RunOptions{ParentID: f.id, ParentStep: c.Step, Owner: f.owner}, time.Now())
	if err := f.r.opts.Store.CreateRun(ctx, run); err != nil {
		f.r.log.Warn("run store: recording a child run failed", "run_id", id, "err", err)
		return
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		if _, err := f.r.follow(ctx, id, run, runtime.RunOptions{Elicitor: f.opts.Elicitor, ParentID: f.id, ParentStep: c.Step}); err != nil && !errors.Is(err, ErrDetached) {
			f.r.log.Warn("following a child run", "run_id", id, "err", err)
		}
	}()
}

// record writes the steps of run that differ from the last record, and
// emits their events.
func (f *follower) record(run *runtime.Run, final bool) {
	for i, st := range run.Steps {
		var prev runtime.StepState
		if i < len(f.last.Steps) {
			prev = f.last.Steps[i]
		}
		if reflect.DeepEqual(prev, st) {
			continue
		}
		if !final {
			if err := f.r.opts.Store.UpdateStep(context.Background(), f.id, i, st); err != nil {
				f.r.log.Warn("run store: step update failed", "run_id", f.id, "step_id", st.ID, "err", err)
			}
		}
		f.stepEvent(i, prev, st, run)
	}
	f.last = run
}

// stepEvent emits the events of one step's change, as the local engine
// does: started, retrying (attempts went up while running), then its end.
func (f *follower) stepEvent(i int, prev, st runtime.StepState, run *runtime.Run) {
	ev := runtime.Event{RunID: f.id, Workflow: run.Workflow, TraceID: f.trace, SpanID: f.span, StepID: st.ID, Attempt: st.Attempts, Status: runtime.RunRunning, Total: topLevel(run)}
	started := prev.Status == runtime.StepPending && st.Status != runtime.StepPending && st.Status != runtime.StepSkipped
	if started {
		ev.Kind, ev.Time, ev.Done = runtime.EventStepStarted, st.StartedAt, f.done
		emit(f.opts.OnEvent, ev)
	}
	switch st.Status {
	case runtime.StepRunning:
		if !started && st.Attempts > prev.Attempts {
			ev.Kind, ev.Time, ev.Done, ev.Err = runtime.EventStepRetrying, time.Now(), f.done, st.Error
			emit(f.opts.OnEvent, ev)
		}
		return
	case runtime.StepCompleted:
		ev.Kind = runtime.EventStepCompleted
	case runtime.StepFailed:
		ev.Kind, ev.Err = runtime.EventStepFailed, st.Error
	case runtime.StepSkipped:
		ev.Kind = runtime.EventStepSkipped
	default:
		return
	}
	if !run.IsFinally(i) {
		f.done++
	}
	ev.Time, ev.Done = st.EndedAt, f.done
	emit(f.opts.OnEvent, ev)
}

// topLevel counts a run's steps without its finally steps.
func topLevel(run *runtime.Run) int {
	if run.FinallyFrom > 0 {
		return run.FinallyFrom
	}
	return len(run.Steps)
}

// finish reads the workflow's result, records it and emits run_finished.
// A completed workflow's result is in its close event (completed); any
// other end is read from Temporal, which words the failure.
func (f *follower) finish(ctx context.Context, completed *commonpb.Payloads) (*runtime.Run, error) {
	var final *runtime.Run
	var err error
	if completed != nil {
		final = &runtime.Run{}
		if err = converter.GetDefaultDataConverter().FromPayloads(completed, &final); err != nil {
			err = fmt.Errorf("the workflow's result is unreadable: %w", err)
		}
	} else {
		final, err = f.r.result(ctx, f.id)
	}
	if err != nil {
		// The workflow itself failed (not a run that failed: those complete
		// with a failed run). Keep what was recorded and say why.
		final, _ = jsonClone(f.last)
		final.Status = runtime.RunFailed
		final.EndedAt = time.Now()
		final.Error = &runtime.StepError{Msg: "the Temporal workflow failed: " + applicationMessage(err)}
		if in := inputError(err); in != nil {
			final.Error.Msg = in.Error()
			if err := f.r.opts.Store.FinishRun(context.Background(), final); err != nil {
				f.r.log.Warn("run store: finishing run failed", "run_id", f.id, "err", err)
			}
			return nil, in
		}
	}
	if final.TraceID == "" {
		final.TraceID, final.SpanID = f.trace, f.span
	}
	f.record(final, true)
	if err := f.r.opts.Store.FinishRun(context.Background(), final); err != nil {
		f.r.log.Warn("run store: finishing run failed", "run_id", f.id, "err", err)
	}
	emit(f.opts.OnEvent, runtime.Event{
		Kind: runtime.EventRunFinished, RunID: f.id, Workflow: final.Workflow, Time: final.EndedAt,
		Status: final.Status, Err: errString(final.Error), Done: f.done, Total: topLevel(final), TraceID: final.TraceID, SpanID: final.SpanID,
	})
	return final, nil
}

func errString(e *runtime.StepError) string {
	if e == nil {
		return ""
	}
	return e.Error()
}

// ask puts each new question to the caller's Elicitor, on a goroutine of
// its own, and sends the answer back; a question that is gone (answered,
// timed out, the step stopped) is withdrawn.
func (f *follower) ask(ctx context.Context, qs []Question) {
	f.mu.Lock()
	defer f.mu.Unlock()
	open := map[int]bool{}
	for _, q := range qs {
		open[q.Seq] = true
	}
	for seq, cancel := range f.asked {
		if !open[seq] && cancel != nil {
			cancel()
			f.asked[seq] = nil // withdrawn; never asked again
		}
	}
	for _, q := range qs {
		if _, seen := f.asked[q.Seq]; seen {
			continue
		}
		qctx, cancel := context.WithCancel(ctx)
		f.asked[q.Seq] = cancel
		go f.put(qctx, q)
	}
}

// put asks q and sends the answer as an update.
func (f *follower) put(ctx context.Context, q Question) {
	ans := Answer{Seq: q.Seq}
	if f.opts.Elicitor == nil {
		ans.Err = "the client cannot answer elicitation requests (no elicitor)"
	} else {
		res, err := f.opts.Elicitor.Elicit(ctx, runtime.ElicitRequest{RunID: f.id, StepID: q.StepID, Message: q.Message, Schema: q.Schema})
		if ctx.Err() != nil {
			return // withdrawn: the workflow moved on
		}
		if err != nil {
			ans.Err = err.Error()
		}
		ans.Result = res
	}
	_, err := f.r.opts.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: f.id, UpdateName: UpdateAnswer, Args: []any{ans}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil && ctx.Err() == nil {
		f.r.log.Warn("sending an elicitation answer", "run_id", f.id, "step_id", q.StepID, "err", err)
	}
}

// withdrawAll ends every question being asked.
func (f *follower) withdrawAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for seq, cancel := range f.asked {
		if cancel != nil {
			cancel()
			f.asked[seq] = nil
		}
	}
}
