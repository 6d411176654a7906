package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/vmcp-dev/vmcp/auth/access"
	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Prefix is the path the console is served under.
const Prefix = "/ui/"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Engine is what the console needs from the engine (*runtime.Engine).
type Engine interface {
	Status(ctx context.Context, id string) (*runtime.Run, error)
	Cancel(ctx context.Context, id string) error
	Workflows() []*ir.Workflow
	Workflow(name string) (*ir.Workflow, bool)
}

// Options configure the console.
type Options struct {
	// Engine answers status, cancel and the workflows; required.
	Engine Engine
	// Store lists runs; required.
	Store httpapi.Lister
	// Rerun starts re-runs from a run's page (its button needs the admin
	// scope); nil leaves the button out.
	Rerun runtime.Rerunner
	// Questions are the elicitations runs wait on: a run's page shows
	// each as a form its owner (or an admin) answers (answer.go); nil
	// shows none.
	Questions Questions
	// Sources are the workflow files' contents by the file name that
	// ir.Pos.File carries, for the workflow page's source; a workflow
	// whose file is not here is shown without its source.
	Sources map[string][]byte
	// Tokens are the accepted tokens with their scopes
	// (server.auth.tokens); none means the console needs no sign-in, as
	// the rest of the listener. Reading runs needs the run scope,
	// cancelling one admin, as in the API.
	Tokens []httpsafe.Token
	// Bearer, when set, also accepts the access tokens of an
	// authorization server (server.auth.oidc) at sign-in; a session
	// signed in with one ends when the token expires.
	Bearer httpsafe.Bearer
	// Catalog tells how each workflow is served (its version, and whether
	// it came from files or was authored) and keeps the versions of
	// authored ones; nil when authoring is off, and every workflow then
	// comes from files (see catalog.go).
	Catalog Catalog
	// Limits cap event streams, sessions and failed sign-ins; zero fields
	// take the defaults (see Limits).
	Limits Limits
	// TraceURL, when set, is the link to a run's trace (telemetry.traceURL
	// with the run's trace id in it); a run's page shows it.
	TraceURL func(traceID string) string
	// CancelWait is how long a cancel from the page waits for the run to
	// stop before the page is shown again (default 2s).
	CancelWait time.Duration
	Logger     *slog.Logger
	// Now is the clock (time.Now when nil), for tests.
	Now func() time.Time
}

// Defaults for Limits.
const (
	DefaultMaxEventStreams           = 256
	DefaultMaxEventStreamsPerSession = 6
	DefaultSessionTTL                = 12 * time.Hour
	DefaultSigninFailures            = 10
	DefaultSigninLockout             = 5 * time.Minute
)

// Limits bound what browsers may hold and try (server.console).
type Limits struct {
	// MaxEventStreams caps the live-update streams open at once, in all;
	// keep it well under server.maxConnections (vmcp run's default is a
	// quarter of it), so that the rest serves health checks and MCP calls.
	MaxEventStreams int
	// MaxEventStreamsPerSession caps one session's streams (a page open
	// in a tab holds one).
	MaxEventStreamsPerSession int
	// SessionTTL is how long a sign-in lasts.
	SessionTTL time.Duration
	// SigninFailures is how many failed sign-ins a client address may make
	// within SigninLockout; past it, sign-in from there gets 429 until the
	// SigninLockout that began at its first failure is over.
	SigninFailures int
	SigninLockout  time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxEventStreams <= 0 {
		l.MaxEventStreams = DefaultMaxEventStreams
	}
	if l.MaxEventStreamsPerSession <= 0 {
		l.MaxEventStreamsPerSession = DefaultMaxEventStreamsPerSession
	}
	if l.SessionTTL <= 0 {
		l.SessionTTL = DefaultSessionTTL
	}
	if l.SigninFailures <= 0 {
		l.SigninFailures = DefaultSigninFailures
	}
	if l.SigninLockout <= 0 {
		l.SigninLockout = DefaultSigninLockout
	}
	return l
}

// Console is the web console handler. It is safe for concurrent use.
type Console struct {
	opts Options
	// runs reads and cancels runs for the request's caller (package
	// access), as opts.Store (wrapped in New) lists them.
	runs   access.Runner
	log    *slog.Logger
	mux    *http.ServeMux
	pages  map[string]*template.Template
	auth   *authenticator
	events *hub
	rows   rowCache
	assets http.Handler
}

