package observe

import (
	"context"
	"log/slog"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// RunLogger returns log with the run's id and workflow attached, so every
// line logged through it names the run.
func RunLogger(log *slog.Logger, runID, workflow string) *slog.Logger {
	return log.With("run_id", runID, "workflow", workflow)
}

// StepLogger returns log with the run's and the step's ids attached.
func StepLogger(log *slog.Logger, runID, workflow, stepID string) *slog.Logger {
	return log.With("run_id", runID, "workflow", workflow, "step_id", stepID)
}

// Logger returns an event handler that logs each step event on log
// (with the run's trace_id and span_id when it is traced):
// retries and step failures are Warn, the rest Debug. The start and the end
// of a run are not logged here: the MCP server logs "run started" (Debug)
// and "run finished" (Info, with status and duration) for each run, and one
// "run finished" line per run is the contract. So the default level shows
// one line per run plus every problem.
func Logger(log *slog.Logger) func(runtime.Event) {
	return func(ev runtime.Event) {
		if ev.Kind == runtime.EventRunStarted || ev.Kind == runtime.EventRunFinished {
			return
		}
		attrs := []slog.Attr{slog.String("run_id", ev.RunID), slog.String("workflow", ev.Workflow)}
		if ev.StepID != "" {
			attrs = append(attrs, slog.String("step_id", ev.StepID))
		}
		if ev.TraceID != "" {
			attrs = append(attrs, slog.String("trace_id", ev.TraceID))
			if ev.SpanID != "" {
				attrs = append(attrs, slog.String("span_id", ev.SpanID))
			}
		}
		level := slog.LevelDebug
		msg := string(ev.Kind)
		switch ev.Kind {
		case runtime.EventStepStarted:
			msg = "step started"
		case runtime.EventStepCompleted:
			msg = "step completed"
			attrs = append(attrs, slog.Int("attempts", ev.Attempt))
		case runtime.EventStepSkipped:
			msg = "step skipped"
		case runtime.EventStepRetrying:
			level, msg = slog.LevelWarn, "step retrying"
			attrs = append(attrs, slog.Int("attempt", ev.Attempt))
		case runtime.EventStepFailed:
			level, msg = slog.LevelWarn, "step failed"
			attrs = append(attrs, slog.Int("attempts", ev.Attempt))
		}
		if ev.Err != "" {
			attrs = append(attrs, slog.String("err", ev.Err))
		}
		log.LogAttrs(context.Background(), level, msg, attrs...)
	}
}

// Tee returns an event handler that calls each non-nil handler in order.
func Tee(handlers ...func(runtime.Event)) func(runtime.Event) {
	var hs []func(runtime.Event)
	for _, h := range handlers {
		if h != nil {
			hs = append(hs, h)
		}
	}
	return func(ev runtime.Event) {
		for _, h := range hs {
			h(ev)
		}
	}
}

// Runner is what the MCP server needs from the engine (the same method set
// as mcpserver.Runner).
type Runner interface {
	Workflows() []*ir.Workflow
	Run(ctx context.Context, workflow string, params map[string]any, opts runtime.RunOptions) (*runtime.Run, error)
}

// WithEvents returns a Runner that runs through r and also sends every
// event of every run to onEvent, after the caller's own OnEvent (progress
// notifications stay first), with Event.Owner set to the run's owner.
func WithEvents(r Runner, onEvent func(runtime.Event)) Runner {
	return &eventRunner{Runner: r, onEvent: onEvent}
}

type eventRunner struct {
	Runner
	onEvent func(runtime.Event)
}

func (e *eventRunner) Run(ctx context.Context, workflow string, params map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
	owner := opts.Owner
	opts.OnEvent = Tee(opts.OnEvent, func(ev runtime.Event) {
		ev.Owner = owner
		e.onEvent(ev)
	})
	return e.Runner.Run(ctx, workflow, params, opts)
}
