// Package access applies the owner rule to runs: a caller sees the runs
// it owns, a caller with the admin scope (or the local operator) sees
// every run, and another owner's run is "not found" (runtime.ErrRunNotFound,
// exactly as for an id that does not exist), never "forbidden", so ids
// are not oracles.
//
// The caller is httpsafe.Caller of the request's context, and the rule is
// httpsafe.Identity.Sees. Engine and Store wrap what reads and cancels
// runs so that every way to a run (the HTTP API and `vmcp runs` over it,
// the console and its event stream, the run tools, MCP tasks) goes
// through the same check: the API, the console and the run tools wrap
// what they are given when they are built, so no handler can forget it.
package access

import (
	"context"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Visible reports whether the caller of ctx may see run.
func Visible(ctx context.Context, run *runtime.Run) bool {
	return httpsafe.Caller(ctx).Sees(run.Owner)
}

// Filter narrows f to the runs the caller of ctx may see.
func Filter(ctx context.Context, f runtime.RunFilter) runtime.RunFilter {
	if owner := httpsafe.Caller(ctx).OwnerFilter(); owner != "" {
		f.Owner = owner
	}
	return f
}

// Runner reads and cancels runs (*runtime.Engine).
type Runner interface {
	Status(ctx context.Context, id string) (*runtime.Run, error)
	Cancel(ctx context.Context, id string) error
}

// Lister reads the run history (any runtime.Store).
type Lister interface {
	GetRun(ctx context.Context, id string) (*runtime.Run, error)
	ListRuns(ctx context.Context, filter runtime.RunFilter) ([]*runtime.Run, error)
}

// Engine returns e seen by each request's caller: Status of a run the
// caller may not see, and Cancel of it, fail with runtime.ErrRunNotFound.
func Engine(e Runner) Runner {
	if w, ok := e.(engine); ok {
		return w
	}
	return engine{e}
}

type engine struct{ e Runner }

func (w engine) Status(ctx context.Context, id string) (*runtime.Run, error) {
	run, err := w.e.Status(ctx, id)
	if err != nil {
		return nil, err
	}
	if !Visible(ctx, run) {
		return nil, runtime.ErrRunNotFound
	}
	return run, nil
}

// Cancel checks the run's owner first, so that another owner's run is
// never touched.
func (w engine) Cancel(ctx context.Context, id string) error {
	if !httpsafe.Caller(ctx).SeesAll() {
		if _, err := w.Status(ctx, id); err != nil {
			return err
		}
	}
	return w.e.Cancel(ctx, id)
}

// Store returns s seen by each request's caller: GetRun of a run the
// caller may not see fails with runtime.ErrRunNotFound, and ListRuns
// lists the caller's runs alone.
func Store(s Lister) Lister {
	if w, ok := s.(store); ok {
		return w
	}
	return store{s}
}

type store struct{ s Lister }

func (w store) GetRun(ctx context.Context, id string) (*runtime.Run, error) {
	run, err := w.s.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	if !Visible(ctx, run) {
		return nil, runtime.ErrRunNotFound
	}
	return run, nil
}

func (w store) ListRuns(ctx context.Context, f runtime.RunFilter) ([]*runtime.Run, error) {
	return w.s.ListRuns(ctx, Filter(ctx, f))
}