// New builds the console.
func New(opts Options) (*Console, error) {
	if opts.Engine == nil || opts.Store == nil {
		return nil, errors.New("console: an engine and a store are required")
	}
	if opts.CancelWait <= 0 {
		opts.CancelWait = 2 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Limits = opts.Limits.withDefaults()
	opts.Store = access.Store(opts.Store)
	c := &Console{opts: opts, runs: access.Engine(opts.Engine), log: opts.Logger, mux: http.NewServeMux(), events: newHub(opts.Limits), rows: rowCache{rows: map[rowKey]template.HTML{}}}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	var err error
	if c.pages, err = parseTemplates(); err != nil {
		return nil, err
	}
	if c.auth, err = newAuthenticator(opts.Tokens, opts.Bearer, opts.Limits); err != nil {
		return nil, err
	}
	c.auth.now = opts.Now
	sub, err := fs.Sub(assetFS, "assets")
	if err != nil {
		return nil, err
	}
	c.assets = http.StripPrefix("/ui/assets/", http.FileServerFS(sub))
	c.routes()
	return c, nil
}

func (c *Console) routes() {
	m := c.mux
	m.HandleFunc("GET /ui/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ui/runs", http.StatusSeeOther)
	})
	m.Handle("GET /ui/assets/", c.assetHandler())
	m.HandleFunc("GET /ui/signin", c.signinPage)
	m.HandleFunc("POST /ui/signin", c.signin)
	m.HandleFunc("POST /ui/signout", c.signedIn(c.signout))
	m.HandleFunc("GET /ui/runs", c.signedIn(c.runsPage))
	m.HandleFunc("GET /ui/runs/{id}", c.signedIn(c.runPage))
	m.HandleFunc("GET /ui/runs/{id}/row", c.signedIn(c.runRow))
	m.HandleFunc("GET /ui/runs/{id}/live", c.signedIn(c.runLive))
	m.HandleFunc("GET /ui/runs/{id}/output/{path...}", c.signedIn(c.stepOutput))
	m.HandleFunc("POST /ui/runs/{id}/cancel", c.signedIn(c.cancel))
	m.HandleFunc("POST /ui/runs/{id}/rerun", c.signedIn(c.rerun))
	m.HandleFunc("POST /ui/runs/{id}/answer", c.signedIn(c.answer))
	m.HandleFunc("GET /ui/events", c.signedIn(c.serveEvents))
	m.HandleFunc("GET /ui/workflows", c.signedIn(c.workflowsPage))
	m.HandleFunc("GET /ui/workflows/{name}", c.signedIn(c.workflowPage))
	m.HandleFunc("GET /ui/workflows/{name}/plan.svg", c.signedIn(c.planSVG))
	m.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		c.errorPage(w, r, http.StatusNotFound, "There is no console page at "+r.URL.Path+".")
	})
}

// ServeHTTP serves the console's routes under /ui/, every response with
// the console's security headers.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Scripts only from /ui/assets/ (no inline script, no eval); inline
	// styles are allowed for the plan graph's <style> and the timeline's
	// bar positions, which carry no data from outputs.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	c.mux.ServeHTTP(w, r)
}

// Observe takes one engine event (tee it into the runner, as
// observe.WithEvents does) and passes it to the live pages. It never
// blocks.
func (c *Console) Observe(ev runtime.Event) { c.events.publish(ev) }

// Close ends every event stream, so that a server shutdown need not wait
// for open browser tabs. The console keeps serving pages.
func (c *Console) Close() { c.events.close() }

func (c *Console) assetHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		c.assets.ServeHTTP(w, r)
	})
}

// page is what every full page template gets.
type page struct {
	Title    string
	Nav      string // "runs" or "workflows", the highlighted tab
	SignedIn bool   // show the sign-out button
	CSRF     string
	Data     any
}

// render executes the named page template; a failure after the header
// went out can only be logged.
func (c *Console) render(w http.ResponseWriter, code int, name string, data any) {
	t, ok := c.pages[name]
	if !ok {
		panic("console: no template " + name) // a bug in this package
	}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, name, data); err != nil {
		c.log.Error("console: rendering "+name, "err", err)
		http.Error(w, "the console could not render this page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	io.WriteString(w, b.String())
}

// full renders a whole page for r.
func (c *Console) full(w http.ResponseWriter, r *http.Request, code int, name, title, nav string, data any) {
	c.render(w, code, name, page{
		Title: title, Nav: nav, SignedIn: c.auth.enabled() && c.auth.signedIn(r), CSRF: c.auth.csrfToken(w, r), Data: data,
	})
}

func (c *Console) errorPage(w http.ResponseWriter, r *http.Request, code int, msg string) {
	c.full(w, r, code, "error.html", http.StatusText(code), "", msg)
}

func (c *Console) internal(w http.ResponseWriter, r *http.Request, what string, err error) {
	c.log.Error("console: "+what, "err", err)
	c.errorPage(w, r, http.StatusInternalServerError, fmt.Sprintf("%s: %v", what, err))
}

// getRun reads a run from the engine (the live record) or the store.
func (c *Console) getRun(ctx context.Context, id string) (*runtime.Run, error) {
	run, err := c.runs.Status(ctx, id)
	if err == nil || !errors.Is(err, runtime.ErrRunNotFound) {
		return run, err
	}
	return c.opts.Store.GetRun(ctx, id)
}

// pageFiles are the page templates; each is parsed with the layout and
// the partials (rows, the run's live part), which also serve the
// fragments of live updates.
var pageFiles = []string{"runs.html", "run.html", "workflows.html", "workflow.html", "signin.html", "error.html"}

var templateFuncs = template.FuncMap{
	// pct writes a percentage for a CSS length.
	"pct":     func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) + "%" },
	"sub":     func(a, b int) int { return a - b },
	"shortid": shortID,
	// qdata gives the question template its question with the run's id
	// and the CSRF token.
	"qdata": func(v runView, q questionView) map[string]any {
		return map[string]any{"Q": q, "RunID": v.Row.ID, "CSRF": v.CSRF}
	},
}

func parseTemplates() (map[string]*template.Template, error) {
	pages := map[string]*template.Template{}
	for _, f := range pageFiles {
		t, err := template.New(f).Funcs(templateFuncs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html", "templates/"+f)
		if err != nil {
			return nil, fmt.Errorf("console: %w", err)
		}
		pages[f] = t
	}
	pages["runrow"] = pages["runs.html"]
	pages["runlive"] = pages["run.html"]
	return pages, nil
}
