package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/runtime/server"
	"github.com/vmcp-dev/vmcp/runtime/temporalrun"
)

func newRunCmd(io streams) *cobra.Command {
	var configPath, transport, listen, logLevel, adminListen string
	var insecure bool
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "run [--config vmcp.yaml] [--transport stdio|http] [--listen 127.0.0.1:8080]",
		Short: "Serve the workflows as MCP tools",
		Long: `Serve every workflow of the config as an MCP tool, over stdio or
streamable HTTP (at /mcp on --listen). The flags override the config's
server: section. Without --config it reads ./vmcp.yaml.

The first SIGINT (Ctrl-C) or SIGTERM shuts down gracefully: no new runs
start, and the runs in flight get --shutdown-grace to finish; then they
are cancelled, and their clients get a "cancelled" result. The backends
are closed last. A second SIGINT or SIGTERM exits at once (status 130).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger(io.err, logLevel)
			if err != nil {
				return err
			}
			if grace < 0 {
				return usageErrorf("--shutdown-grace must not be negative, not %s", grace)
			}
			if cmd.Flags().Changed("transport") && transport != "stdio" && transport != "http" {
				return usageErrorf("--transport must be stdio or http, not %q", transport)
			}
			st, err := openStack(cmd.Context(), configPath, log, io.err)
			if err != nil {
				return err
			}
			defer st.Close()
			if !cmd.Flags().Changed("transport") && st.cfg.Server.Transport != "" {
				transport = st.cfg.Server.Transport
			}
			if !cmd.Flags().Changed("listen") && st.cfg.Server.Listen != "" {
				listen = st.cfg.Server.Listen
			}
			// cmd.Context() ends at the first signal; serving goes on until
			// the shutdown (shutdown.go) says it may stop.
			ctx, stopServing := context.WithCancel(context.WithoutCancel(cmd.Context()))
			defer stopServing()
			if transport == "http" || adminListen != "" {
				if err := st.ops.openConsole(ctx, st.exec, st.consoleCatalog()); err != nil { // the web console: console.go
					return failuref("%v", err)
				}
			}
			// The tracker knows the runs in flight, for the shutdown.
			runs := newRunTracker(st.ops.runner(st.exec))                   // metrics and run logs: ops.go
			st.ops.rerun = &rerunner{ctx: ctx, runner: runs, exec: st.exec} // re-runs from the API and the console
			srv, err := server.New(server.Options{
				Tasks: server.TaskOptions{ // long runs as MCP Tasks
					Runs:          st.exec,
					TTL:           st.cfg.State.Retention,
					Authenticated: len(st.cfg.Server.Auth.Tokens) > 0,
				},
				Runner:       runs,
				Backends:     st.backend,
				BackendNames: st.backend.Backends(),
				Expose:       st.cfg.Server.ExposeBackendTools,
				Logger:       log,
				Name:         "vmcp",
				Version:      version,
				// Sessions of the streamable HTTP transport.
				SessionIdleTimeout: st.cfg.Server.Sessions.IdleTimeout,
				MaxSessions:        st.cfg.Server.Sessions.Max,
				// Authored workflows come and go while vmcp runs.
				ListChanged: st.cfg.Authoring.Enabled,
			})
			if err != nil {
				return failuref("%v", err)
			}
			if err := st.ops.addRunTools(srv, st.exec); err != nil {
				return failuref("%v", err)
			}
			if st.cfg.Authoring.Enabled {
				if err := st.serveAuthoring(cmd.Context(), srv, log); err != nil { // authoring.go
					return failuref("%v", err)
				}
			}
			// With executor: temporal, runs outlive this process: from the
			// first signal on, a run whose caller is cancelled by the
			// shutdown is left going on Temporal (the next vmcp run
			// records its result), not cancelled.
			if tr, ok := st.exec.(*temporalrun.Runner); ok {
				go func() { <-cmd.Context().Done(); tr.Detach() }()
				// Runs an earlier vmcp run left going are recorded as
				// they end (runtime/temporalrun/reattach.go).
				go func() {
					n, err := tr.Reattach(cmd.Context())
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
			}
			switch transport {
			case "stdio":
				if adminListen != "" {
					if err := st.ops.checkListen(adminListen, insecure); err != nil {
						return usageErrorf("%v", err)
					}
					go func() {
						if err := st.ops.serveAdmin(ctx, adminListen, st.exec, st.backend.Ready); err != nil {
							log.Error("admin API stopped", "err", err)
						}
					}()
				}
				go shutdown(cmd.Context(), ctx, runs, grace, log, nil, stopServing)
				log.Info("serving MCP on stdio", "tools", len(srv.ToolNames()))
				if err := srv.ServeStdio(ctx, io.in, io.out); err != nil {
					return failuref("stdio: %v", err)
				}
			case "http":
				if err := st.ops.checkListen(listen, insecure); err != nil {
					return usageErrorf("%v", err)
				}
				routes, err := st.ops.routes(st.exec, st.backend.Ready)
				if err != nil {
					return failuref("%v", err)
				}
				ln, err := st.ops.listen(listen)
				if err != nil {
					return failuref("listen on %s: %v", listen, err)
				}
				mcpHandler := srv.MCPHandler()
				var answering inFlight
				go shutdown(cmd.Context(), ctx, runs, grace, log, answering.wait, stopServing)
				log.Info("serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String()+server.MCPPath, "tools", len(srv.ToolNames()))
				handler := answering.wrap(server.HTTPHandler(mcpHandler, st.ops.protect, routes...))
				if err := server.ServeHTTP(ctx, ln, handler, st.ops.limits(), mcpHandler, 10*time.Second); err != nil {
					return failuref("http: %v", err)
				}
			default:
				return usageErrorf("--transport must be stdio or http, not %q", transport)
			}
			log.Info("server stopped")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "the config file (default ./vmcp.yaml)")
	f.StringVar(&transport, "transport", "stdio", "stdio or http")
	f.StringVar(&listen, "listen", config.DefaultListen, "address of the HTTP server")
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.StringVar(&adminListen, "admin-listen", "", "with --transport stdio, also serve the run API, health and metrics on this address")
	f.BoolVar(&insecure, "insecure", false, "allow listening beyond loopback without server.auth.tokens")
	f.DurationVar(&grace, "shutdown-grace", defaultShutdownGrace, "after the first Ctrl-C or SIGTERM, how long runs in flight may go on before they are cancelled")
	return cmd
}
