package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"

	"github.com/vmcp-dev/vmcp/authoring"
	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/mcpclient"
	"github.com/vmcp-dev/vmcp/runtime"
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
// empty) and opens the stack it describes (openStackFor).
func openStack(ctx context.Context, configPath string, log *slog.Logger, diagOut io.Writer) (*stack, error) {
	cfg, err := loadConfig(configPath, diagOut)
	if err != nil {
		return nil, err
	}
	return openStackFor(ctx, cfg, log, diagOut)
}

// openStackFor starts every backend in the background, waits for the ones
// the workflows use (usedBackends), compiles the workflows with their
// live tool schemas (so unknown tools and mistyped arguments are compile
// errors with positions), and builds the engine. The other backends go on
// starting; a call that needs one waits for it. Diagnostics, warnings
// included, are printed on diagOut. Every failure is an exit-1 error;
// nothing is left running when it fails.
func openStackFor(ctx context.Context, cfg *config.Config, log *slog.Logger, diagOut io.Writer) (*stack, error) {
	if len(cfg.Sources()) == 0 && !cfg.Authoring.Enabled {
		return nil, failuref("%s: no workflows: add workflows: or compositeTools: (or authoring: {enabled: true} to let agents write them)", cfg.Path)
	}
	mgr, err := mcpclient.Start(cfg.Backends, mcpclient.Options{
		Logger: log, ClientName: "vmcp", ClientVersion: version, MaxResultBytes: cfg.Limits.MaxResultBytes,
	})
	if err != nil {
		return nil, failuref("%v", err)
	}
	need, err := usedBackends(cfg, mgr, diagOut)
	if err == nil {
		err = mgr.Wait(ctx, need...)
	}
	if err != nil {
		mgr.Close()
		return nil, failuref("%v", err)
	}
	go reportLateBackends(mgr, need, log)
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
		plan, diags, src = compilePlan(cfg.Sources(), mgr.Catalog(), cfg.Limits.MaxIterations)
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
	opts := o.engineOptions(runtime.Options{Backend: mgr, Schemas: newCatalogHints(mgr.Catalog()), Logger: log, MaxIterations: cfg.Limits.MaxIterations, MaxResultBytes: cfg.Limits.MaxResultBytes})
	// server.maxParallel bounds backend calls across all runs, and each
	// backend's maxParallel its own share; outside the metrics wrapper, so
	// waiting for a slot is not counted as call latency.
	lim := callLimits(cfg)
	o.shareRates(&lim) // among the replicas on a postgres store: ratelimits.go
	opts.Backend = runtime.LimitCalls(opts.Backend, lim)
	eng, err := runtime.New(plan, opts)
	if err != nil {
		o.Close()
		return nil, failuref("%v", err)
	}
	st := &stack{cfg: cfg, plan: plan, backend: mgr, engine: eng, exec: eng, ops: o, closeExec: func() {}}
	if err := st.checkSchedules(diagOut); err != nil { // schedules.go
		o.Close()
		return nil, err
	}
	if cfg.Executor.Temporal() {
		c, err := dialTemporal(cfg.Executor, log, o.tracing)
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

// usedBackends names the backends vmcp must wait for before it compiles:
// those the workflows' tool steps name. It compiles the workflows once
// without a catalog to find them, so errors that need no backend are
// reported at once. Every backend is needed when a step names a tool
// without its backend (only the catalog can resolve it), when
// exposeBackendTools serves them all, or when authoring lets agents write
// workflows against any of them.
func usedBackends(cfg *config.Config, mgr *mcpclient.Manager, diagOut io.Writer) ([]string, error) {
	all := mgr.Backends()
	if cfg.Server.ExposeBackendTools || cfg.Authoring.Enabled || len(cfg.Sources()) == 0 {
		return all, nil
	}
	plan, diags, src := compilePlan(cfg.Sources(), nil, cfg.Limits.MaxIterations)
	if diags.HasErrors() {
		diag.Print(diagOut, diags.Sorted(), diag.Text, src)
		return nil, fmt.Errorf("%d error(s) in the workflows of %s", len(diags.Errors()), cfg.Path)
	}
	var used []string
	bare := false
	for _, wf := range plan.Workflows {
		ir.EachStep(slices.Concat(wf.Steps, wf.Finally), func(s *ir.Step) {
			switch {
			case s.Type != ir.StepTool || s.Tool == nil:
			case s.Tool.Resolved():
				// A backend the config lacks is the compile's error, with
				// its position.
				if cfg.Backends[s.Tool.Backend] != nil {
					used = append(used, s.Tool.Backend)
				}
			default:
				bare = true
			}
		})
	}
	if bare {
		return all, nil
	}
	return used, nil
}

// reportLateBackends logs, as each ends, the first start of every backend
// that vmcp did not wait for: a failed one is started again by the next
// call that needs it, which fails naming it if it cannot start.
func reportLateBackends(mgr *mcpclient.Manager, waited []string, log *slog.Logger) {
	done := map[string]bool{}
	for _, n := range waited {
		done[n] = true
	}
	for _, n := range mgr.Backends() {
		if done[n] {
			continue
		}
		if err := mgr.Wait(context.Background(), n); err != nil && !mgr.Closed() {
			log.Warn("backend did not start; calls that need it will try again", "backend", n, "err", err)
		}
	}
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
