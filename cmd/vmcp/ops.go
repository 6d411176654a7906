package main

// Operations wiring for `vmcp run` and `vmcp call`: the run store chosen by
// state.store, Prometheus metrics fed by engine events and a timing
// decorator on the backends, structured run logs, the HTTP API
// (/api/v1/runs, /healthz, /readyz, /metrics) mounted next to /mcp, bearer
// auth, Host and Origin checks and connection limits on the whole listener,
// the loopback-only rule for unauthenticated listeners, the stdio
// --admin-listen server, and the optional vmcp_run_status and
// vmcp_run_cancel tools. Everything the other files need is one call each:
// openOps in openStack, and the ops methods in run.go.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/vmcp-dev/vmcp/auth/oidc"
	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/console"
	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/mcpserver"
	"github.com/vmcp-dev/vmcp/mcpserver/runtools"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/postgres"
	"github.com/vmcp-dev/vmcp/store/sqlite"
	"github.com/vmcp-dev/vmcp/telemetry/metrics"
	"github.com/vmcp-dev/vmcp/telemetry/observe"
	"github.com/vmcp-dev/vmcp/telemetry/trace"
)

// ops holds the store, metrics and logger shared by the engine, the MCP
// server and the HTTP API.
type ops struct {
	cfg     *config.Config
	log     *slog.Logger
	store   runtime.Store
	close   func() error
	metrics *metrics.Metrics
	// tracing exports the runs' spans when telemetry: or OTEL_* ask for
	// it; nil otherwise (and then nothing is traced).
	tracing *trace.Provider
	// unfinished is the SQLite store, whose runs left running by the
	// previous process (unfinishedIDs, oldest first) vmcp run resumes
	// (resume.go); nil for the memory store.
	unfinished    unfinishedStore
	unfinishedIDs []string
	// claimer is the postgres store, which a vmcp run asks on a schedule
	// for the runs of replicas that stopped (resume.go); nil otherwise.
	claimer claimer
	// sources are the workflow files, for the console's workflow pages.
	sources map[string][]byte
	// ui is the web console (console.go); nil until openConsole.
	ui *console.Console
	// rerun starts re-runs (rerun.go); nil until vmcp run sets it.
	rerun runtime.Rerunner
	// questions are the elicitations the runs of runner wait on, which
	// the console answers too.
	questions *runtime.Questions
	// oidc checks OAuth access tokens (oidc.go); nil without
	// server.auth.oidc, and until openOIDC.
	oidc *oidc.Verifier
	// draining reports that vmcp run is shutting down (shutdown.go), for
	// /readyz; nil until vmcp run sets it.
	draining func() bool
}

// taskBoard is the postgres store, where replicas share their tasks'
// questions; nil for the other stores (one process).
func (o *ops) taskBoard() mcpserver.TaskBoard {
	if db, ok := o.store.(*postgres.Store); ok {
		return db
	}
	return nil
}

// isDraining reports whether vmcp run is shutting down.
func (o *ops) isDraining() bool { return o.draining != nil && o.draining() }

// openOps opens the run store the config asks for.
func openOps(cfg *config.Config, log *slog.Logger) (*ops, error) {
	o := &ops{cfg: cfg, log: log, metrics: metrics.New(), close: func() error { return nil }, questions: runtime.NewQuestions()}
	switch cfg.State.Store {
	case "", "memory":
		// state.retention prunes the memory store too: maxRuns on every
		// write, finished in the background until the store closes.
		m := runtime.NewMemoryStore(cfg.State.MaxRuns)
		stop := m.Retain(runtime.Retention{Finished: cfg.State.Retention}, time.Now)
		o.store, o.close = m, func() error { stop(); return nil }
	case "sqlite":
		// Runs the previous process left running stay so: vmcp run resumes
		// them, vmcp call leaves them for the next vmcp run.
		s, err := sqlite.Open(cfg.State.Path, sqlite.Options{
			Retention: cfg.State.Retention, MaxRuns: cfg.State.MaxRuns, MaxOutputBytes: cfg.State.MaxOutputBytes, Logger: log,
			KeepUnfinished: true,
		})
		if err != nil {
			if errors.Is(err, sqlite.ErrLocked) {
				return nil, fmt.Errorf("%w; stop the other vmcp or give this one another state.path", err)
			}
			return nil, err
		}
		if n := len(s.Unfinished); n > 0 {
			log.Info("runs left unfinished by the previous stop; vmcp run resumes them", "count", n, "state", cfg.State.Path)
		}
		o.store, o.close = s, s.Close
		o.unfinished, o.unfinishedIDs = s, s.Unfinished
	case "postgres":
		// The database is shared with the other replicas: Open takes over
		// nothing; vmcp run claims the runs of stopped replicas as their
		// leases expire (resume.go), vmcp call never does.
		s, err := postgres.Open(context.Background(), cfg.State.URL, postgres.Options{
			Retention: cfg.State.Retention, MaxRuns: cfg.State.MaxRuns, MaxOutputBytes: cfg.State.MaxOutputBytes, Logger: log,
			LeaseTTL: cfg.State.Lease,
		})
		if err != nil {
			return nil, err
		}
		log.Info("run store: postgres", "replica", s.Replica)
		o.store, o.close = s, s.Close
		o.unfinished, o.claimer = s, s
	default:
		return nil, fmt.Errorf("state.store must be memory, sqlite or postgres, not %q", cfg.State.Store)
	}
	if err := o.openTracing(); err != nil {
		o.close()
		return nil, err
	}
	return o, nil
}

