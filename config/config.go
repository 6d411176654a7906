package config

import "time"

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
}

// Auth configures bearer-token authentication of the HTTP server. No tokens
// means no authentication.
type Auth struct {
	Tokens []string
}

// Limits are the server-wide caps (design.md "Limits").
type Limits struct {
	// MaxIterations caps every forEach's maxIterations (default
	// ir.DefaultIterationLimit, 1000).
	MaxIterations int
}

// State configures the run store.
type State struct {
	Store          string // memory (default) or sqlite
	Path           string // sqlite file, resolved against the config's directory
	Retention      time.Duration
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
