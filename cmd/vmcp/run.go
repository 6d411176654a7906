package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/mcpserver"
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
			cfg, err := loadConfig(configPath, io.err)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("transport") && cfg.Server.Transport != "" {
				transport = cfg.Server.Transport
			}
			if !cmd.Flags().Changed("listen") && cfg.Server.Listen != "" {
				listen = cfg.Server.Listen
			}
			// cmd.Context() ends at the first signal; serving goes on until
			// the shutdown (shutdown.go) says it may stop.
			ctx, stopServing := context.WithCancel(context.WithoutCancel(cmd.Context()))
			defer stopServing()
			var st *stack
			defer func() {
				if st != nil {
					st.Close()
				}
			}()
			var runs *runTracker
			open := func() (*mcpserver.Server, error) {
				var srv *mcpserver.Server
				var err error
				st, err = openStackFor(cmd.Context(), cfg, log, io.err)
				if err == nil {
					srv, runs, err = st.serve(cmd.Context(), ctx, transport, adminListen, log)
				}
				return srv, err
			}
			if transport == "stdio" {
				// initialize and server/discover are answered while the
				// backends start and the workflows compile (ServeStdioEarly).
				// A signal before the server is built stops serving: the
				// shutdown (shutdown.go) starts only once it is.
				early := mcpserver.EarlyOptions{Name: "vmcp", Version: version, ListChanged: cfg.Authoring.Enabled, Tasks: true}
				built := false
				ready := make(chan struct{})
				go func() {
					select {
					case <-ready:
					case <-cmd.Context().Done():
						select {
						case <-ready:
						default:
							stopServing()
						}
					}
				}()
				err := mcpserver.ServeStdioEarly(ctx, io.in, io.out, early, func() (*mcpserver.Server, error) {
					srv, err := open()
					if err != nil {
						// vmcp answers the client with it until stdin ends.
						log.Error("vmcp could not start", "err", err)
						return nil, err
					}
					if adminListen != "" {
						if err := st.ops.checkListen(adminListen, insecure); err != nil {
							return nil, usageErrorf("%v", err)
						}
						go func() {
							if err := st.ops.serveAdmin(ctx, adminListen, st.exec, st.backend.Ready); err != nil {
								log.Error("admin API stopped", "err", err)
							}
						}()
					}
					go shutdown(cmd.Context(), ctx, runs, grace, log, nil, stopServing)
					log.Info("serving MCP on stdio", "tools", len(srv.ToolNames()))
					built = true
					close(ready)
					return srv, nil
				})
				if err != nil {
					if !built { // vmcp could not start: that error, as before
						return err
					}
					return failuref("stdio: %v", err)
				}
				log.Info("server stopped")
				return nil
			}
			srv, err := open()
			if err != nil {
				return err
			}
			switch transport {
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
				log.Info("serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String()+mcpserver.MCPPath, "tools", len(srv.ToolNames()))
				handler := answering.wrap(mcpserver.HTTPHandler(mcpHandler, st.ops.protect, routes...))
				if err := mcpserver.ServeHTTP(ctx, ln, handler, st.ops.limits(), mcpHandler, 10*time.Second); err != nil {
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
