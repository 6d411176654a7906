package runtime

// Re-runs (vmcp runs rerun, POST /api/v1/runs/{id}/rerun, the console's
// button): a finished run's workflow runs again with the same parameters,
// as a new run whose Trigger is "rerun:ID".
//
// The version: a run records the workflow version it ran
// (Run.WorkflowVersion). A re-run runs that version when it is the one
// served now, and the served one when asked for the current version; a
// run of a version no longer served is refused with an error that says
// so and how to run the current one instead. The run of an unsaved draft
// cannot be re-run: its workflow was never served.

import (
	"context"
	"errors"
	"fmt"

	"github.com/vmcp-dev/vmcp/ir"
)

// TriggerRerun is the prefix of a re-run's Trigger, followed by the id of
// the run it re-ran.
const TriggerRerun = "rerun:"

// Rerunner starts re-runs. Rerun starts a new run of run id's workflow
// with its parameters (on the version it ran, or the current one) and
// returns the new run as it is once started; the run goes on in the
// background. Its errors are ErrRunNotFound or a *RerunError.
type Rerunner interface {
	Rerun(ctx context.Context, id string, current bool) (*Run, error)
}

// RerunError is a run that cannot be re-run, with the reason and what to
// do instead.
type RerunError struct {
	ID  string
	Msg string
}

func (e *RerunError) Error() string { return fmt.Sprintf("run %s cannot be re-run: %s", e.ID, e.Msg) }

// Rerun is a re-run ready to start: the workflow, its parameters and the
// run options (Trigger set).
type Rerun struct {
	Workflow string
	Params   map[string]any
	Options  RunOptions
}

// PrepareRerun reads run id from store and checks that it can be re-run:
// it has finished, it was no draft, its workflow is served (workflow
// looks it up), and, unless current, the version served is the one it
// ran.
func PrepareRerun(ctx context.Context, store Store, workflow func(string) (*ir.Workflow, bool), id string, current bool) (*Rerun, error) {
	run, err := store.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	fail := func(format string, args ...any) (*Rerun, error) {
		return nil, &RerunError{ID: id, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case !run.Status.Finished():
		return fail("it is still %s; re-run it once it has finished (or cancel it first)", run.Status)
	case run.Draft:
		return fail("it ran an unsaved draft of %q, which is not served; save the workflow and run it", run.Workflow)
	}
	wf, ok := workflow(run.Workflow)
	if !ok {
		return fail("its workflow %q is no longer served", run.Workflow)
	}
	if !current && wf.Version != run.WorkflowVersion {
		return fail("it ran version %s of workflow %q, and the version served now is %s; re-run it with --current (?current=true) to run the current version",
			versionName(run.WorkflowVersion), run.Workflow, versionName(wf.Version))
	}
	return &Rerun{Workflow: run.Workflow, Params: run.Params, Options: RunOptions{Trigger: TriggerRerun + run.ID, Owner: run.Owner}}, nil
}

// versionName prints a version for messages.
func versionName(v string) string {
	if v == "" {
		return "(none)"
	}
	return v
}

// IsRerunError reports whether err is a *RerunError.
func IsRerunError(err error) bool {
	var re *RerunError
	return errors.As(err, &re)
}
