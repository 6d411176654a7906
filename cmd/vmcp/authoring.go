package main

// Authoring wiring for `vmcp run` (authoring.enabled) and `vmcp workflows
// --config`: the store the config chooses, the compiler over the live
// catalog, and the service that serves saved versions.

import (
	"context"
	"fmt"
	"log/slog"
	"sort"

	"github.com/vmcp-dev/vmcp/authoring"
	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/mcpserver"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/postgres"
	"github.com/vmcp-dev/vmcp/store/sqlite"
)

// authoringStore opens the store of authored workflows: authoring.dir
// when set, else the run store when state.store is sqlite or postgres, else
// memory (saved workflows then last until vmcp stops, and a warning says
// so).
func authoringStore(cfg *config.Config, runs runtime.Store, log *slog.Logger) (authoring.Store, error) {
	if cfg.Authoring.Dir != "" {
		return authoring.NewFileStore(cfg.Authoring.Dir)
	}
	if db, ok := runs.(*sqlite.Store); ok {
		return authoring.NewSQLiteStore(db), nil
	}
	if db, ok := runs.(*postgres.Store); ok {
		return authoring.NewPostgresStore(db), nil
	}
	log.Warn("authored workflows are kept in memory and are lost when vmcp stops: set authoring.dir, or state.store: sqlite, to keep them")
	return authoring.NewMemoryStore(), nil
}

// authoringCompiler checks drafts against the stack's live catalog.
func (s *stack) authoringCompiler() *authoring.Compiler {
	allowed := append([]string(nil), s.cfg.Authoring.Backends...)
	sort.Strings(allowed)
	return &authoring.Compiler{Catalog: s.backend.Catalog(), Allowed: allowed, MaxIterations: s.cfg.Limits.MaxIterations}
}

// authoringLimits are authoring.limits (zero fields take the defaults).
func (s *stack) authoringLimits() authoring.Limits {
	a := s.cfg.Authoring
	return authoring.Limits{Workflows: a.MaxWorkflows, Versions: a.MaxVersions, Bytes: a.MaxBytes}
}

// authoringService builds the authoring service over the config's store;
// srv, when not nil, gets the saved workflows as tools.
func (s *stack) authoringService(srv *mcpserver.Server, log *slog.Logger) (*authoring.Service, error) {
	store, err := authoringStore(s.cfg, s.ops.store, log)
	if err != nil {
		return nil, err
	}
	opts := authoring.Options{Store: store, Compiler: s.authoringCompiler(), Files: s.plan.Workflows, Engine: s.servingEngines(), Logger: log,
		Limits: s.authoringLimits()}
	if srv != nil {
		opts.Server = srv
	}
	return authoring.NewService(opts), nil
}

// servingEngines is what gets each new workflow set: the local engine
// (which `vmcp call` and the console read the workflows from) and, with
// executor: temporal, the Temporal runner, whose runs carry the plan to
// the workers in their input.
func (s *stack) servingEngines() authoring.Engine {
	if tr, ok := s.exec.(authoring.Engine); ok && s.exec != executor(s.engine) {
		return engines{s.engine, tr}
	}
	return s.engine
}

// engines hands a workflow set to each engine in order, stopping at the
// first that refuses it.
type engines []authoring.Engine

// SetWorkflows implements authoring.Engine.
func (es engines) SetWorkflows(plan *ir.Plan) error {
	for _, e := range es {
		if err := e.SetWorkflows(plan); err != nil {
			return err
		}
	}
	return nil
}

// serveAuthoring registers the authoring tools on srv and serves the
// saved workflows (vmcp run).
func (s *stack) serveAuthoring(ctx context.Context, srv *mcpserver.Server, log *slog.Logger) error {
	svc, err := s.authoringService(srv, log)
	if err != nil {
		return err
	}
	if err := authoring.Register(srv, svc); err != nil {
		return err
	}
	problems, err := svc.Load(ctx)
	if err != nil {
		return fmt.Errorf("loading authored workflows: %w", err)
	}
	log.Info("authoring enabled", "authored", len(svc.List())-len(s.plan.Workflows), "not served", len(problems))
	s.authoring = svc
	// Replicas on one database: a save or delete on any is served here at
	// once, and this server's sessions get list_changed.
	if db, ok := s.ops.store.(*postgres.Store); ok {
		db.OnWorkflowChange(func(name string) {
			if err := svc.Reload(context.WithoutCancel(ctx), name); err != nil {
				log.Warn("serving an authored workflow changed by another vmcp failed", "workflow", name, "err", err)
			}
		})
	}
	return nil
}

// loadAuthored makes the saved workflows runnable by the engine, without
// a server (vmcp call).
func (s *stack) loadAuthored(ctx context.Context, log *slog.Logger) error {
	svc, err := s.authoringService(nil, log)
	if err != nil {
		return err
	}
	if _, err := svc.Load(ctx); err != nil {
		return fmt.Errorf("loading authored workflows: %w", err)
	}
	s.authoring = svc
	return nil
}
