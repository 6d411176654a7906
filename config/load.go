package config

// Loading walks the YAML syntax tree by hand rather than decoding into
// structs: every key and value keeps its position, so each problem (an
// unknown key, a bad duration, an unset ${VAR}) is reported at its own
// file:line:col, and the walk goes on to report the rest. Keys are accepted
// in camelCase and snake_case (continuousListening, continuous_listening),
// as in workflow files.

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	yaml "github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/internal/spell"
	"github.com/vmcp-dev/vmcp/ir"
)

// Error is a config file that failed to load. Diags has one diagnostic per
// problem, each with its position; Sources holds the file's text, so that
// diag.Print(w, e.Diags.Sorted(), diag.Text, e.Sources) shows the source
// line and a caret under each. Error lists them all, one line each.
type Error struct {
	Diags   diag.List
	Sources diag.Sources
}

func (e *Error) Error() string {
	var lines []string
	for _, d := range e.Diags.Sorted() {
		lines = append(lines, d.String())
	}
	return strings.Join(lines, "\n")
}

// backendNameRE is what may precede the dot in a tool reference.
var backendNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Load reads and validates the config file at path. env looks up variables
// for ${VAR} expansion (os.LookupEnv in production); a variable it does not
// know is an error naming the variable and the field that used it.
// Unknown keys are errors with their position, except compositeTools and
// composite_tools, which belong to the workflow parser. Problems are
// returned together as an *Error.
func Load(path string, env func(string) (string, bool)) (*Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return parse(path, src, env)
}

// parse is Load after reading the file.
func parse(path string, src []byte, env func(string) (string, bool)) (*Config, error) {
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}
	l := &loader{file: filepath.ToSlash(path), env: env}
	sources := diag.Sources{l.file: src}
	cfg := &Config{
		Path:     path,
		Dir:      filepath.Dir(path),
		Backends: map[string]*Backend{},
		Server:   Server{Transport: "stdio", Listen: DefaultListen, MaxParallel: DefaultMaxParallel},
		State:    State{Store: DefaultStore, MaxOutputBytes: DefaultMaxOutputBytes},
		Limits:   Limits{MaxResultBytes: DefaultMaxResultBytes, MaxIterations: ir.DefaultIterationLimit},
		Executor: defaultExecutor(),
	}
	l.cfg = cfg

	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		var se *yaml.SyntaxError
		p := ir.Pos{File: l.file}
		msg := err.Error()
		if errors.As(err, &se) {
			msg = se.GetMessage()
			if tk := se.GetToken(); tk != nil && tk.Position != nil {
				p.Line, p.Col = tk.Position.Line, tk.Position.Column
			}
		}
		l.diags.Errorf(p, "", CodeYAMLSyntax, "%s", msg)
		return nil, &Error{Diags: l.diags, Sources: sources}
	}
	var body ast.Node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			l.errorf(doc.Body, "", CodeMultipleDocuments, "a config file holds one YAML document; found another here")
			break
		}
		body = doc.Body
	}
	if body != nil {
		l.top(body)
	}
	l.checkAuthoringBackends()
	l.checkTokenExchange()
	for _, b := range cfg.Backends {
		if b.MaxParallel == 0 {
			b.MaxParallel = cfg.Server.MaxParallel
		}
	}
	if l.diags.HasErrors() {
		return nil, &Error{Diags: l.diags, Sources: sources}
	}
	return cfg, nil
}

type loader struct {
	// exchanges are the token-exchange auth nodes and their paths,
	// checked once server.auth is read.
	exchanges []positioned
	file      string
	env       func(string) (string, bool)
	cfg       *Config
	diags     diag.List
	// authoringBackends is the authoring.backends node, checked once every
	// backend is read.
	authoringBackends ast.Node
}

func (l *loader) pos(n ast.Node) ir.Pos {
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return ir.Pos{File: l.file}
	}
	return ir.Pos{File: l.file, Line: tk.Position.Line, Col: tk.Position.Column}
}

func (l *loader) errorf(n ast.Node, path, code, format string, args ...any) {
	l.diags.Errorf(l.pos(n), path, code, format, args...)
}

