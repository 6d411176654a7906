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
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/runtime/server"
)

// openConsole builds the console for eng; its event streams end when ctx
// does.
func (o *ops) openConsole(ctx context.Context, eng *runtime.Engine) error {
	ui, err := console.New(console.Options{
		Engine: eng, Store: o.store, Sources: o.sources, Tokens: o.cfg.Server.Auth.Tokens, Logger: o.log,
	})
	if err != nil {
		return err
	}
	o.ui = ui
	context.AfterFunc(ctx, ui.Close)
	return nil
}

// observeConsole passes an engine event to the console's live pages.
func (o *ops) observeConsole(ev runtime.Event) {
	if o.ui != nil {
		o.ui.Observe(ev)
	}
}

// consoleRoutes mounts the console, when there is one.
func (o *ops) consoleRoutes() []server.Route {
	if o.ui == nil {
		return nil
	}
	// The mux sends /ui to /ui/ itself.
	return []server.Route{{Pattern: console.Prefix, Handler: o.ui}}
}

// isConsole reports the requests the console authenticates itself.
func isConsole(r *http.Request) bool {
	return r.URL.Path == "/ui" || strings.HasPrefix(r.URL.Path, console.Prefix)
}
