package mcpserver

// Adopting a run as a live task: a run that vmcp resumed after a restart
// (cmd/vmcp/resume.go) was a task of the previous process, under the same
// id. Its record is in the run store, so tasks/get finds it anyway; what
// adoption adds is the live part, so that an elicitation step the resumed
// run asks again shows as input_required (the extension's inputRequests,
// answered by tasks/update; a 2025-11-25 client's tasks/result) instead of
// finding no one to ask. The creating session is gone, so no question is
// pushed on one.

import (
	"context"
	"time"

	"github.com/vmcp-dev/vmcp/runtime"
)

// AdoptRun runs run (which continues the stored run id of workflow) as a
// live task under id and returns its result: run gets the task's Elicitor
// and a context that tasks/cancel cancels. Without task support (stdio
// without tasks, TaskOptions.Runs nil) it calls run with a nil Elicitor.
func (s *Server) AdoptRun(ctx context.Context, id, workflow string, run func(context.Context, runtime.Elicitor) (*runtime.Run, error)) (*runtime.Run, error) {
	t := s.tasks
	if t == nil {
		return run(ctx, nil)
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	lt := &liveTask{
		id: id, workflow: workflow, canElicit: true, cancel: cancel,
		done: make(chan struct{}), updated: time.Now(), changed: make(chan struct{}),
	}
	t.mu.Lock()
	t.live[id] = lt
	t.mu.Unlock()
	final, err := run(runCtx, &taskElicitor{t: t, lt: lt})
	lt.final, lt.startErr = final, err
	t.mu.Lock()
	delete(t.live, id)
	t.mu.Unlock()
	close(lt.done)
	return final, err
}
