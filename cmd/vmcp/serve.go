package main

import (
	"context"
	"log/slog"

	"github.com/vmcp-dev/vmcp/mcpserver"
	"github.com/vmcp-dev/vmcp/store/postgres"
	"github.com/vmcp-dev/vmcp/temporalrun"
)

// serve builds the MCP server of `vmcp run` on the open stack: the web
// console (over HTTP or with --admin-listen), the workflow, run and
// authoring tools, and the pick-up of runs an earlier process left going.
// sigCtx ends at the first signal; ctx when serving must stop. It returns
// the server and the tracker of the runs in flight, for the shutdown.
func (st *stack) serve(sigCtx, ctx context.Context, transport, adminListen string, log *slog.Logger) (*mcpserver.Server, *runTracker, error) {
	if transport == "http" || adminListen != "" {
		if err := st.ops.openOIDC(ctx); err != nil { // server.auth.oidc: oidc.go
			return nil, nil, failuref("%v", err)
		}
		if err := st.ops.openConsole(ctx, st.exec, st.consoleCatalog()); err != nil { // the web console: console.go
			return nil, nil, failuref("%v", err)
		}
	}
	// The tracker knows the runs in flight, for the shutdown.
	runs := newRunTracker(st.ops.runner(st.exec))                   // metrics and run logs: ops.go
	st.ops.draining = runs.draining                                 // /readyz answers 503 from the first signal on
	st.ops.rerun = &rerunner{ctx: ctx, runner: runs, exec: st.exec} // re-runs from the API and the console
	srv, err := mcpserver.New(mcpserver.Options{
		Tasks: mcpserver.TaskOptions{ // long runs as MCP Tasks
			Runs:  st.exec,
			TTL:   st.cfg.State.Retention,
			Board: st.ops.taskBoard(), // replicas on postgres: questions answered through any
		},
		RunLimits: mcpserver.RunLimits{ // server.limits
			Runs:     st.cfg.Server.Limits.Runs,
			PerOwner: st.cfg.Server.Limits.PerOwnerRuns,
			Wait:     st.cfg.Server.Limits.OnLimit == "wait",
		},
		Runner:       runs,
		Backends:     st.backend,
		BackendNames: st.backend.Backends(),
		Expose:       st.cfg.Server.ExposeBackendTools,
		Logger:       log,
		TraceContext: st.ops.traceContext(), // telemetry: the caller's trace
		Name:         "vmcp",
		Version:      version,
		// Sessions of the streamable HTTP transport.
		SessionIdleTimeout: st.cfg.Server.Sessions.IdleTimeout,
		MaxSessions:        st.cfg.Server.Sessions.Max,
		// Authored workflows come and go while vmcp runs.
		ListChanged: st.cfg.Authoring.Enabled,
	})
	if err != nil {
		return nil, nil, failuref("%v", err)
	}
	// Replicas on one database: a cancel asked of another replica reaches
	// this one when it runs the run (store/postgres/notify.go).
	if db, ok := st.ops.store.(*postgres.Store); ok && !st.cfg.Executor.Temporal() {
		runs.release = func() (int, error) { return db.Release(context.Background()) }
		db.OnCancel(func(id string) {
			if err := st.engine.Cancel(context.WithoutCancel(ctx), id); err != nil {
				log.Warn("cancelling a run at another replica's request failed", "run_id", id, "err", err)
			}
		})
	}
	if err := st.ops.addRunTools(srv, st.exec); err != nil {
		return nil, nil, failuref("%v", err)
	}
	if st.cfg.Authoring.Enabled {
		if err := st.serveAuthoring(sigCtx, srv, log); err != nil { // authoring.go
			return nil, nil, failuref("%v", err)
		}
	}
	// With executor: temporal, runs outlive this process: from the
	// first signal on, a run whose caller is cancelled by the
	// shutdown is left going on Temporal (the next vmcp run
	// records its result), not cancelled.
	// The schedules fire through the same runner, until the first signal.
	stopSchedules, err := st.startSchedules(sigCtx, ctx, runs, log) // schedules.go
	if err != nil {
		return nil, nil, failuref("%v", err)
	}
	go func() { <-sigCtx.Done(); stopSchedules() }()
	if tr, ok := st.exec.(*temporalrun.Runner); ok {
		go func() { <-sigCtx.Done(); tr.Detach() }()
		// Runs an earlier vmcp run left going are recorded as
		// they end (temporalrun/reattach.go).
		go func() {
			n, err := tr.Reattach(sigCtx)
			if err != nil {
				log.Error("picking up the runs of an earlier vmcp run", "err", err)
			} else if n > 0 {
				log.Info("picked up runs of an earlier vmcp run", "count", n)
			}
		}()
	}
	// The runs the previous process left running go on in the
	// background, now that the backends are up (resume.go). With
	// executor: temporal they went on on Temporal instead, and
	// Reattach (above) records them.
	if rs, ids := st.ops.newResumeSet(st.engine, runs); rs != nil && !st.cfg.Executor.Temporal() {
		rs.adopt = srv.AdoptRun // elicitations asked again reach task clients
		rs.resumeRuns(ctx, ids)
		if st.ops.claimer != nil { // postgres: the runs of replicas that stop
			go rs.takeOver(sigCtx, ctx, st.ops.claimer)
		}
	}
	return srv, runs, nil
}