func (l *loader) top(n ast.Node) {
	known := []string{"backends", "workflows", "compositeTools", "server", "state", "limits", "authoring", "executor", "schedules", "telemetry"}
	l.fields(n, "", known, func(key string, k, v ast.Node) {
		switch key {
		case "backends":
			l.fields(v, "backends", nil, func(name string, k, v ast.Node) {
				l.backend(name, k, v)
			})
		case "workflows":
			l.workflows(v)
		case "compositeTools":
			// The workflow parser reads this list; here it only makes the
			// config file a workflow source.
			if seq, ok := unwrap(v).(*ast.SequenceNode); !ok || len(seq.Values) > 0 {
				if _, null := unwrap(v).(*ast.NullNode); !null {
					l.cfg.HasCompositeTools = true
				}
			}
		case "server":
			l.server(v)
		case "state":
			l.state(v)
		case "limits":
			l.limits(v)
		case "authoring":
			l.authoring(v)
		case "executor":
			l.executor(v)
		case "schedules":
			l.schedules(v)
		case "telemetry":
			l.telemetry(v)
		}
	})
}

// limits reads the server-wide caps.
func (l *loader) limits(n ast.Node) {
	lim := &l.cfg.Limits
	l.fields(n, "limits", []string{"maxResultBytes", "maxIterations"}, func(key string, k, v ast.Node) {
		p := "limits." + key
		switch key {
		case "maxResultBytes":
			if b := l.integer(v, p, p, 1024); b >= 1024 {
				lim.MaxResultBytes = b
			}
		case "maxIterations":
			if m := l.integer(v, p, p, 1); m >= 1 {
				lim.MaxIterations = m
			}
		}
	})
}

// fields calls fn for every key of the mapping n, in file order, after
// normalising snake_case keys to camelCase. With known set, other keys are
// errors (with a did-you-mean hint); a nil known accepts any key. A null n
// is an empty mapping.
func (l *loader) fields(n ast.Node, path string, known []string, fn func(key string, k, v ast.Node)) {
	n = unwrap(n)
	if _, ok := n.(*ast.NullNode); ok || n == nil {
		return
	}
	m, ok := n.(*ast.MappingNode)
	if !ok {
		l.errorf(n, path, CodeBadType, "%s must be a mapping, not %s", describePath(path), kind(n))
		return
	}
	seen := map[string]bool{}
	for _, mv := range m.Values {
		raw, ok := scalarString(unwrap(mv.Key)) // an anchored or tagged key is still its string
		if !ok {
			l.errorf(mv.Key, path, CodeBadKey, "%s: keys must be strings", describePath(path))
			continue
		}
		key := raw
		if known != nil {
			key = spell.Camel(raw)
		}
		sub := joinPath(path, raw)
		if seen[key] {
			l.errorf(mv.Key, sub, CodeDuplicateKey, "duplicate key %q", raw)
			continue
		}
		seen[key] = true
		if known != nil && !contains(known, key) {
			msg := fmt.Sprintf("unknown key %q in %s", raw, describePath(path))
			if hint := spell.DidYouMean(raw, known); hint != "" {
				msg += hint
			} else {
				msg += fmt.Sprintf(" (known keys: %s)", strings.Join(known, ", "))
			}
			l.errorf(mv.Key, sub, CodeUnknownField, "%s", msg)
			continue
		}
		fn(key, mv.Key, mv.Value)
	}
}

