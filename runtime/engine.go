package runtime

// TEMPORARY SIGNATURES: the runtime helper replaces this file with the real
// engine. The signatures below are the contract other packages code against.

import (
	"context"
	"log/slog"

	"github.com/vmcp-dev/vmcp/ir"
)

// Options configure an Engine.
type Options struct {
	Backend Backend
	// Schemas, when set, lets the engine coerce string arguments to the
	// types a backend tool declares.
	Schemas SchemaSource
	// Store keeps runs; nil means an in-memory store.
	Store  Store
	Logger *slog.Logger
}

// RunOptions configure one run.
type RunOptions struct {
	// RunID is used when set (it must be unique); otherwise a UUID is made.
	RunID string
	// Elicitor answers elicitation steps; nil makes them fail clearly (or
	// take their onCancel action).
	Elicitor Elicitor
	// OnEvent receives progress events, synchronously, in order per step.
	OnEvent func(Event)
}

// Engine executes the workflows of a plan.
type Engine struct{}

// New parses every template of the plan once and returns an engine.
func New(plan *ir.Plan, opts Options) (*Engine, error) { panic("not implemented") }

// Workflows returns the plan's workflows in plan order.
func (e *Engine) Workflows() []*ir.Workflow { panic("not implemented") }

// Run validates params against the workflow's input schema (applying
// defaults) and executes the workflow to the end. It returns the final run
// record; a workflow failure is Run.Status failed with Run.Error set, not a
// Go error. The error is non-nil only when the run could not start: an
// unknown workflow or invalid parameters (*InputError).
func (e *Engine) Run(ctx context.Context, workflow string, params map[string]any, opts RunOptions) (*Run, error) {
	panic("not implemented")
}

// Status returns a copy of a run's record, running or finished.
func (e *Engine) Status(ctx context.Context, id string) (*Run, error) { panic("not implemented") }

// Cancel stops a running run: backend calls in flight are cancelled and the
// run ends with status cancelled. It returns ErrRunNotFound for an unknown
// id; cancelling a finished run is not an error.
func (e *Engine) Cancel(ctx context.Context, id string) error { panic("not implemented") }

// InputError reports parameters that do not match the workflow's input
// schema. It names the parameter and the rule, never the value.
type InputError struct {
	Workflow string
	Problems []string
}

func (e *InputError) Error() string {
	msg := "invalid arguments for " + e.Workflow + ":"
	for _, p := range e.Problems {
		msg += " " + p + ";"
	}
	return msg[:len(msg)-1]
}
