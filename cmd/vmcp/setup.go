package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/vmcp-dev/vmcp/authoring"
	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/runtime/mcpclient"
)

// version is reported to backends and clients.
const version = "0.1.0"

// defaultConfig is the config vmcp run and vmcp call read without --config,
// in the working directory.
const defaultConfig = "vmcp.yaml"

// stack is everything a command needs to run workflows: the config, the
// compiled plan, the connected backends and the engine.
type stack struct {
	cfg     *config.Config
	plan    *ir.Plan
	backend *mcpclient.Manager
	engine  *runtime.Engine
	// exec runs the workflows: engine, or with executor: temporal the
	// Temporal runner (temporal.go).
	exec executor
	ops  *ops
	// closeExec releases what exec holds beyond the engine (the Temporal
	// client).
	closeExec func()
	// authoring is set once serveAuthoring ran (authoring.enabled).
	authoring *authoring.Service
}

// openStack loads the config (configPath, or ./vmcp.yaml when it is
// empty), connects every backend, compiles the
// workflows with the backends' live tool schemas (so unknown tools and
// mistyped arguments are compile errors with positions), and builds the
// engine. Diagnostics, warnings included, are printed on diagOut. Every
// failure is an exit-1 error; nothing is left running when it fails.
func openStack(ctx context.Context, configPath string, log *slog.Logger, diagOut io.Writer) (*stack, error) {
	cfg, err := loadConfig(configPath, diagOut)
	if err != nil {
		return nil, err
	}
	if len(cfg.Sources()) == 0 && !cfg.Authoring.Enabled {
		return nil, failuref("%s: no workflows: add workflows: or compositeTools: (or authoring: {enabled: true} to let agents write them)", cfg.Path)
	}
	mgr, err := mcpclient.Connect(ctx, cfg.Backends, mcpclient.Options{
		Logger: log, ClientName: "vmcp", ClientVersion: version, MaxResultBytes: cfg.Limits.MaxResultBytes,
	})
	if err != nil {
		return nil, failuref("%v", err)
	}
	ok := false
	defer func() {
		if !ok {
			mgr.Close()
		}
	}()
	plan := &ir.Plan{Version: ir.Version}
	var src diag.Sources
	if len(cfg.Sources()) > 0 {
		var diags diag.List
		plan, diags, src = compilePlan(cfg.Sources(), mgr, cfg.Limits.MaxIterations)
		if len(diags) > 0 {
			diag.Print(diagOut, diags.Sorted(), diag.Text, src)
		}
		if diags.HasErrors() {
			return nil, failuref("%d error(s) in the workflows of %s", len(diags.Errors()), cfg.Path)
		}
	}
	// Every run records the version it ran; a workflow from files is
	// versioned by the hash of its compiled form.
	authoring.FileVersions(plan)
	o, err := openOps(cfg, log) // store, metrics: see ops.go
	if err != nil {
		return nil, failuref("%v", err)
	}
	o.sources = src
	opts := o.engineOptions(runtime.Options{Backend: mgr, Schemas: catalogHints{mgr.Catalog()}, Logger: log, MaxIterations: cfg.Limits.MaxIterations})
	// server.maxParallel bounds backend calls across all runs, and each
	// backend's maxParallel its own share; outside the metrics wrapper, so
	// waiting for a slot is not counted as call latency.
	opts.Backend = runtime.LimitCalls(opts.Backend, callLimits(cfg))
	eng, err := runtime.New(plan, opts)
	if err != nil {
		o.Close()
		return nil, failuref("%v", err)
	}
	st := &stack{cfg: cfg, plan: plan, backend: mgr, engine: eng, exec: eng, ops: o, closeExec: func() {}}
	if cfg.Executor.Temporal() {
		c, err := dialTemporal(cfg.Executor, log)
		if err != nil {
			o.Close()
			return nil, failuref("%v", err)
		}
		tr, err := temporalRunner(st, c, log)
		if err != nil {
			c.Close()
			o.Close()
			return nil, failuref("%v", err)
		}
		st.exec, st.closeExec = tr, c.Close
	}
	ok = true
	return st, nil
}

// callLimits are the config's bounds on backend calls in flight.
func callLimits(cfg *config.Config) runtime.CallLimits {
	lim := runtime.CallLimits{Total: cfg.Server.MaxParallel, PerBackend: map[string]int{}, Rates: map[string]runtime.RateLimit{}}
	for name, b := range cfg.Backends {
		lim.PerBackend[name] = b.MaxParallel
		if r := b.RateLimit; r != nil {
			lim.Rates[name] = runtime.RateLimit{PerSecond: r.PerSecond, Burst: r.Burst}
		}
	}
	return lim
}

// Close shuts the backends down, then closes the run store.
func (s *stack) Close() error {
	s.closeExec()
	err := s.backend.Close()
	if cerr := s.ops.Close(); cerr != nil {
		return fmt.Errorf("closing the run store: %w", errors.Join(err, cerr))
	}
	if err != nil {
		return fmt.Errorf("closing backends: %w", err)
	}
	return nil
}

// workflow returns the engine's workflow of that name.
func (s *stack) workflow(name string) (*ir.Workflow, error) {
	var names []string
	for _, wf := range s.engine.Workflows() { // with authored ones, once loaded
		if wf.Name == name {
			return wf, nil
		}
		names = append(names, wf.Name)
	}
	return nil, errors.New(unknownToolMessage(name, names))
}

func unknownToolMessage(name string, names []string) string {
	msg := fmt.Sprintf("unknown tool %q", name)
	if len(names) > 0 {
		msg += fmt.Sprintf("; the workflows are: %v", names)
	}
	return msg
}
