package main

// executor: temporal (design.md "Scale-out on Temporal"). vmcp run and vmcp
// call still load the config, connect the backends (their live tool lists
// make the compile-time checks) and keep vmcp's run store, but each run is
// a Temporal workflow performed by `vmcp worker` processes
// (temporalrun): the plan, and the schemas and annotations of the
// tools it calls, travel in the workflow's input.

import (
	"context"
	"fmt"
	"log/slog"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	tlog "go.temporal.io/sdk/log"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/mcpserver"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/telemetry/trace"
	"github.com/vmcp-dev/vmcp/temporalrun"
)

// executor is what runs workflows for the commands: the local engine, or
// the Temporal runner.
type executor interface {
	mcpserver.Runner
	Status(ctx context.Context, id string) (*runtime.Run, error)
	Cancel(ctx context.Context, id string) error
	Store() runtime.Store
	Workflow(name string) (*ir.Workflow, bool)
}

// dialTemporal connects to the Temporal frontend of the executor section.
// The SDK's own logs go to log at warn and above. With tracing on, the
// SDK's tracing interceptor carries the run's trace to the workers (and,
// on a worker, makes its workflow and activity spans).
func dialTemporal(ex config.Executor, log *slog.Logger, tracing *trace.Provider) (client.Client, error) {
	opts := client.Options{
		HostPort:  ex.Address,
		Namespace: ex.Namespace,
		Logger:    tlog.NewStructuredLogger(slog.New(minLevel{log.Handler(), slog.LevelWarn})),
	}
	if tracing != nil {
		ti, err := temporalrun.TracingInterceptor(tracing.Tracer(), tracing.Propagator())
		if err != nil {
			return nil, fmt.Errorf("telemetry: the Temporal tracing interceptor: %w", err)
		}
		opts.Interceptors = []interceptor.ClientInterceptor{ti}
	}
	c, err := client.Dial(opts)
	if err != nil {
		return nil, fmt.Errorf("cannot reach Temporal at %s (executor.address), namespace %q: %v; start a local one with `temporal server start-dev`", ex.Address, ex.Namespace, err)
	}
	return c, nil
}

// minLevel drops records below a level.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{h.Handler.WithAttrs(as), h.min}
}
func (h minLevel) WithGroup(g string) slog.Handler { return minLevel{h.Handler.WithGroup(g), h.min} }

// temporalRunner builds the runner of executor: temporal over the stack's
// plan, catalog and store.
func temporalRunner(st *stack, c client.Client, log *slog.Logger) (*temporalrun.Runner, error) {
	return temporalrun.NewRunner(temporalrun.RunnerOptions{
		Client:           c,
		TaskQueue:        st.cfg.Executor.TaskQueue,
		Plan:             st.plan,
		Tools:            st.backend.Catalog(),
		Store:            st.ops.store,
		HeartbeatTimeout: st.cfg.Executor.HeartbeatTimeout,
		MaxIterations:    st.cfg.Limits.MaxIterations,
		MaxResultBytes:   st.cfg.Limits.MaxResultBytes,
		Questions:        st.ops.questions,
		Logger:           log,
		Tracer:           st.ops.tracer(),
	})
}
