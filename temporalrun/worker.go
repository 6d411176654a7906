package temporalrun

// The worker: what `vmcp worker` runs. It polls the task queue for vmcp
// runs (the workflow, workflow.go) and backend calls (the activity,
// activity.go). Many workers may poll one queue; Temporal spreads the
// calls over them, and moves a run's next decision to any live worker.

import (
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/vmcp-dev/vmcp/runtime"
)

// WorkerOptions configure a worker.
type WorkerOptions struct {
	// Identity names the worker in Temporal (default: the SDK's
	// pid@host).
	Identity string
	// MaxConcurrentCalls bounds the backend calls this worker runs at once,
	// as activities and as local activities each (0: the SDK's default,
	// 1000).
	MaxConcurrentCalls int
	// StopTimeout is how long Stop lets backend calls in flight go on.
	StopTimeout time.Duration
	// Local says which steps run as local activities (quick.go).
	Local LocalOptions
}

// NewWorker returns a worker on taskQueue whose activities call backend.
// Start it with Run or Start; Stop waits for the calls in flight.
func NewWorker(c client.Client, taskQueue string, backend runtime.Backend, opts WorkerOptions) worker.Worker {
	w := worker.New(c, taskQueue, worker.Options{
		Identity:                                opts.Identity,
		MaxConcurrentActivityExecutionSize:      opts.MaxConcurrentCalls,
		MaxConcurrentLocalActivityExecutionSize: opts.MaxConcurrentCalls,
		WorkerStopTimeout:                       opts.StopTimeout,
	})
	Register(w, backend, opts.Local)
	return w
}

// Register registers vmcp's workflow and activities on w (a worker, or the
// SDK's test environment). The workflow and the activities share the
// worker's call times, which decide the quick steps (quick.go).
func Register(w interface {
	RegisterWorkflowWithOptions(any, workflow.RegisterOptions)
	RegisterActivityWithOptions(any, activity.RegisterOptions)
}, backend runtime.Backend, local LocalOptions) {
	calls := newCallTimes(local)
	w.RegisterWorkflowWithOptions(executor{calls}.workflow, workflow.RegisterOptions{Name: WorkflowName})
	acts := &Activities{Backend: backend, calls: calls}
	w.RegisterActivityWithOptions(acts.CallTool, activity.RegisterOptions{Name: CallToolActivity})
	w.RegisterActivityWithOptions(acts.ExecuteStep, activity.RegisterOptions{Name: ExecuteStepActivity})
}
