package main

// The web console (package console) on the HTTP listener and on
// --admin-listen: built once per `vmcp run`, fed the engine's events
// through the runner, mounted at /ui/ next to the API, authenticated by its
// own sign-in cookie (so the listener's bearer check lets /ui/ through),
// and closed when serving ends so that open browser tabs do not hold up the
// shutdown.

import (
	"context"
	"net/http"
	"strings"

	"github.com/vmcp-dev/vmcp/console"
	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/mcpserver"
	"github.com/vmcp-dev/vmcp/runtime"
)

// openConsole builds the console for eng, the executor (catalog may be
// nil); its event streams end when ctx does.
func (o *ops) openConsole(ctx context.Context, eng console.Engine, catalog console.Catalog) error {
	ui, err := console.New(console.Options{
		Engine: eng, Store: o.store, Rerun: o, Questions: o.questions, Sources: o.sources, Tokens: o.cfg.Server.Auth.Tokens, Bearer: o.bearer(), Catalog: catalog, Logger: o.log,
		Limits: o.consoleLimits(), TraceURL: o.traceURL(),
	})
	if err != nil {
		return err
	}
	o.ui = ui
	context.AfterFunc(ctx, ui.Close)
	return nil
}

// consoleLimits are server.console's limits; maxEventStreams defaults to a
// quarter of server.maxConnections, so that the rest of the connections
// serve health checks and MCP calls whatever the browsers hold.
func (o *ops) consoleLimits() console.Limits {
	s := o.cfg.Server
	l := console.Limits{
		MaxEventStreams: s.Console.MaxEventStreams, MaxEventStreamsPerSession: s.Console.MaxEventStreamsPerSession,
		SessionTTL: s.Console.SessionTTL, SigninFailures: s.Console.SigninFailures, SigninLockout: s.Console.SigninLockout,
	}
	if l.MaxEventStreams == 0 {
		maxConn := s.MaxConnections
		if maxConn <= 0 {
			maxConn = httpsafe.DefaultMaxConnections
		}
		l.MaxEventStreams = max(1, maxConn/4)
	}
	return l
}

// observeConsole passes an engine event to the console's live pages.
func (o *ops) observeConsole(ev runtime.Event) {
	if o.ui != nil {
		o.ui.Observe(ev)
	}
}

// consoleRoutes mounts the console, when there is one.
func (o *ops) consoleRoutes() []mcpserver.Route {
	if o.ui == nil {
		return nil
	}
	// The mux sends /ui to /ui/ itself.
	return []mcpserver.Route{{Pattern: console.Prefix, Handler: o.ui}}
}

// consoleCatalog shows the console the versions of the authoring service
// (authoring.enabled), nil without it.
func (s *stack) consoleCatalog() console.Catalog {
	if !s.cfg.Authoring.Enabled {
		return nil
	}
	return authoringCatalog{s}
}

// authoringCatalog adapts the stack's authoring service, which
// serveAuthoring sets before anything is served.
type authoringCatalog struct{ st *stack }

func (a authoringCatalog) List() []console.WorkflowInfo {
	if a.st.authoring == nil {
		return nil
	}
	var out []console.WorkflowInfo
	for _, e := range a.st.authoring.List() {
		w := console.WorkflowInfo{Name: e.Name, Version: e.Version, Origin: console.OriginFiles}
		if e.Origin == "authored" {
			w.Origin = console.OriginAuthored
		}
		if e.SavedAt != nil {
			w.SavedAt = *e.SavedAt
		}
		out = append(out, w)
	}
	return out
}

func (a authoringCatalog) Versions(ctx context.Context, name string) ([]console.VersionInfo, error) {
	if a.st.authoring == nil {
		return nil, nil
	}
	vs, err := a.st.authoring.Store().Versions(ctx, name)
	if err != nil {
		return nil, err
	}
	out := make([]console.VersionInfo, len(vs))
	for i, v := range vs {
		out[i] = console.VersionInfo{Version: v.Version, SavedAt: v.CreatedAt, Deleted: v.Deleted, Source: v.Source}
	}
	return out, nil
}

// isConsole reports the requests the console authenticates itself.
func isConsole(r *http.Request) bool {
	return r.URL.Path == "/ui" || strings.HasPrefix(r.URL.Path, console.Prefix)
}
