package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Runner runs workflows. *runtime.Engine implements it; tests may use
// fakes.
type Runner interface {
	Workflows() []*ir.Workflow
	Run(ctx context.Context, workflow string, params map[string]any, opts runtime.RunOptions) (*runtime.Run, error)
}

// BackendTools is what serving backend tools as they are needs from the
// backend manager (*mcpclient.Manager implements it).
type BackendTools interface {
	// Tools returns the tools a backend listed.
	Tools(backend string) []mcp.Tool
	// CallRaw calls a backend tool and returns its MCP result unconverted.
	CallRaw(ctx context.Context, backend, tool string, args map[string]any) (*mcp.CallToolResult, error)
}

// Options configure a Server.
type Options struct {
	// Runner runs the workflows; each of its workflows becomes a tool.
	Runner Runner
	// Backends, with Expose, also serves every backend tool as
	// <backend>_<tool>. BackendNames lists the backends to expose.
	Backends     BackendTools
	BackendNames []string
	Expose       bool
	// ExtraTools are served too (for example the run status and cancel
	// tools of mcpserver/runtools).
	ExtraTools []mcpgo.ServerTool
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// TraceContext, when set (tracing is on), returns the context a run
	// starts in from the call's: with the caller's trace context from
	// the request's params._meta (meta) or its HTTP headers (header), so
	// the run's span is the caller's child (telemetry/trace.Extract).
	TraceContext func(ctx context.Context, meta map[string]any, header func(string) string) context.Context
	// Name and Version are reported to clients (defaults "vmcp", "dev").
	Name, Version string
	// ElicitTimeout bounds one elicitation round trip when the step's own
	// context has no earlier deadline (default 10m, the longest an
	// elicitation step may wait).
	ElicitTimeout time.Duration
	// NotifyFlush is how long a tool call that sent progress through the
	// session waits before returning, so that stdio and streamable HTTP
	// deliver the last notification ahead of the response (default 5ms; see
	// flushMiddleware). Calls through MCPHandler write progress on their
	// own stream and do not wait.
	NotifyFlush time.Duration
	// StdioWorkers is how many tool calls a stdio session runs at once
	// (default 32).
	StdioWorkers int
	// SessionIdleTimeout ends a streamable HTTP session that has had no
	// request open for this long (default 30m); MaxSessions caps how many
	// are open at once (default 1000). See sessions.go.
	SessionIdleTimeout time.Duration
	MaxSessions        int
	// ListChanged declares tools.listChanged, for a server whose workflows
	// change while it runs (PublishWorkflows); clients then get
	// notifications/tools/list_changed.
	ListChanged bool
	// Tasks, with Runs set, serves long runs as MCP Tasks (tasks.go):
	// workflow tools then say taskSupport "optional".
	Tasks TaskOptions
	// RunLimits cap the runs in flight, on the server and per owner
	// (runlimits.go).
	RunLimits RunLimits
}

// Server is vmcp's MCP server.
type Server struct {
	opts Options
	mcp  *mcpgo.MCPServer
	log  *slog.Logger
	// mu guards the tool tables below, which PublishWorkflows, AddTools
	// and RequireScope change while the server runs (publish.go).
	mu sync.RWMutex
	// workflows are the served workflow tools by name; others the names
	// of every other tool (exposed backend tools, extra tools).
	workflows map[string]*ir.Workflow
	others    map[string]bool
	// scopes are the scopes tool calls need beyond run (scopes.go).
	scopes map[string]httpsafe.Scope
	// waiting holds the questions of runs driven by multi round trips.
	waiting waiting
	// tasks is nil unless Options.Tasks.Runs is set.
	tasks *tasks
	// runs admits the runs callers start (runlimits.go).
	runs *admission
}