// openTracing starts the trace exporter when the telemetry: section or
// the OTEL_* variables ask for it; its Close exports what is left.
func (o *ops) openTracing() error {
	p, err := startTracing(o.cfg, o.log, "")
	if err != nil || p == nil {
		return err
	}
	o.tracing = p
	closeStore := o.close
	o.close = func() error {
		stopTracing(p, o.log)
		return closeStore()
	}
	return nil
}

// startTracing starts the trace exporter of cfg (nil when tracing is
// off); instance names this process among the service's (a worker's
// identity), or is empty.
func startTracing(cfg *config.Config, log *slog.Logger, instance string) (*trace.Provider, error) {
	s, on, err := trace.Resolve(cfg.Telemetry, os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	if !on {
		return nil, nil
	}
	p, err := trace.New(context.Background(), s, trace.Options{Version: version, InstanceID: instance})
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	log.Info("tracing on", "protocol", s.Protocol, "endpoint", s.Endpoint, "service", s.ServiceName, "sampling", s.Sampling)
	return p, nil
}

// stopTracing exports the spans p still holds (at most 5s).
func stopTracing(p *trace.Provider, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		log.Warn("telemetry: exporting the last spans failed", "err", err)
	}
}

// traceURL links a run to its trace (telemetry.traceURL); nil when
// tracing is off or the section has no traceURL.
func (o *ops) traceURL() func(string) string {
	if o.tracing == nil || o.tracing.Settings().TraceURL == "" {
		return nil
	}
	return o.tracing.Settings().URL
}

// traceContext is the MCP server's TraceContext: nil when tracing is off.
func (o *ops) traceContext() func(context.Context, map[string]any, func(string) string) context.Context {
	if o.tracing == nil {
		return nil
	}
	return o.tracing.Extract
}

// engineOptions adds the store and the metered backend to the engine's
// options.
func (o *ops) engineOptions(opts runtime.Options) runtime.Options {
	opts.Store = o.store
	if o.tracing != nil {
		opts.Tracer = o.tracing
		if opts.Backend != nil {
			opts.Backend = o.tracing.Backend(opts.Backend)
		}
	}
	if opts.Backend != nil {
		opts.Backend = o.metrics.WrapBackend(opts.Backend)
	}
	return opts
}

// runner makes every run started by the MCP server feed the metrics and
// the run log.
func (o *ops) runner(eng mcpserver.Runner) mcpserver.Runner {
	return answerable{observe.WithEvents(eng, observe.Tee(o.metrics.Observe, observe.Logger(o.log), o.observeConsole)), o.questions}
}

// answerable makes every run's questions answerable from the console
// too (runtime.Questions): the client that was asked, if any, sees the
// run go on; a run with no client (a schedule's, a re-run) waits for the
// console.
type answerable struct {
	mcpserver.Runner
	q *runtime.Questions
}

func (a answerable) Run(ctx context.Context, workflow string, params map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
	opts.Elicitor = a.q.Wrap(opts.Elicitor)
	return a.Runner.Run(ctx, workflow, params, opts)
}

// addRunTools registers vmcp_run_status and vmcp_run_cancel when the config
// asks for them.
func (o *ops) addRunTools(srv *mcpserver.Server, eng httpapi.Engine) error {
	if !o.cfg.Server.ExposeRunTools {
		return nil
	}
	tools, err := runtools.Tools(runtools.Options{Engine: eng, Store: o.store})
	if err != nil {
		return err
	}
	// Both need run: a caller reads and cancels its own runs, admin every
	// run (package access).
	return srv.AddTools(tools...)
}

