package temporalrun

// Picking runs up again after vmcp run restarts. Runs on Temporal do not
// stop when the vmcp run that started them does (a crash, a deploy, a
// SIGKILL): the workers go on. The next vmcp run, at start, follows again
//
//   - every run its store holds as running or interrupted (a SQLite store
//     marks the runs of a vmcp that died interrupted when it opens), when
//     Temporal knows it: a run that ended meanwhile is recorded with its
//     real result at once, one still going is followed to its end;
//   - every top-level vmcp run still open on the task queue that the
//     store does not hold (a memory store starts empty), recorded anew.
//
// Nobody waits for these runs' results in this process: the client that
// started one reads it from the store, through the HTTP API, `vmcp runs
// show`, or (with Tasks) tasks/get, once it is recorded.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/vmcp-dev/vmcp/runtime"
)

// Reattach follows the runs of an earlier vmcp run again (see the top of
// the file), each on a goroutine of its own until it ends or ctx does. It
// returns how many it picked up.
func (r *Runner) Reattach(ctx context.Context) (int, error) {
	seen := map[string]bool{}
	n := 0
	for _, status := range []runtime.RunStatus{runtime.RunRunning, runtime.RunInterrupted} {
		runs, err := r.opts.Store.ListRuns(ctx, runtime.RunFilter{Status: status, Limit: 1000})
		if err != nil {
			return n, fmt.Errorf("listing the store's %s runs: %w", status, err)
		}
		for _, run := range runs {
			if run.ParentID != "" || seen[run.ID] {
				continue // a parent's follower follows its children
			}
			seen[run.ID] = true
			if !r.onTemporal(ctx, run.ID) {
				continue
			}
			run.Status = runtime.RunRunning
			run.Error = nil
			r.resume(ctx, run)
			n++
		}
	}
	open, err := r.openRuns(ctx)
	if err != nil {
		return n, err
	}
	for _, id := range open {
		if seen[id] {
			continue
		}
		run, err := r.recordOpen(ctx, id)
		if err != nil {
			r.log.Warn("picking up a Temporal run", "run_id", id, "err", err)
			continue
		}
		r.resume(ctx, run)
		n++
	}
	return n, nil
}

// resume follows run on a goroutine.
func (r *Runner) resume(ctx context.Context, run *runtime.Run) {
	r.mu.Lock()
	busy := r.following[run.ID]
	r.mu.Unlock()
	if busy {
		return
	}
	r.log.Info("following a run started by an earlier vmcp", "run_id", run.ID, "workflow", run.Workflow)
	// Nobody here may cancel these runs: the follower's context never
	// ends (the process exits under it).
	ctx = context.WithoutCancel(ctx)
	go func() {
		var opts runtime.RunOptions
		if r.opts.Questions != nil { // no caller to ask: the console may answer
			opts.Elicitor = r.opts.Questions.Wrap(nil)
		}
		if _, err := r.follow(ctx, run.ID, run, opts); err != nil && !errors.Is(err, ErrDetached) {
			r.log.Warn("following a run started by an earlier vmcp", "run_id", run.ID, "err", err)
		}
	}()
}

// onTemporal reports whether Temporal knows workflow id.
func (r *Runner) onTemporal(ctx context.Context, id string) bool {
	_, err := r.opts.Client.DescribeWorkflowExecution(ctx, id, "")
	var nf *serviceerror.NotFound
	return err == nil || !errors.As(err, &nf)
}

// openRuns lists the top-level vmcp runs open on the task queue.
func (r *Runner) openRuns(ctx context.Context) ([]string, error) {
	q := fmt.Sprintf("WorkflowType = '%s' AND TaskQueue = '%s' AND ExecutionStatus = 'Running'", WorkflowName, r.opts.TaskQueue)
	var ids []string
	var token []byte
	for {
		resp, err := r.opts.Client.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q, NextPageToken: token})
		if err != nil {
			return ids, fmt.Errorf("listing the open runs on task queue %q: %w", r.opts.TaskQueue, err)
		}
		for _, e := range resp.GetExecutions() {
			if e.GetParentExecution() != nil {
				continue
			}
			ids = append(ids, e.GetExecution().GetWorkflowId())
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			return ids, nil
		}
	}
}

// recordOpen creates the store record of an open run the store lacks,
// from the workflow's own state.
func (r *Runner) recordOpen(ctx context.Context, id string) (*runtime.Run, error) {
	v, err := r.opts.Client.QueryWorkflow(ctx, id, "", QueryRun)
	if err != nil {
		return nil, err
	}
	var snap Snapshot
	if err := v.Get(&snap); err != nil || snap.Run == nil {
		return nil, fmt.Errorf("its run query: %v", err)
	}
	run := snap.Run
	if run.StartedAt.IsZero() {
		run.StartedAt = time.Now()
	}
	if err := r.opts.Store.CreateRun(ctx, run); err != nil {
		return nil, err
	}
	return run, nil
}