// describePath names a YAML path for messages.
func describePath(path string) string {
	if path == "" {
		return "the config file"
	}
	return path
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// str reads a string-valued scalar and expands ${VAR} in it. what names the
// field for messages ("backend \"github\" field env.GITHUB_TOKEN").
func (l *loader) str(n ast.Node, path, what string) (string, bool) {
	s, _, ok := l.strRefs(n, path, what)
	return s, ok
}

// strRefs is str that also returns the ${VAR} references it expanded.
func (l *loader) strRefs(n ast.Node, path, what string) (string, []envRef, bool) {
	s, ok := scalarString(unwrap(n))
	if !ok {
		l.errorf(n, path, CodeBadType, "%s must be a string, not %s", what, kind(unwrap(n)))
		return "", nil, false
	}
	out, refs, err := expand(s, l.env)
	if err != nil {
		var ee *expandError
		p := l.pos(n)
		if errors.As(err, &ee) {
			p = l.refPos(n, s, ee.Offset)
			code := CodeBadEnvRef
			if ee.Var != "" {
				code = CodeMissingEnv
			}
			l.diags.Errorf(p, path, code, "%s: %s", what, ee.Msg)
			return "", nil, false
		}
		l.diags.Errorf(p, path, CodeBadEnvRef, "%s: %v", what, err)
		return "", nil, false
	}
	return out, refs, true
}

// refPos is the position of the byte at offset in the scalar n whose text
// is s: the scalar's own position when s spans lines before it.
func (l *loader) refPos(n ast.Node, s string, offset int) ir.Pos {
	p := l.pos(n)
	if !strings.Contains(s[:offset], "\n") {
		p.Col += offset + quoteWidth(n)
	}
	return p
}

// quoteWidth is 1 for a quoted scalar, whose token starts at the quote.
func quoteWidth(n ast.Node) int {
	tk := unwrap(n).GetToken()
	if tk != nil && (strings.HasPrefix(tk.Origin, "\"") || strings.HasPrefix(strings.TrimSpace(tk.Origin), "\"") ||
		strings.HasPrefix(strings.TrimSpace(tk.Origin), "'")) {
		return 1
	}
	return 0
}

func (l *loader) strList(n ast.Node, path, what string) []string {
	n = unwrap(n)
	if _, ok := n.(*ast.NullNode); ok {
		return nil
	}
	if _, ok := scalarString(n); ok {
		if v, ok := l.str(n, path, what); ok {
			return []string{v}
		}
		return nil
	}
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		l.errorf(n, path, CodeBadType, "%s must be a list of strings, not %s", what, kind(n))
		return nil
	}
	out := make([]string, 0, len(seq.Values))
	for i, v := range seq.Values {
		s, ok := l.str(v, fmt.Sprintf("%s[%d]", path, i), fmt.Sprintf("%s[%d]", what, i))
		if ok {
			out = append(out, s)
		}
	}
	return out
}

func (l *loader) strMap(n ast.Node, path, what string) map[string]string {
	out := map[string]string{}
	l.fields(n, path, nil, func(key string, k, v ast.Node) {
		if s, ok := l.str(v, joinPath(path, key), what+"."+key); ok {
			out[key] = s
		}
	})
	return out
}

// envScalar expands a string scalar that holds ${VAR} references, for a
// field of another type (an integer, a boolean): maxParallel: ${N} and
// maxParallel: "${N}" both give the integer N holds. isRef is false when n
// is not such a scalar; ok is false when the expansion failed (reported).
// vars names the variables, for the conversion's error.
func (l *loader) envScalar(n ast.Node, path, what string) (val, vars string, isRef, ok bool) {
	s, isStr := unwrap(n).(*ast.StringNode)
	if !isStr || !strings.Contains(s.Value, "${") {
		return "", "", false, false
	}
	val, ok = l.str(n, path, what)
	var names []string
	for _, m := range envRefRE.FindAllStringSubmatch(s.Value, -1) {
		names = append(names, m[1])
	}
	vars = "environment variable " + strings.Join(names, ", ")
	if len(names) > 1 {
		vars = "environment variables " + strings.Join(names, ", ")
	}
	return strings.TrimSpace(val), vars, true, ok
}

var envRefRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`)

// badEnvValue reports a ${VAR} whose value does not convert to the
// field's type. It names the variable, not the value (values may be
// secrets).
func (l *loader) badEnvValue(n ast.Node, path, what, want, vars string) {
	l.errorf(n, path, CodeBadEnvValue, "%s must be %s, and the value of %s is not one", what, want, vars)
}

func (l *loader) boolean(n ast.Node, path, what string) bool {
	if s, vars, isRef, ok := l.envScalar(n, path, what); isRef {
		b, err := strconv.ParseBool(s)
		if ok && err != nil {
			l.badEnvValue(n, path, what, "true or false", vars)
		}
		return b
	}
	b, ok := unwrap(n).(*ast.BoolNode)
	if !ok {
		l.errorf(n, path, CodeBadType, "%s must be true or false, not %s", what, kind(unwrap(n)))
		return false
	}
	return b.Value
}

func (l *loader) integer(n ast.Node, path, what string, min int) int {
	if s, vars, isRef, ok := l.envScalar(n, path, what); isRef {
		if !ok {
			return 0
		}
		v, err := strconv.Atoi(s)
		if err != nil {
			l.badEnvValue(n, path, what, "an integer", vars)
			return 0
		}
		if v < min {
			l.errorf(n, path, CodeBadValue, "%s must be at least %d, and the value of %s is %d", what, min, vars, v)
		}
		return v
	}
	var v int
	if err := yaml.NodeToValue(unwrap(n), &v); err != nil || !isInt(unwrap(n)) {
		l.errorf(n, path, CodeBadType, "%s must be an integer, not %s", what, kind(unwrap(n)))
		return 0
	}
	if v < min {
		l.errorf(n, path, CodeBadValue, "%s must be at least %d, not %d", what, min, v)
	}
	return v
}

func (l *loader) duration(n ast.Node, path, what string) time.Duration {
	s, ok := l.str(n, path, what)
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(s)
	if _, vars, isRef, _ := l.envScalar(n, path, what); isRef && err != nil {
		l.badEnvValue(n, path, what, "a Go duration (for example 30s, 5m, 1h30m)", vars)
		return 0
	}
	if err != nil {
		l.errorf(n, path, CodeBadValue, "%s: %q is not a Go duration (for example 30s, 5m, 1h30m)", what, s)
		return 0
	}
	if d <= 0 {
		l.errorf(n, path, CodeBadValue, "%s must be positive, not %s", what, s)
		return 0
	}
	return d
}

// number reads a positive number (an integer or a float, or a ${VAR}
// holding one).
func (l *loader) number(n ast.Node, path, what string) float64 {
	if s, vars, isRef, ok := l.envScalar(n, path, what); isRef {
		if !ok {
			return 0
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			l.badEnvValue(n, path, what, "a positive number", vars)
			return 0
		}
		return f
	}
	var f float64
	switch unwrap(n).(type) {
	case *ast.IntegerNode, *ast.FloatNode:
		if err := yaml.NodeToValue(unwrap(n), &f); err != nil {
			l.errorf(n, path, CodeBadType, "%s must be a number, not %s", what, kind(unwrap(n)))
			return 0
		}
	default:
		l.errorf(n, path, CodeBadType, "%s must be a number, not %s", what, kind(unwrap(n)))
		return 0
	}
	if !(f > 0) || math.IsInf(f, 0) {
		l.errorf(n, path, CodeBadValue, "%s must be a positive number, not %s", what, unwrap(n).GetToken().Value)
		return 0
	}
	return f
}

// rateLimit reads backends.<name>.rateLimit: {perSecond, burst}.
// perSecond is required; burst defaults to perSecond rounded up.
func (l *loader) rateLimit(keyNode, n ast.Node, path, what string) *RateLimit {
	r := &RateLimit{}
	l.fields(n, path, []string{"perSecond", "burst"}, func(key string, k, v ast.Node) {
		switch key {
		case "perSecond":
			r.PerSecond = l.number(v, joinPath(path, key), what+".perSecond")
		case "burst":
			r.Burst = l.integer(v, joinPath(path, key), what+".burst", 1)
		}
	})
	if _, isMap := unwrap(n).(*ast.MappingNode); !isMap {
		if _, null := unwrap(n).(*ast.NullNode); !null {
			return nil // reported by fields
		}
	}
	if r.PerSecond == 0 {
		if !l.hasKey(n, "perSecond") {
			l.errorf(keyNode, path, CodeMissingField, "%s needs perSecond, the calls a second it allows (for example rateLimit: {perSecond: 10, burst: 2})", what)
		}
		return nil
	}
	if r.Burst < 1 {
		r.Burst = max(1, int(math.Ceil(r.PerSecond)))
	}
	return r
}

// hasKey reports whether mapping n has key (in camelCase or snake_case).
func (l *loader) hasKey(n ast.Node, key string) bool {
	m, ok := unwrap(n).(*ast.MappingNode)
	if !ok {
		return false
	}
	for _, mv := range m.Values {
		if raw, ok := scalarString(unwrap(mv.Key)); ok && spell.Camel(raw) == key {
			return true
		}
	}
	return false
}

func (l *loader) oneOf(n ast.Node, path, what string, allowed ...string) (string, bool) {
	s, ok := l.str(n, path, what)
	if !ok {
		return "", false
	}
	if !contains(allowed, s) {
		l.errorf(n, path, CodeBadValue, "%s %q is not one of %s", what, s, strings.Join(allowed, ", "))
		return "", false
	}
	return s, true
}

func (l *loader) backend(name string, keyNode, n ast.Node) {
	path := "backends." + name
	if !backendNameRE.MatchString(name) {
		l.errorf(keyNode, path, CodeBadName, "backend name %q must be letters, digits, '_' and '-' (it is the prefix of tool references like %s.tool)", name, name)
		return
	}
	b := &Backend{Name: name, Timeout: DefaultCallTimeout, StartTimeout: DefaultStartTimeout}
	what := func(field string) string { return fmt.Sprintf("backend %q field %s", name, field) }
	var transportNode ast.Node
	known := []string{"command", "args", "env", "url", "transport", "headers", "auth", "timeout", "startTimeout", "continuousListening", "maxParallel", "rateLimit"}
	l.fields(n, path, known, func(key string, k, v ast.Node) {
		p := joinPath(path, key)
		switch key {
		case "command":
			b.Command, _ = l.str(v, p, what(key))
			if strings.ContainsRune(b.Command, '/') && !filepath.IsAbs(b.Command) {
				b.Command = l.resolve(b.Command)
			}
		case "args":
			b.Args = l.strList(v, p, what(key))
		case "env":
			b.Env = l.strMap(v, p, what(key))
		case "url":
			b.URL, _ = l.str(v, p, what(key))
			if b.URL != "" {
				if u, err := url.Parse(b.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					l.errorf(v, p, CodeBadValue, "%s: %q is not an http or https URL", what(key), b.URL)
				}
			}
		case "transport":
			transportNode = v
			b.Transport, _ = l.oneOf(v, p, what(key), TransportStdio, TransportStreamableHTTP, TransportSSE)
		case "headers":
			b.Headers = l.strMap(v, p, what(key))
		case "auth":
			b.Auth = l.backendAuth(v, p)
		case "timeout":
			if d := l.duration(v, p, what(key)); d > 0 {
				b.Timeout = d
			}
		case "startTimeout":
			if d := l.duration(v, p, what(key)); d > 0 {
				b.StartTimeout = d
			}
		case "continuousListening":
			b.ContinuousListening = l.boolean(v, p, what(key))
		case "maxParallel":
			if m := l.integer(v, p, what(key), 1); m >= 1 {
				b.MaxParallel = m
			}
		case "rateLimit":
			b.RateLimit = l.rateLimit(k, v, p, what(key))
		}
	})
	if _, isMap := unwrap(n).(*ast.MappingNode); !isMap {
		if _, null := unwrap(n).(*ast.NullNode); null {
			l.errorf(keyNode, path, CodeMissingField, "backend %q needs a command (stdio) or a url (streamable-http, sse)", name)
		}
		return
	}
	switch {
	case b.Command != "" && b.URL != "":
		l.errorf(keyNode, path, CodeBadValue, "backend %q has both command and url; a backend is either a process (command) or a server (url)", name)
	case b.Command == "" && b.URL == "":
		l.errorf(keyNode, path, CodeMissingField, "backend %q needs a command (stdio) or a url (streamable-http, sse)", name)
	case b.Transport == "" && b.Command != "":
		b.Transport = TransportStdio
	case b.Transport == "" && b.URL != "":
		b.Transport = TransportStreamableHTTP
	case b.Transport == TransportStdio && b.Command == "":
		l.errorf(transportNode, path+".transport", CodeBadValue, "backend %q: transport stdio needs a command, not a url", name)
	case b.Transport != TransportStdio && b.URL == "":
		l.errorf(transportNode, path+".transport", CodeBadValue, "backend %q: transport %s needs a url, not a command", name, b.Transport)
	}
	if b.Command != "" && (len(b.Headers) > 0 || b.ContinuousListening || b.Auth != nil) {
		l.errorf(keyNode, path, CodeBadValue, "backend %q: headers, auth and continuousListening apply to url backends only", name)
	}
	l.checkAuthHeader(keyNode, b)
	if b.URL != "" && (len(b.Args) > 0 || len(b.Env) > 0) {
		l.errorf(keyNode, path, CodeBadValue, "backend %q: args and env apply to command backends only", name)
	}
	if b.ContinuousListening && b.Transport == TransportSSE {
		l.errorf(keyNode, path, CodeBadValue, "backend %q: continuousListening applies to streamable-http only (sse always listens)", name)
	}
	l.cfg.Backends[name] = b
}

func (l *loader) server(n ast.Node) {
	s := &l.cfg.Server
	known := []string{"transport", "listen", "exposeBackendTools", "exposeRunTools", "maxParallel", "auth", "allowedOrigins",
		"allowedHosts", "maxConnections", "idleTimeout", "readHeaderTimeout", "sessions", "bodyTimeout",
		"maxConnectionsPerClient", "console", "limits"}
	nodes := map[string]ast.Node{}
	defer func() { l.serverCaps(nodes) }()
	l.fields(n, "server", known, func(key string, k, v ast.Node) {
		nodes[key] = v
		p := "server." + key
		switch key {
		case "transport":
			if t, ok := l.oneOf(v, p, p, "stdio", "http"); ok {
				s.Transport = t
			}
		case "listen":
			if a, ok := l.str(v, p, p); ok {
				if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
					l.errorf(v, p, CodeBadValue, "%s %q is not host:port (for example 127.0.0.1:8080)", p, a)
				} else {
					s.Listen = a
				}
			}
		case "exposeBackendTools":
			s.ExposeBackendTools = l.boolean(v, p, p)
		case "exposeRunTools":
			s.ExposeRunTools = l.boolean(v, p, p)
		case "maxParallel":
			if m := l.integer(v, p, p, 1); m >= 1 {
				s.MaxParallel = m
			}
		case "auth":
			l.fields(v, p, []string{"tokens", "oidc"}, func(key string, k, v ast.Node) {
				switch key {
				case "tokens":
					s.Auth.Tokens = l.tokens(v, p+".tokens")
				case "oidc":
					s.Auth.OIDC = l.oidc(v, p+".oidc")
				}
			})
		case "allowedOrigins":
			s.AllowedOrigins = l.origins(v, p)
		case "allowedHosts":
			s.AllowedHosts = l.hosts(v, p)
		case "maxConnections":
			s.MaxConnections = l.integer(v, p, p, 1)
		case "idleTimeout":
			s.IdleTimeout = l.duration(v, p, p)
		case "readHeaderTimeout":
			s.ReadHeaderTimeout = l.duration(v, p, p)
		case "bodyTimeout":
			s.BodyTimeout = l.duration(v, p, p)
		case "maxConnectionsPerClient":
			s.MaxConnectionsPerClient = l.integer(v, p, p, 1)
		case "console":
			l.console(v, p, nodes)
		case "sessions":
			l.fields(v, p, []string{"idleTimeout", "max"}, func(key string, k, v ast.Node) {
				sp := p + "." + key
				switch key {
				case "idleTimeout":
					s.Sessions.IdleTimeout = l.duration(v, sp, sp)
				case "max":
					if m := l.integer(v, sp, sp, 1); m >= 1 {
						s.Sessions.Max = m
					}
				}
			})
		case "limits":
			l.runLimits(v, p, &s.Limits)
		}
	})
}

// runLimits reads server.limits: {runs, perOwner: {runs}, onLimit}.
func (l *loader) runLimits(n ast.Node, path string, out *RunLimits) {
	l.fields(n, path, []string{"runs", "perOwner", "onLimit"}, func(key string, k, v ast.Node) {
		p := path + "." + key
		switch key {
		case "runs":
			if m := l.integer(v, p, p, 1); m >= 1 {
				out.Runs = m
			}
		case "perOwner":
			l.fields(v, p, []string{"runs"}, func(key string, k, v ast.Node) {
				pp := p + "." + key
				if m := l.integer(v, pp, pp, 1); m >= 1 {
					out.PerOwnerRuns = m
				}
			})
		case "onLimit":
			if o, ok := l.oneOf(v, p, p, "refuse", "wait"); ok {
				out.OnLimit = o
			}
		}
	})
}

// origins reads server.allowedOrigins, a list of browser origins, each
// scheme://host[:port] as a browser sends it in the Origin header.
func (l *loader) origins(n ast.Node, path string) []string {
	n = unwrap(n)
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		if _, null := n.(*ast.NullNode); !null {
			l.errorf(n, path, CodeBadType, "%s must be a list of origins such as [\"https://app.example.com\"], not %s", path, kind(n))
		}
		return nil
	}
	var out []string
	for i, v := range seq.Values {
		p := fmt.Sprintf("%s[%d]", path, i)
		o, ok := l.str(v, p, p)
		if !ok {
			continue
		}
		if why := badOrigin(o); why != "" {
			l.errorf(v, p, CodeBadValue, "%s %q is not an origin: %s (write scheme://host[:port], for example https://app.example.com)", p, o, why)
			continue
		}
		out = append(out, strings.TrimSuffix(o, "/"))
	}
	return out
}

// badOrigin says what keeps o from being an origin, or "".
func badOrigin(o string) string {
	u, err := url.Parse(o)
	switch {
	case err != nil:
		return "it does not parse as a URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "the scheme must be http or https"
	case u.Host == "" || u.Hostname() == "":
		return "it has no host"
	case u.User != nil:
		return "it has user information"
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		return "an origin has no path, query or fragment"
	}
	return ""
}

func (l *loader) state(n ast.Node) {
	s := &l.cfg.State
	known := []string{"store", "path", "url", "lease", "retention", "maxOutputBytes"}
	var urlNode ast.Node
	l.fields(n, "state", known, func(key string, k, v ast.Node) {
		p := "state." + key
		switch key {
		case "store":
			if st, ok := l.oneOf(v, p, p, "memory", "sqlite", "postgres"); ok {
				s.Store = st
			}
		case "path":
			if path, ok := l.str(v, p, p); ok {
				s.Path = l.resolve(path)
			}
		case "url":
			urlNode = v
			if u, ok := l.str(v, p, p); ok {
				s.URL = u
				// The URL may hold a password: messages never quote it.
				if pu, err := url.Parse(u); err != nil || (pu.Scheme != "postgres" && pu.Scheme != "postgresql") {
					l.errorf(v, p, CodeBadValue, "%s must be a postgres:// URL, such as postgres://vmcp@db:5432/vmcp (its value is not shown: it may hold a password)", p)
				}
			}
		case "lease":
			s.Lease = l.duration(v, p, p)
		case "retention":
			l.retention(v, p)
		case "maxOutputBytes":
			s.MaxOutputBytes = l.integer(v, p, p, 0)
		}
	})
	if s.Store == "sqlite" && s.Path == "" {
		s.Path = l.resolve("vmcp-state.db")
	}
	if s.Store == "postgres" && s.URL == "" && urlNode == nil {
		l.errorf(n, "state", CodeMissingField, "state.store: postgres needs state.url, the database's postgres:// URL (for example url: ${VMCP_DATABASE_URL})")
	}
}

// retention reads state.retention: a duration (the older form, meaning
// finished) or {finished: DURATION, maxRuns: N}.
func (l *loader) retention(n ast.Node, path string) {
	s := &l.cfg.State
	if _, isMap := unwrap(n).(*ast.MappingNode); !isMap {
		if _, isStr := unwrap(n).(*ast.StringNode); !isStr {
			l.errorf(n, path, CodeBadType, "%s must be a duration (168h) or a mapping such as {finished: 720h, maxRuns: 100000}, not %s", path, kind(unwrap(n)))
			return
		}
		s.Retention = l.duration(n, path, path)
		return
	}
	l.fields(n, path, []string{"finished", "maxRuns"}, func(key string, k, v ast.Node) {
		p := path + "." + key
		switch key {
		case "finished":
			s.Retention = l.duration(v, p, p)
		case "maxRuns":
			s.MaxRuns = l.integer(v, p, p, 1)
		}
	})
}

// resolve makes a path from the config file relative to its directory.
func (l *loader) resolve(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(l.cfg.Dir, filepath.FromSlash(p))
}

// unwrap looks through tags and anchors to the value node.
func unwrap(n ast.Node) ast.Node {
	for {
		switch t := n.(type) {
		case *ast.TagNode:
			n = t.Value
		case *ast.AnchorNode:
			n = t.Value
		default:
			return n
		}
	}
}

// scalarString returns the text of a scalar node: the value of a string, or
// the literal text of a number or boolean (env: {PORT: 8080} means "8080").
func scalarString(n ast.Node) (string, bool) {
	switch t := n.(type) {
	case *ast.StringNode:
		return t.Value, true
	case *ast.LiteralNode:
		return t.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		return t.GetToken().Value, true
	}
	return "", false
}

func isInt(n ast.Node) bool { _, ok := n.(*ast.IntegerNode); return ok }

// kind names a node's type for messages.
func kind(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.StringNode, *ast.LiteralNode:
		return "a string"
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	case *ast.BoolNode:
		return "a boolean"
	case *ast.NullNode, nil:
		return "null"
	case *ast.AliasNode:
		return "an alias (aliases are not supported here)"
	}
	return "a " + strings.ToLower(n.Type().String())
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