// New builds the MCP server and registers one tool per workflow (and, when
// asked, one per backend tool). It fails when two tools would share a name.
func New(opts Options) (*Server, error) {
	if opts.Runner == nil {
		return nil, fmt.Errorf("server: no runner")
	}
	if opts.Name == "" {
		opts.Name = "vmcp"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.ElicitTimeout <= 0 {
		opts.ElicitTimeout = 10 * time.Minute
	}
	if opts.NotifyFlush <= 0 {
		opts.NotifyFlush = 5 * time.Millisecond
	}
	if opts.StdioWorkers <= 0 {
		opts.StdioWorkers = 32
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, log: log, workflows: map[string]*ir.Workflow{}, others: map[string]bool{},
		scopes: map[string]httpsafe.Scope{}, runs: newAdmission(opts.RunLimits)}
	mcpOpts := append(capabilityOptions(opts.ListChanged, opts.Tasks.Runs != nil),
		mcpgo.WithToolHandlerMiddleware(s.flushMiddleware),
		mcpgo.WithRecovery(),
	)
	if opts.Tasks.Runs != nil {
		s.tasks = newTasks(s, opts.Tasks)
		// Advertised by capabilityOptions; served by tasks_wire.go.
		mcpOpts = append(mcpOpts, mcpgo.WithHooks(s.tasks.hooks()))
	}
	s.mcp = mcpgo.NewMCPServer(opts.Name, opts.Version, mcpOpts...)

	var tools []mcpgo.ServerTool
	for _, wf := range opts.Runner.Workflows() {
		t, err := s.workflowServerTool(wf)
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
		s.workflows[wf.Name] = wf
	}
	if opts.Expose && opts.Backends != nil {
		proxied, err := s.backendTools()
		if err != nil {
			return nil, err
		}
		tools = append(tools, proxied...)
	}
	tools = append(tools, opts.ExtraTools...)
	seen := map[string]bool{}
	for _, t := range tools {
		if seen[t.Tool.Name] {
			return nil, fmt.Errorf("server: two tools are named %q (a workflow, an exposed backend tool or an extra tool)", t.Tool.Name)
		}
		seen[t.Tool.Name] = true
		if s.workflows[t.Tool.Name] == nil {
			s.others[t.Tool.Name] = true
		}
	}
	s.mcp.AddTools(tools...)
	return s, nil
}

// capabilityOptions are the mcp-go options that make what initialize and
// server/discover answer: New's server and the early one of
// ServeStdioEarly (early.go) must answer the same.
func capabilityOptions(listChanged, tasks bool) []mcpgo.ServerOption {
	opts := []mcpgo.ServerOption{
		mcpgo.WithToolCapabilities(listChanged),
		mcpgo.WithElicitation(),
		// Elicitation steps block inside a tools/call until the user
		// answers, so vmcp asks clients of 2025-11-25 and earlier with a
		// server-initiated request; 2026-07-28 clients are asked with
		// input_required results on both transports (mrtr.go). vmcp
		// chooses per request (handler.go), so mcp-go's own refusal of
		// server-initiated requests to 2026-07-28 sessions stays off.
		mcpgo.WithLegacyServerInitiatedRequests(),
	}
	if tasks {
		opts = append(opts,
			mcpgo.WithTaskCapabilities(true, true, true),
			mcpgo.WithExtensions(map[string]any{TasksExtension: map[string]any{}}))
	}
	return opts
}

// newEarlyMCP is the server that answers before the real one is built.
func newEarlyMCP(opts EarlyOptions) *mcpgo.MCPServer {
	if opts.Name == "" {
		opts.Name = "vmcp"
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	return mcpgo.NewMCPServer(opts.Name, opts.Version, capabilityOptions(opts.ListChanged, opts.Tasks)...)
}

// MCP returns the underlying mcp-go server.
func (s *Server) MCP() *mcpgo.MCPServer { return s.mcp }

// ToolNames returns the names of the served tools, sorted.
func (s *Server) ToolNames() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := make([]string, 0, len(s.workflows)+len(s.others))
	for n := range s.workflows {
		names = append(names, n)
	}
	for n := range s.others {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// workflowTool describes a workflow as an MCP tool. The input schema is
// the workflow's normalised parameter schema, raw, because mcp-go's typed
// schema would drop keywords; tools built with mcp.NewTool and a raw
// schema option break tools/list in mcp-go v1.2.1, so NewToolWithRawSchema
// is the only safe constructor.
func workflowTool(wf *ir.Workflow) (mcp.Tool, error) {
	schema := wf.InputSchema
	if schema == nil {
		schema = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	in, err := json.Marshal(schema)
	if err != nil {
		return mcp.Tool{}, fmt.Errorf("workflow %q: input schema: %w", wf.Name, err)
	}
	tool := mcp.NewToolWithRawSchema(wf.Name, wf.Description, in)
	if wf.Output != nil && wf.Output.Schema != nil {
		out, err := json.Marshal(wf.Output.Schema)
		if err != nil {
			return mcp.Tool{}, fmt.Errorf("workflow %q: output schema: %w", wf.Name, err)
		}
		tool.RawOutputSchema = out
	}
	if a := wf.Annotations; a != nil {
		tool.Annotations = mcp.ToolAnnotation{
			Title:           a.Title,
			ReadOnlyHint:    a.ReadOnlyHint,
			DestructiveHint: a.DestructiveHint,
			IdempotentHint:  a.IdempotentHint,
			OpenWorldHint:   a.OpenWorldHint,
		}
		tool.Title = a.Title
	}
	return tool, nil
}

// workflowServerTool is wf's tool and handler; with tasks on, the tool
// says taskSupport "optional".
func (s *Server) workflowServerTool(wf *ir.Workflow) (mcpgo.ServerTool, error) {
	tool, err := workflowTool(wf)
	if err != nil {
		return mcpgo.ServerTool{}, err
	}
	if s.tasks != nil {
		tool.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
	}
	return mcpgo.ServerTool{Tool: tool, Handler: s.workflowHandler(wf)}, nil
}
