package config

import (
	"time"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
)

// Transports of a backend.
const (
	TransportStdio          = "stdio"
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
)

// Defaults applied by Load.
const (
	DefaultCallTimeout  = 60 * time.Second
	DefaultStartTimeout = 60 * time.Second
	DefaultListen       = "127.0.0.1:8080"
	DefaultMaxParallel  = 10
	DefaultStore        = "memory"
	// DefaultMaxResultBytes is limits.maxResultBytes: the largest answer
	// vmcp reads from a backend (10 MiB).
	DefaultMaxResultBytes = 10 << 20
	// DefaultMaxOutputBytes is state.maxOutputBytes: outputs whose JSON is
	// larger are stored as a truncation marker (1 MiB).
	DefaultMaxOutputBytes = 1 << 20
)

// Config is a loaded vmcp.yaml.
type Config struct {
	// Path is the config file as given to Load; Dir is its directory, the
	// base for relative workflow paths.
	Path, Dir string
	// Backends by name; the name is the prefix in tool references
	// (github.create_issue). Each Backend's Name equals its key.
	Backends map[string]*Backend
	// Workflows are the workflow files named by the `workflows:` entries
	// (files, directories or globs), resolved against Dir, sorted and
	// deduplicated. Directories contribute their *.yaml, *.yml and *.json
	// files (not recursively).
	Workflows []string
	Server    Server
	State     State
	Limits    Limits
	Authoring Authoring
	// Executor says where runs execute (executor.go).
	Executor Executor
	// Schedules are the runs vmcp starts on its own (schedules.go), in
	// file order.
	Schedules []*Schedule
	// Telemetry turns on tracing (telemetry.go).
	Telemetry Telemetry
	// HasCompositeTools reports whether the config file itself has a
	// compositeTools (or composite_tools) list, making it a workflow source.
	HasCompositeTools bool
}

// Backend is one backend MCP server. Exactly one of Command (stdio) and URL
// (streamable-http or sse) is set.
type Backend struct {
	Name string
	// Command and Args start a stdio backend; Env is added to vmcp's own
	// environment for that process. A relative command with a slash
	// (./bin/server) is resolved against the config's directory; a bare
	// name is looked up on PATH when the backend starts.
	Command string
	Args    []string
	Env     map[string]string
	// URL of an HTTP backend, with Headers sent on every request.
	URL     string
	Headers map[string]string
	// Auth is how vmcp authenticates to an HTTP backend (backends.<name>.auth:
	// config/backendauth.go); nil for none. The caller's own token is
	// never sent to a backend.
	Auth *BackendAuth
	// Transport is stdio, streamable-http or sse. When the file omits it,
	// it is stdio for a command and streamable-http for a URL.
	Transport string
	// Timeout bounds every tool call on this backend (default 60s); a
	// shorter deadline on the caller's context wins.
	Timeout time.Duration
	// StartTimeout bounds connecting: starting the process or dialing,
	// initialize and tools/list (default 60s). It is separate from Timeout
	// because a server that answers calls in milliseconds may still take
	// seconds to start.
	StartTimeout time.Duration
	// ContinuousListening opens the streamable HTTP GET stream so the
	// backend can send requests not tied to a call. It also forces the
	// older handshake in mcp-go, so it is off unless asked for.
	ContinuousListening bool
	// MaxParallel bounds this backend's tool calls in flight at once,
	// across all runs, within server.maxParallel, so that one backend that
	// stops answering cannot take every slot. When the file gives none it
	// is server.maxParallel: the limit the file sets is the one calls
	// reach, and a backend is held to less only when the file says so.
	MaxParallel int
	// RateLimit, when set, bounds how often this backend is called, across
	// all runs of the process (backends.<name>.rateLimit).
	RateLimit *RateLimit
}

// RateLimit is a token bucket (backends.<name>.rateLimit): calls start at
// PerSecond a second on average, with at most Burst at once after a
// quiet spell. Each process has its own bucket.
type RateLimit struct {
	// PerSecond is the bucket's refill rate, > 0 (0.5 is one call every
	// two seconds).
	PerSecond float64
	// Burst is the bucket's size, >= 1; when the file omits it, it is
	// PerSecond rounded up (at least 1).
	Burst int
}

// Limits are server-wide caps (vmcp.yaml's limits:).
type Limits struct {
	// MaxResultBytes bounds one backend answer (default 10 MiB); a larger
	// one fails its step and is never read whole.
	MaxResultBytes int
	// MaxIterations caps every forEach's maxIterations (default
	// ir.DefaultIterationLimit, 1000).
	MaxIterations int
}

