package main

// Re-runs for the API and the console (runtime/rerun.go says what may be
// re-run): the new run goes through the same runner as a client's call
// (metrics, run logs, the console's live pages, the shutdown's tracker),
// under the server's context, since it outlives the request that
// started it.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/vmcp-dev/vmcp/mcpserver"
	"github.com/vmcp-dev/vmcp/runtime"
)

// rerunner is the runtime.Rerunner of vmcp run.
type rerunner struct {
	ctx    context.Context // the server's
	runner mcpserver.Runner
	exec   executor
}

// Rerun starts the re-run and returns its record once the executor knows
// it (or the error that kept it from starting).
func (r *rerunner) Rerun(ctx context.Context, id string, current bool) (*runtime.Run, error) {
	rr, err := runtime.PrepareRerun(ctx, r.exec.Store(), r.exec.Workflow, id, current)
	if err != nil {
		return nil, err
	}
	newID := uuid.NewString()
	rr.Options.RunID = newID
	done := make(chan error, 1)
	go func() {
		_, err := r.runner.Run(r.ctx, rr.Workflow, rr.Params, rr.Options)
		done <- err
	}()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if run, err := r.exec.Status(ctx, newID); err == nil {
			return run, nil
		}
		select {
		case err := <-done:
			if run, serr := r.exec.Status(ctx, newID); serr == nil {
				return run, nil // it ended before it was seen running
			}
			if err == nil {
				err = errors.New("the run ended without a record")
			}
			return nil, fmt.Errorf("re-running run %s: %w", id, err)
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-tick.C:
		}
	}
}

// errNoRerun is the answer to a re-run where vmcp runs nothing (vmcp
// call, vmcp runs --db).
var errNoRerun = errors.New("this vmcp does not start runs; re-run through `vmcp run`'s API")

// Rerun makes ops the console's and the API's runtime.Rerunner: it passes
// the call to the rerunner vmcp run sets once its runner is ready.
func (o *ops) Rerun(ctx context.Context, id string, current bool) (*runtime.Run, error) {
	if o.rerun == nil {
		return nil, errNoRerun
	}
	return o.rerun.Rerun(ctx, id, current)
}