// api builds the operations API for the engine and backends.
func (o *ops) api(eng httpapi.Engine, ready func() map[string]error) (*httpapi.API, error) {
	return httpapi.New(httpapi.Options{Engine: eng, Store: o.store, Rerun: o, Ready: ready, Draining: o.isDraining, Metrics: o.metrics.Handler(), Logger: o.log})
}

// routes are the API's routes for mcpserver.HTTPHandler.
func (o *ops) routes(eng httpapi.Engine, ready func() map[string]error) ([]mcpserver.Route, error) {
	a, err := o.api(eng, ready)
	if err != nil {
		return nil, err
	}
	var rs []mcpserver.Route
	for _, p := range a.Patterns() {
		rs = append(rs, mcpserver.Route{Pattern: p, Handler: scoped(a)})
	}
	return append(rs, o.consoleRoutes()...), nil
}

// scoped applies token scopes to the API: reading and cancelling runs
// need run; which runs a caller reads and cancels is the API's (its own,
// or every run for admin: package access).
func scoped(h http.Handler) http.Handler {
	read := httpsafe.RequireScope(httpsafe.ScopeRun, "reading and cancelling runs", h)
	rerun := httpsafe.RequireScope(httpsafe.ScopeAdmin, "re-running a run", h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/rerun") {
			rerun.ServeHTTP(w, r)
			return
		}
		read.ServeHTTP(w, r)
	})
}

// protect wraps the whole HTTP listener (MCP and API) with the Host check
// (server.allowedHosts), the Origin check, bearer auth (server.auth.tokens
// and server.auth.oidc, whose metadata is public) and body limits.
func (o *ops) protect(h http.Handler) http.Handler {
	s := o.cfg.Server
	return httpsafe.Protect(httpsafe.Options{
		Tokens: s.Auth.Tokens, Bearer: o.bearer(), Public: o.public(), AllowedOrigins: s.AllowedOrigins, AllowedHosts: s.AllowedHosts, Limits: o.limits(),
		SelfAuthenticated: isConsole, // the web console's sign-in cookie
	}, h)
}

// limits are the HTTP server's connection limits from the server: section;
// zero fields take httpsafe's defaults.
func (o *ops) limits() httpsafe.Limits {
	s := o.cfg.Server
	return httpsafe.Limits{MaxConnections: s.MaxConnections, MaxConnectionsPerClient: s.MaxConnectionsPerClient,
		IdleTimeout: s.IdleTimeout, ReadHeaderTimeout: s.ReadHeaderTimeout, BodyTimeout: s.BodyTimeout}
}

// listen opens an HTTP listener on addr that holds at most
// server.maxConnections connections at once.
func (o *ops) listen(addr string) (net.Listener, error) {
	return httpsafe.Listen(addr, o.limits())
}

// checkListen applies the loopback-only rule to an HTTP listen address.
func (o *ops) checkListen(addr string, insecure bool) error {
	if err := httpsafe.CheckListen(addr, o.cfg.Server.Auth.Enabled(), insecure); err != nil {
		return err
	}
	if insecure && !o.cfg.Server.Auth.Enabled() {
		o.log.Warn("serving HTTP without authentication (--insecure)", "listen", addr)
	}
	return nil
}

// serveAdmin serves the API and the console on addr until ctx ends (stdio
// mode's --admin-listen).
func (o *ops) serveAdmin(ctx context.Context, addr string, eng httpapi.Engine, ready func() map[string]error) error {
	routes, err := o.routes(eng, ready)
	if err != nil {
		return err
	}
	a := http.NewServeMux()
	for _, r := range routes {
		a.Handle(r.Pattern, r.Handler)
	}
	ln, err := o.listen(addr)
	if err != nil {
		return err
	}
	srv := httpsafe.NewServer(o.protect(scoped(a)), o.limits())
	o.log.Info("serving the admin API", "url", "http://"+ln.Addr().String()+"/api/v1/runs")
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	<-errc
	return nil
}

// Close closes the store.
func (o *ops) Close() error { return o.close() }

// tracer is the engine's (and the Temporal runner's) Tracer: nil when
// tracing is off.
func (o *ops) tracer() runtime.Tracer {
	if o.tracing == nil {
		return nil
	}
	return o.tracing
}