// Server configures vmcp as an MCP server.
type Server struct {
	Transport          string // stdio (default) or http
	Listen             string // default 127.0.0.1:8080
	ExposeBackendTools bool
	ExposeRunTools     bool
	MaxParallel        int // backend tool calls in flight at once, across all runs; default 10
	Auth               Auth
	// AllowedOrigins are browser origins (scheme://host[:port]) that may
	// call the HTTP server besides loopback ones; requests without an
	// Origin header (non-browser clients) always pass.
	AllowedOrigins []string
	// AllowedHosts are Host header values (host or host:port) that the HTTP
	// server answers on loopback connections besides localhost and loopback
	// IPs; every other Host there is refused as DNS rebinding.
	AllowedHosts []httpsafe.AllowedHost
	// MaxConnections caps the HTTP connections open at once; further ones
	// wait unserved until one closes. 0 means httpsafe.DefaultMaxConnections
	// (1024).
	MaxConnections int
	// IdleTimeout closes keep-alive connections idle this long, and
	// ReadHeaderTimeout connections whose request headers take longer. 0
	// means httpsafe's defaults (120s and 10s).
	IdleTimeout, ReadHeaderTimeout time.Duration
	// BodyTimeout bounds the time to read a whole request body; a slower
	// body gets 408 and its connection closed. 0 means
	// httpsafe.DefaultBodyTimeout (10s).
	BodyTimeout time.Duration
	// MaxConnectionsPerClient caps the connections open at once from one
	// client address (an IPv6 /64 counts as one); past it a connection gets
	// 429. 0 means httpsafe.DefaultPerClient(maxConnections).
	MaxConnectionsPerClient int
	Sessions                Sessions
	Console                 Console
	// Limits cap the runs in flight (server.limits).
	Limits RunLimits
}

// Console limits the web console (server.console). Zero fields take the
// console's defaults (console.Limits; maxEventStreams defaults to a
// quarter of maxConnections).
type Console struct {
	MaxEventStreams           int
	MaxEventStreamsPerSession int
	SessionTTL                time.Duration
	SigninFailures            int
	SigninLockout             time.Duration
}

// RunLimits cap the runs callers have in flight (server.limits: runs,
// perOwner: {runs}, onLimit). Zero fields take mcpserver's defaults
// (1000 runs, 500 per owner, refuse).
type RunLimits struct {
	Runs         int
	PerOwnerRuns int
	// OnLimit is what a run past a cap does: "refuse" (the default) or
	// "wait" for a slot.
	OnLimit string
}

// Sessions limits the MCP sessions of the HTTP server (server.sessions).
// Zero fields take the server's defaults (mcpserver: 30m idle, 1000
// sessions).
type Sessions struct {
	// IdleTimeout ends a session that has had no request open for this
	// long; its id then gets 404.
	IdleTimeout time.Duration
	// Max is how many sessions may be open at once; initialize beyond it is
	// refused.
	Max int
}

// Auth configures bearer-token authentication of the HTTP server. No tokens
// and no OIDC means no authentication; an empty or blank token is a load
// error. Each token carries the scopes it grants (every scope for a plain
// string). OIDC, when set, also accepts the access tokens of an
// authorization server (config/oidc.go).
type Auth struct {
	Tokens []httpsafe.Token
	OIDC   *OIDC
}

// Enabled reports whether the HTTP server authenticates requests.
func (a Auth) Enabled() bool { return len(a.Tokens) > 0 || a.OIDC != nil }

// Authoring configures the workflow authoring tools (authoring:).
type Authoring struct {
	// Enabled serves the vmcp_* authoring tools, resources and prompt.
	Enabled bool
	// Dir, when set, keeps authored workflows as YAML files there
	// (resolved against the config's directory); otherwise they live in
	// the SQLite store (state.store: sqlite) or, with the memory store, in
	// memory until vmcp stops.
	Dir string
	// Backends, when set, are the only backends authored workflows may
	// call; empty means every backend.
	Backends []string
	// MaxWorkflows, MaxVersions and MaxBytes are authoring.limits: the
	// authored workflows served at once, the versions kept of each, and
	// the bytes of every kept source together; 0 takes the default
	// (authoring.DefaultLimits).
	MaxWorkflows, MaxVersions int
	MaxBytes                  int64
}

// State configures the run store.
type State struct {
	Store string // memory (default), sqlite or postgres
	Path  string // sqlite file, resolved against the config's directory
	// URL is the postgres store's database (state.url, postgres://...),
	// which several vmcp processes may share.
	URL string
	// Lease is state.lease: how long a postgres replica's runs wait after
	// it stops before another replica takes them over; 0 is the store's
	// default (15s).
	Lease time.Duration
	// Retention is state.retention.finished (or the older state.retention:
	// DURATION): finished runs that ended longer ago are pruned; 0 keeps
	// them.
	Retention time.Duration
	// MaxRuns is state.retention.maxRuns: at most this many runs are kept,
	// the oldest finished ones pruned first; 0 is the store's default (1000
	// in memory, no cap in SQLite).
	MaxRuns int
	// MaxOutputBytes caps the JSON of each stored output (default
	// DefaultMaxOutputBytes; 0 means no cap).
	MaxOutputBytes int
}

// Sources returns the workflow source files: the config file itself when
// it has compositeTools, then the resolved workflow files.
func (c *Config) Sources() []string {
	var out []string
	if c.HasCompositeTools {
		out = append(out, c.Path)
	}
	for _, w := range c.Workflows {
		if c.HasCompositeTools && w == c.Path {
			continue
		}
		out = append(out, w)
	}
	return out
}
