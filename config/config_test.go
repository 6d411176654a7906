package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
			"github":  {Name: "github", Command: "github-mcp-server", Args: []string{"stdio"}, Env: map[string]string{"GITHUB_TOKEN": "gh-secret"}, Transport: "stdio", Timeout: 60 * time.Second, StartTimeout: 60 * time.Second},
			"metrics": {Name: "metrics", URL: "http://127.0.0.1:9000/mcp", Transport: "streamable-http", Headers: map[string]string{"Authorization": "Bearer m-secret"}, Timeout: 60 * time.Second, StartTimeout: 60 * time.Second},
			"legacy":  {Name: "legacy", URL: "http://127.0.0.1:9001/sse", Transport: "sse", Timeout: 5 * time.Second, StartTimeout: 60 * time.Second},
		},
		Workflows: []string{
			filepath.Join(dir, "build/plan.json"),
			filepath.Join(dir, "workflows/a.yaml"),
			filepath.Join(dir, "workflows/b.yaml"),
			filepath.Join(dir, "workflows/c.yml"),
		},
		Server:            Server{Transport: "stdio", Listen: "127.0.0.1:8080", MaxParallel: 4},
		State:             State{Store: "sqlite", Path: filepath.Join(dir, "vmcp-state.db")},
		Limits:            Limits{MaxIterations: 1000},
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
				want := Config{Server: Server{Transport: "stdio", Listen: DefaultListen, MaxParallel: 10}, State: State{Store: "memory"}}
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
				want := &Backend{Name: "web", URL: "https://x.example/mcp", Transport: "streamable-http", Timeout: 2 * time.Minute, StartTimeout: 90 * time.Second, ContinuousListening: true}
				if diff := cmp.Diff(want, c.Backends["web"]); diff != "" {
					t.Errorf("backend web (-want +got):\n%s", diff)
				}
				wantS := Server{Transport: "stdio", Listen: DefaultListen, ExposeBackendTools: true, ExposeRunTools: true, MaxParallel: 3, Auth: Auth{Tokens: []string{"t1"}},
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
			want: []string{`vmcp.yaml:1:1: error: unknown key "frobnicate" in the config file (known keys: backends, workflows, compositeTools, server, state, limits)`},
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
		got, err := expand(tt.in, env)
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
