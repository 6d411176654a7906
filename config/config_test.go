package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// writeTree creates files (path -> content) under a new temp dir.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadDesignExample(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"vmcp.yaml": `
backends:                      # the name is the prefix in tool references: github.create_issue
  github:  {command: github-mcp-server, args: [stdio], env: {GITHUB_TOKEN: "${GITHUB_TOKEN}"}}
  metrics: {url: "http://127.0.0.1:9000/mcp", transport: streamable-http, headers: {Authorization: "Bearer ${METRICS_TOKEN}"}}
  legacy:  {url: "http://127.0.0.1:9001/sse", transport: sse, timeout: 5s}
workflows: [workflows/*.yaml, build/plan.json, workflows]
compositeTools: [{name: x}]
server:
  transport: stdio
  listen: 127.0.0.1:8080
  exposeBackendTools: false
  maxParallel: 4
state:
  store: sqlite
  path: vmcp-state.db
limits: {maxResultBytes: 10485760}
`,
		"workflows/b.yaml":   "x",
		"workflows/a.yaml":   "x",
		"workflows/c.yml":    "x",
		"workflows/skip.txt": "x",
		"build/plan.json":    "{}",
	})
	path := filepath.Join(dir, "vmcp.yaml")
	cfg, err := Load(path, envOf(map[string]string{"GITHUB_TOKEN": "gh-secret", "METRICS_TOKEN": "m-secret"}))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := &Config{
		Path: path,
		Dir:  dir,
		Backends: map[string]*Backend{
			"github":  {Name: "github", Command: "github-mcp-server", Args: []string{"stdio"}, Env: map[string]string{"GITHUB_TOKEN": "gh-secret"}, Transport: "stdio", Timeout: 60 * time.Second, StartTimeout: 60 * time.Second, MaxParallel: 4},
			"metrics": {Name: "metrics", URL: "http://127.0.0.1:9000/mcp", Transport: "streamable-http", Headers: map[string]string{"Authorization": "Bearer m-secret"}, Timeout: 60 * time.Second, StartTimeout: 60 * time.Second, MaxParallel: 4},
			"legacy":  {Name: "legacy", URL: "http://127.0.0.1:9001/sse", Transport: "sse", Timeout: 5 * time.Second, StartTimeout: 60 * time.Second, MaxParallel: 4},
		},
		Workflows: []string{
			filepath.Join(dir, "build/plan.json"),
			filepath.Join(dir, "workflows/a.yaml"),
			filepath.Join(dir, "workflows/b.yaml"),
			filepath.Join(dir, "workflows/c.yml"),
		},
		Server:            Server{Transport: "stdio", Listen: "127.0.0.1:8080", MaxParallel: 4},
		State:             State{Store: "sqlite", Path: filepath.Join(dir, "vmcp-state.db"), MaxOutputBytes: DefaultMaxOutputBytes},
		Limits:            Limits{MaxResultBytes: 10485760, MaxIterations: 1000},
		Executor:          Executor{Kind: "local", Address: "127.0.0.1:7233", Namespace: "default", TaskQueue: "vmcp", HeartbeatTimeout: 10 * time.Second, LocalActivities: true},
		HasCompositeTools: true,
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("Load(design example) mismatch (-want +got):\n%s", diff)
	}
	wantSources := append([]string{path}, want.Workflows...)
	if diff := cmp.Diff(wantSources, cfg.Sources()); diff != "" {
		t.Errorf("Sources() mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadValues(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		env   map[string]string
		check func(t *testing.T, c *Config)
	}{
		{
			name: "defaults",
			src:  "backends: {a: {command: srv}}\n",
			check: func(t *testing.T, c *Config) {
				want := Config{Server: Server{Transport: "stdio", Listen: DefaultListen, MaxParallel: 10}, State: State{Store: "memory", MaxOutputBytes: 1 << 20}}
				if diff := cmp.Diff(want.Server, c.Server); diff != "" {
					t.Errorf("default Server (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(want.State, c.State); diff != "" {
					t.Errorf("default State (-want +got):\n%s", diff)
				}
				if c.HasCompositeTools || len(c.Sources()) != 0 {
					t.Errorf("Sources() = %v; want none", c.Sources())
				}
				if got := c.Backends["a"].Timeout; got != 60*time.Second {
					t.Errorf("default Timeout = %v; want 60s", got)
				}
				if got := c.Backends["a"].MaxParallel; got != 10 {
					t.Errorf("default maxParallel of the only backend = %d; want all of server.maxParallel (10)", got)
				}
				if got := c.Limits.MaxResultBytes; got != 10<<20 {
					t.Errorf("default limits.maxResultBytes = %d; want 10 MiB", got)
				}
			},
		},
		{
			name: "server connection caps and console limits",
			src:  "server:\n  maxConnections: 64\n  maxConnectionsPerClient: 8\n  bodyTimeout: 3s\n  console: {maxEventStreams: 16, maxEventStreamsPerSession: 2, sessionTTL: 1h, signinFailures: 5, signinLockout: 10m}\n",
			check: func(t *testing.T, c *Config) {
				want := Console{MaxEventStreams: 16, MaxEventStreamsPerSession: 2, SessionTTL: time.Hour, SigninFailures: 5, SigninLockout: 10 * time.Minute}
				if diff := cmp.Diff(want, c.Server.Console); diff != "" {
					t.Errorf("server.console (-want +got):\n%s", diff)
				}
				if c.Server.MaxConnectionsPerClient != 8 || c.Server.BodyTimeout != 3*time.Second {
					t.Errorf("server.maxConnectionsPerClient, bodyTimeout = %d, %v; want 8, 3s", c.Server.MaxConnectionsPerClient, c.Server.BodyTimeout)
				}
			},
		},
		{
			name: "server sessions, camelCase and snake_case",
			src:  "server:\n  sessions: {idle_timeout: 90s, max: 20}\n",
			check: func(t *testing.T, c *Config) {
				if diff := cmp.Diff(Sessions{IdleTimeout: 90 * time.Second, Max: 20}, c.Server.Sessions); diff != "" {
					t.Errorf("server.sessions (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "postgres state",
			src:  "state: {store: postgres, url: \"${DB}\", lease: 3s}\n",
			env:  map[string]string{"DB": "postgres://vmcp:pw@db.internal:5432/vmcp?sslmode=require"},
			check: func(t *testing.T, c *Config) {
				want := State{Store: "postgres", URL: "postgres://vmcp:pw@db.internal:5432/vmcp?sslmode=require", Lease: 3 * time.Second, MaxOutputBytes: DefaultMaxOutputBytes}
				if diff := cmp.Diff(want, c.State); diff != "" {
					t.Errorf("state (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "snake_case keys and url default transport",
			src: `backends:
  web: {url: "https://x.example/mcp", continuous_listening: true, timeout: 2m, start_timeout: 90s}
server: {expose_backend_tools: true, expose_run_tools: true, max_parallel: 3, auth: {tokens: ["${TOK}"]},
  allowed_origins: ["https://App.example.com/", "http://127.0.0.1:6274"]}
state: {store: memory, max_output_bytes: 1000, retention: 24h}
composite_tools:
  - name: x
`,
			env: map[string]string{"TOK": "t1"},
			check: func(t *testing.T, c *Config) {
				want := &Backend{Name: "web", URL: "https://x.example/mcp", Transport: "streamable-http", Timeout: 2 * time.Minute, StartTimeout: 90 * time.Second, ContinuousListening: true, MaxParallel: 3}
				if diff := cmp.Diff(want, c.Backends["web"]); diff != "" {
					t.Errorf("backend web (-want +got):\n%s", diff)
				}
				wantS := Server{Transport: "stdio", Listen: DefaultListen, ExposeBackendTools: true, ExposeRunTools: true, MaxParallel: 3, Auth: Auth{Tokens: httpsafe.AllScopes("t1")},
					AllowedOrigins: []string{"https://App.example.com", "http://127.0.0.1:6274"}}
				if diff := cmp.Diff(wantS, c.Server); diff != "" {
					t.Errorf("server (-want +got):\n%s", diff)
				}
				wantSt := State{Store: "memory", Retention: 24 * time.Hour, MaxOutputBytes: 1000}
				if diff := cmp.Diff(wantSt, c.State); diff != "" {
					t.Errorf("state (-want +got):\n%s", diff)
				}
				if !c.HasCompositeTools {
					t.Errorf("HasCompositeTools = false; want true for composite_tools")
				}
			},
		},
		{
			name: "connection settings and allowed hosts, snake_case too",
			src: `server:
  allowed_hosts: [vmcp.example.com, "Proxy.Internal:8443", "[fd00::1]"]
  max_connections: 50
  idleTimeout: 30s
  read_header_timeout: 5s
  auth: {tokens: ["${T}", literal-token]}
`,
			env: map[string]string{"T": "from-env"},
			check: func(t *testing.T, c *Config) {
				want := Server{Transport: "stdio", Listen: DefaultListen, MaxParallel: DefaultMaxParallel,
					Auth:           Auth{Tokens: httpsafe.AllScopes("from-env", "literal-token")},
					AllowedHosts:   []httpsafe.AllowedHost{{Name: "vmcp.example.com"}, {Name: "proxy.internal", Port: "8443"}, {Name: "fd00::1"}},
					MaxConnections: 50, IdleTimeout: 30 * time.Second, ReadHeaderTimeout: 5 * time.Second}
				if diff := cmp.Diff(want, c.Server); diff != "" {
					t.Errorf("server (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "env expansion forms",
			src: `backends:
  a:
    command: "${BIN}/srv"
    args: ["--port=${PORT:-8080}", "--name=${NAME:-anon}", "price $5", "$${LITERAL}"]
    env: {PORT: 9000, DEBUG: true}
`,
			env: map[string]string{"BIN": "/opt/bin", "NAME": "n1"},
			check: func(t *testing.T, c *Config) {
				b := c.Backends["a"]
				if b.Command != "/opt/bin/srv" {
					t.Errorf("Command = %q; want /opt/bin/srv", b.Command)
				}
				wantArgs := []string{"--port=8080", "--name=n1", "price $5", "${LITERAL}"}
				if diff := cmp.Diff(wantArgs, b.Args); diff != "" {
					t.Errorf("Args (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(map[string]string{"PORT": "9000", "DEBUG": "true"}, b.Env); diff != "" {
					t.Errorf("Env (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "relative command paths resolve against the config directory",
			src:  "backends: {a: {command: ./bin/srv}, b: {command: node}, c: {command: /usr/bin/env}}\n",
			check: func(t *testing.T, c *Config) {
				if got := c.Backends["a"].Command; got != filepath.Join(c.Dir, "bin", "srv") {
					t.Errorf("Command(./bin/srv) = %q; want it under the config directory %s", got, c.Dir)
				}
				if got := c.Backends["b"].Command; got != "node" {
					t.Errorf("Command(node) = %q; want node (a PATH lookup)", got)
				}
				if got := c.Backends["c"].Command; got != "/usr/bin/env" {
					t.Errorf("Command(/usr/bin/env) = %q; want it unchanged", got)
				}
			},
		},
		{
			name: "empty compositeTools is not a source",
			src:  "compositeTools: []\n",
			check: func(t *testing.T, c *Config) {
				if c.HasCompositeTools {
					t.Errorf("HasCompositeTools = true; want false for an empty list")
				}
			},
		},
		{
			name: "limits, backend maxParallel and no store cap",
			src: `backends:
  a: {command: srv, maxParallel: 7}
  b: {command: srv}
  c: {command: srv, max_parallel: 1}
server: {maxParallel: 9}
state: {maxOutputBytes: 0}
limits: {max_result_bytes: 2048}
`,
			check: func(t *testing.T, c *Config) {
				got := map[string]int{}
				for n, b := range c.Backends {
					got[n] = b.MaxParallel
				}
				if diff := cmp.Diff(map[string]int{"a": 7, "b": 9, "c": 1}, got); diff != "" {
					t.Errorf("backend maxParallel (-want +got; b has the default, all of server.maxParallel):\n%s", diff)
				}
				if c.Limits.MaxResultBytes != 2048 {
					t.Errorf("limits.maxResultBytes = %d; want 2048", c.Limits.MaxResultBytes)
				}
				if c.State.MaxOutputBytes != 0 {
					t.Errorf("state.maxOutputBytes: 0 gave %d; want 0 (no cap)", c.State.MaxOutputBytes)
				}
			},
		},
		{
			name: "backend rateLimit, burst defaulted and snake_case",
			src: `backends:
  a: {command: srv, rateLimit: {perSecond: 10, burst: 2}}
  b: {command: srv, rate_limit: {per_second: 2.5}}
  c: {command: srv}
`,
			check: func(t *testing.T, c *Config) {
				got := map[string]*RateLimit{}
				for n, b := range c.Backends {
					got[n] = b.RateLimit
				}
				want := map[string]*RateLimit{"a": {PerSecond: 10, Burst: 2}, "b": {PerSecond: 2.5, Burst: 3}, "c": nil}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("backend rateLimit (-want +got; b's burst is 2.5 rounded up):\n%s", diff)
				}
			},
		},
		{
			name: "state.retention as a mapping",
			src:  "state:\n  retention: {finished: 720h, max_runs: 100000}\n",
			check: func(t *testing.T, c *Config) {
				if c.State.Retention != 720*time.Hour || c.State.MaxRuns != 100000 {
					t.Errorf("state.retention = %v, maxRuns %d; want 720h, 100000", c.State.Retention, c.State.MaxRuns)
				}
			},
		},
		{
			name: "state.retention as a duration means finished",
			src:  "state: {retention: 168h}\n",
			check: func(t *testing.T, c *Config) {
				if c.State.Retention != 168*time.Hour || c.State.MaxRuns != 0 {
					t.Errorf("state.retention: 168h = %v, maxRuns %d; want 168h, 0", c.State.Retention, c.State.MaxRuns)
				}
			},
		},
		{
			name: "JSON config",
			src:  `{"backends": {"a": {"command": "srv", "args": ["x"]}}, "server": {"transport": "http"}}`,
			check: func(t *testing.T, c *Config) {
				if c.Backends["a"].Command != "srv" || c.Server.Transport != "http" {
					t.Errorf("Load(JSON) = %+v; want backend a command srv, server transport http", c)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, map[string]string{"vmcp.yaml": tt.src})
			c, err := Load(filepath.Join(dir, "vmcp.yaml"), envOf(tt.env))
			if err != nil {
				t.Fatalf("Load(%q): %v", tt.src, err)
			}
			tt.check(t, c)
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		env  map[string]string
		// want lists substrings of the error, each "line:col: ..." prefix
		// included where the position matters.
		want []string
	}{
		{
			name: "missing env var names variable, backend and field",
			src:  "backends:\n  github:\n    command: gh\n    env: {GITHUB_TOKEN: \"${GITHUB_TOKEN}\"}\n",
			want: []string{`vmcp.yaml:4:26: error: backend "github" field env.GITHUB_TOKEN: environment variable GITHUB_TOKEN is not set`},
		},
		{
			name: "missing env var in header",
			src:  "backends:\n  m:\n    url: http://h/mcp\n    headers:\n      Authorization: Bearer ${METRICS_TOKEN}\n",
			want: []string{`vmcp.yaml:5:29: error: backend "m" field headers.Authorization: environment variable METRICS_TOKEN is not set`},
		},
		{
			name: "unterminated and bad references",
			src:  "backends:\n  a: {command: \"${X\", args: [\"${1X}\"]}\n",
			want: []string{`unterminated "${X"`, `bad environment variable reference "${1X}"`},
		},
		{
			name: "allowed origins that are not origins",
			src:  "server:\n  allowedOrigins:\n    - https://ok.example\n    - app.example.com\n    - https://app.example.com/mcp\n    - ftp://files.example\n",
			want: []string{
				`vmcp.yaml:4:7: error: server.allowedOrigins[1] "app.example.com" is not an origin: the scheme must be http or https (write scheme://host[:port], for example https://app.example.com)`,
				`vmcp.yaml:5:7: error: server.allowedOrigins[2] "https://app.example.com/mcp" is not an origin: an origin has no path, query or fragment`,
				`vmcp.yaml:6:7: error: server.allowedOrigins[3] "ftp://files.example" is not an origin: the scheme must be http or https`,
			},
		},
		{
			name: "empty token from the environment (the attack: authentication off)",
			src:  "server:\n  auth: {tokens: [\"${VMCP_TOKEN}\"]}\n",
			env:  map[string]string{"VMCP_TOKEN": ""},
			want: []string{`vmcp.yaml:2:20: error: server.auth.tokens[0] is empty: environment variable VMCP_TOKEN is set but empty; set VMCP_TOKEN to the token, or remove the entry`},
		},
		{
			name: "blank, defaulted, literal, composed and padded tokens",
			src: `server:
  auth:
    tokens:
      - "${BLANK}"
      - ${UNSET:-}
      - ""
      - "   "
      - "${A}${B}"
      - "Bearer-ok"
      - "${PADDED}"
`,
			env: map[string]string{"BLANK": " \t", "A": "", "B": "", "PADDED": "tok "},
			want: []string{
				`vmcp.yaml:4:10: error: server.auth.tokens[0] is blank (only whitespace): environment variable BLANK is set but blank (only whitespace); set BLANK to the token`,
				`vmcp.yaml:5:9: error: server.auth.tokens[1] is empty: environment variable UNSET is not set and its default is empty; set UNSET to the token`,
				`vmcp.yaml:6:9: error: server.auth.tokens[2] is empty: write the token, or "${VMCP_TOKEN}" to read it from the environment, or remove the entry`,
				`vmcp.yaml:7:9: error: server.auth.tokens[3] is blank (only whitespace): write the token`,
				`vmcp.yaml:8:9: error: server.auth.tokens[4] is empty: environment variables A, B expand to nothing; set them, or remove the entry`,
				`vmcp.yaml:10:10: error: server.auth.tokens[6] has leading or trailing whitespace, which a client's bearer token never has; remove it`,
			},
		},
		{
			name: "a single token string that is empty",
			src:  "server: {auth: {tokens: \"${T}\"}}\n",
			env:  map[string]string{"T": ""},
			want: []string{`vmcp.yaml:1:26: error: server.auth.tokens[0] is empty: environment variable T is set but empty`},
		},
		{
			name: "allowed hosts that are not hosts",
			src:  "server:\n  allowedHosts:\n    - vmcp.example.com\n    - https://vmcp.example.com\n    - \"*.example.com\"\n    - fd00::1\n    - \"vmcp.example.com:99999\"\n",
			want: []string{
				`vmcp.yaml:4:7: error: server.allowedHosts[1] "https://vmcp.example.com" is not a host: it is a URL, and a Host header carries only host[:port] (write host or host:port, for example vmcp.example.com or vmcp.example.com:8443)`,
				`vmcp.yaml:5:7: error: server.allowedHosts[2] "*.example.com" is not a host: wildcards are not supported; list each name`,
				`vmcp.yaml:6:7: error: server.allowedHosts[3] "fd00::1" is not a host: an IPv6 address is written in brackets`,
				`vmcp.yaml:7:7: error: server.allowedHosts[4] "vmcp.example.com:99999" is not a host: the port must be a number from 1 to 65535`,
			},
		},
		{
			name: "allowed hosts not a list, bad connection settings",
			src:  "server: {allowedHosts: vmcp.example.com, maxConnections: 0, idleTimeout: soon, readHeaderTimeout: -1s}\n",
			want: []string{
				`vmcp.yaml:1:24: error: server.allowedHosts must be a list of host names such as ["vmcp.example.com"], not a string`,
				`server.maxConnections must be at least 1, not 0`,
				`server.idleTimeout: "soon" is not a Go duration`,
				`server.readHeaderTimeout must be positive, not -1s`,
			},
		},
		{
			name: "connection caps that leave nothing for other clients",
			src:  "server:\n  maxConnections: 64\n  maxConnectionsPerClient: 65\n  bodyTimeout: 0s\n  console:\n    maxEventStreams: 64\n    signinFailures: 0\n    signinLockout: soon\n    maxStreams: 3\n",
			want: []string{
				`vmcp.yaml:3:28: error: server.maxConnectionsPerClient (65) must be at most server.maxConnections (64)`,
				`vmcp.yaml:4:16: error: server.bodyTimeout must be positive, not 0s`,
				`vmcp.yaml:6:22: error: server.console.maxEventStreams (64) must be less than server.maxConnections (64), so that connections are left for health checks and MCP calls`,
				`vmcp.yaml:7:21: error: server.console.signinFailures must be at least 1, not 0`,
				`vmcp.yaml:8:20: error: server.console.signinLockout: "soon" is not a Go duration`,
				`vmcp.yaml:9:5: error: unknown key "maxStreams" in server.console`,
			},
		},
		{
			name: "bad server sessions",
			src:  "server:\n  sessions:\n    idleTimeout: forever\n    max: 0\n    maxSessions: 3\n",
			want: []string{
				`vmcp.yaml:3:18: error: server.sessions.idleTimeout: "forever" is not a Go duration (for example 30s, 5m, 1h30m)`,
				`vmcp.yaml:4:10: error: server.sessions.max must be at least 1, not 0`,
				`vmcp.yaml:5:5: error: unknown key "maxSessions" in server.sessions`,
			},
		},
		{
			name: "server sessions not a mapping",
			src:  "server: {sessions: 1000}\n",
			want: []string{`vmcp.yaml:1:20: error: server.sessions must be a mapping, not a number`},
		},
		{
			name: "bad limits",
			src:  "limits:\n  maxResultBytes: 10\n  maxResultByte: 1\nbackends: {a: {command: x, maxParallel: 0}}\n",
			want: []string{
				`vmcp.yaml:2:19: error: limits.maxResultBytes must be at least 1024, not 10`,
				`vmcp.yaml:3:3: error: unknown key "maxResultByte" in limits; did you mean maxResultBytes?`,
				`vmcp.yaml:4:41: error: backend "a" field maxParallel must be at least 1, not 0`,
			},
		},
		{
			name: "allowed origins not a list",
			src:  "server: {allowedOrigins: {a: b}}\n",
			want: []string{`server.allowedOrigins must be a list of origins such as ["https://app.example.com"], not a mapping`},
		},
		{
			name: "unknown top-level key with suggestion",
			src:  "backend:\n  a: {command: x}\n",
			want: []string{`vmcp.yaml:1:1: error: unknown key "backend" in the config file; did you mean backends?`},
		},
		{
			name: "unknown top-level key without suggestion",
			src:  "frobnicate: 1\n",
			want: []string{`vmcp.yaml:1:1: error: unknown key "frobnicate" in the config file (known keys: backends, workflows, compositeTools, server, state, limits, authoring, executor, schedules, telemetry)`},
		},
		{
			name: "unknown backend field",
			src:  "backends:\n  a:\n    command: x\n    argz: [y]\n",
			want: []string{`vmcp.yaml:4:5: error: unknown key "argz" in backends.a; did you mean args?`},
		},
		{
			name: "bad types",
			src:  "backends:\n  a: {command: [x], args: {a: b}, timeout: soon}\nserver: {maxParallel: many, exposeBackendTools: yes please}\n",
			want: []string{
				`backend "a" field command must be a string, not a list`,
				`backend "a" field args must be a list of strings, not a mapping`,
				`backend "a" field timeout: "soon" is not a Go duration`,
				`server.maxParallel must be an integer, not a string`,
				`server.exposeBackendTools must be true or false, not a string`,
			},
		},
		{
			name: "command and url",
			src:  "backends:\n  a: {command: x, url: http://h/mcp}\n  b: {}\n  c:\n",
			want: []string{
				`2:3: error: backend "a" has both command and url`,
				`3:3: error: backend "b" needs a command (stdio) or a url`,
				`4:3: error: backend "c" needs a command (stdio) or a url`,
			},
		},
		{
			name: "transport mismatches",
			src:  "backends:\n  a: {command: x, transport: sse}\n  b: {url: http://h/, transport: stdio}\n  c: {url: http://h/, transport: websocket}\n",
			want: []string{
				`backend "a": transport sse needs a url, not a command`,
				`backend "b": transport stdio needs a command, not a url`,
				`backend "c" field transport "websocket" is not one of stdio, streamable-http, sse`,
			},
		},
		{
			name: "bad url and backend name",
			src:  "backends:\n  a: {url: \"ftp://h/x\"}\n  \"my.srv\": {command: x}\n",
			want: []string{
				`backend "a" field url: "ftp://h/x" is not an http or https URL`,
				`backend name "my.srv" must be letters, digits`,
			},
		},
		{
			name: "bad rate limits",
			src: `backends:
  a: {command: x, rateLimit: {perSecond: 0, burst: 2}}
  b: {command: x, rateLimit: {burst: 2}}
  c: {command: x, rateLimit: {perSecond: fast, burst: 0}}
  d: {command: x, rateLimit: {perSecnd: 3}}
  e: {command: x, rateLimit: 10}
`,
			want: []string{
				`vmcp.yaml:2:42: error: backend "a" field rateLimit.perSecond must be a positive number, not 0`,
				`vmcp.yaml:3:19: error: backend "b" field rateLimit needs perSecond, the calls a second it allows (for example rateLimit: {perSecond: 10, burst: 2})`,
				`vmcp.yaml:4:42: error: backend "c" field rateLimit.perSecond must be a number, not a string`,
				`vmcp.yaml:4:55: error: backend "c" field rateLimit.burst must be at least 1, not 0`,
				`vmcp.yaml:5:31: error: unknown key "perSecnd" in backends.d.rateLimit; did you mean perSecond?`,
				`vmcp.yaml:6:30: error: backends.e.rateLimit must be a mapping, not a number`,
			},
		},
		{
			name: "bad retention",
			src:  "state:\n  retention: {finished: soon, maxRuns: 0, keep: 3}\n",
			want: []string{
				`vmcp.yaml:2:25: error: state.retention.finished: "soon" is not a Go duration`,
				`vmcp.yaml:2:40: error: state.retention.maxRuns must be at least 1, not 0`,
				`vmcp.yaml:2:43: error: unknown key "keep" in state.retention (known keys: finished, maxRuns)`,
			},
		},
		{
			name: "postgres without a url",
			src:  "state: {store: postgres}\n",
			want: []string{`vmcp.yaml:1:8: error: state.store: postgres needs state.url, the database's postgres:// URL (for example url: ${VMCP_DATABASE_URL})`},
		},
		{
			name: "postgres url that is not one",
			src:  "state: {store: postgres, url: \"mysql://u:secret@db/x\"}\n",
			want: []string{`vmcp.yaml:1:31: error: state.url must be a postgres:// URL, such as postgres://vmcp@db:5432/vmcp (its value is not shown: it may hold a password)`},
		},
		{
			name: "retention of the wrong type",
			src:  "state: {retention: 7}\n",
			want: []string{`vmcp.yaml:1:20: error: state.retention must be a duration (168h) or a mapping such as {finished: 720h, maxRuns: 100000}, not a number`},
		},
		{
			name: "bad listen address",
			src:  "server: {listen: localhost}\n",
			want: []string{`1:18: error: server.listen "localhost" is not host:port`},
		},
		{
			name: "duplicate key",
			src:  "server: {listen: a}\nserver: {listen: b}\n",
			want: []string{`2:1: error: mapping key "server" already defined at [1:1]`},
		},
		{
			name: "missing workflow files",
			src:  "workflows: [nope/*.yaml, missing.yaml]\n",
			want: []string{
				`1:13: error: workflows[0]: "nope/*.yaml" matches no files`,
				`1:26: error: workflows[1]: "missing.yaml" does not exist`,
			},
		},
		{
			name: "yaml syntax error has a position",
			src:  "backends:\n  a: {command: x\n",
			want: []string{`vmcp.yaml:2:`},
		},
		{
			name: "top level not a mapping",
			src:  "- a\n- b\n",
			want: []string{`the config file must be a mapping, not a list`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, map[string]string{"vmcp.yaml": tt.src})
			c, err := Load(filepath.Join(dir, "vmcp.yaml"), envOf(tt.env))
			if err == nil {
				t.Fatalf("Load(%q) = %+v; want an error", tt.src, c)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Load(%q) error is %T; want *config.Error", tt.src, err)
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("Load(%q) error =\n%s\nwant it to contain %q", tt.src, msg, w)
				}
			}
			if n := len(ce.Diags); n < len(tt.want) {
				t.Errorf("Load(%q) reported %d problems; want %d", tt.src, n, len(tt.want))
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), nil)
	if err == nil || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("Load(missing file) error = %v; want one naming the file", err)
	}
}

func TestWorkflowsExcludeConfigAndDedupe(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"vmcp.yaml": "workflows: ['*.yaml', a.yaml, ./a.yaml]\n",
		"a.yaml":    "x",
		"b.yaml":    "x",
	})
	c, err := Load(filepath.Join(dir, "vmcp.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")}
	if diff := cmp.Diff(want, c.Workflows); diff != "" {
		t.Errorf("Workflows (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, c.Sources()); diff != "" {
		t.Errorf("Sources() without compositeTools (-want +got):\n%s", diff)
	}
}

func TestExpand(t *testing.T) {
	env := envOf(map[string]string{"A": "1", "EMPTY": ""})
	tests := []struct {
		in, want, err string
	}{
		{"plain", "plain", ""},
		{"$A stays", "$A stays", ""},
		{"${A}${A}", "11", ""},
		{"x${EMPTY}y", "xy", ""},
		{"${EMPTY:-d}", "d", ""},
		{"${B:-}", "", ""},
		{"$${A}", "${A}", ""},
		{"${B}", "", "environment variable B is not set"},
		{"${A", "", `unterminated "${A"`},
		{"${}", "", "bad environment variable reference"},
	}
	for _, tt := range tests {
		got, _, err := expand(tt.in, env)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("expand(%q) error = %v; want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// TestServerLimits: server.limits is read, and a bad onLimit or a cap
// under 1 is an error at its position.
func TestServerLimits(t *testing.T) {
	cfg, err := parse("vmcp.yaml", []byte("server:\n  limits: {runs: 50, perOwner: {runs: 5}, onLimit: wait}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := (RunLimits{Runs: 50, PerOwnerRuns: 5, OnLimit: "wait"}); cfg.Server.Limits != want {
		t.Errorf("server.limits = %+v; want %+v", cfg.Server.Limits, want)
	}
	_, err = parse("vmcp.yaml", []byte("server:\n  limits: {runs: 0, perOwner: {runs: 5}, onLimit: block}\n"), nil)
	for _, want := range []string{"vmcp.yaml:2:18: error: server.limits.runs must be at least 1", `vmcp.yaml:2:51: error: server.limits.onLimit "block" is not one of refuse, wait`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parse(bad limits) = %v; want %q", err, want)
		}
	}
}
