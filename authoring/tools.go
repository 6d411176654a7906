package authoring

// The MCP tools. Each takes and returns JSON objects (structuredContent,
// and the same JSON as text). A problem the caller can fix (a draft with
// errors, a name that exists, a missing scope) is an isError result that
// says how to fix it, with the diagnostics as structured content, never a
// protocol error.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/authoring/guide"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/runtime/httpsafe"
	"github.com/vmcp-dev/vmcp/runtime/server"
)

// ToolNames are the authoring tools, in the order they are listed.
var ToolNames = []string{guide.ToolBackendTools, guide.ToolCheck, guide.ToolSave, guide.ToolRun, guide.ToolList, guide.ToolGet, guide.ToolDelete}

// Diagnostic is a diagnostic as the tools return it.
type Diagnostic struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Line     int    `json:"line"`
	Col      int    `json:"col"`
	Path     string `json:"path,omitempty"`
	Message  string `json:"message"`
	Detail   string `json:"detail,omitempty"`
}

// Diagnostics shapes a diagnostic list for the tools, in order.
func Diagnostics(l diag.List) []Diagnostic {
	out := make([]Diagnostic, 0, len(l))
	for _, d := range l {
		out = append(out, Diagnostic{Severity: d.Severity.String(), Code: d.Code, Line: d.Pos.Line, Col: d.Pos.Col,
			Path: d.Path, Message: d.Message, Detail: strings.Join(d.Detail, "\n")})
	}
	return out
}

// PlanSummary is a compiled workflow's shape: its levels and critical
// path as step ids, and its statistics.
type PlanSummary struct {
	Levels       [][]string `json:"levels"`
	CriticalPath []string   `json:"critical_path"`
	Stats        ir.Stats   `json:"stats"`
}

// Summary returns wf's PlanSummary.
func Summary(wf *ir.Workflow) *PlanSummary {
	id := func(i int) string { return wf.Steps[i].ID }
	p := &PlanSummary{Levels: [][]string{}, CriticalPath: []string{}, Stats: wf.Stats}
	for _, level := range wf.Levels {
		ids := make([]string, len(level))
		for j, i := range level {
			ids[j] = id(i)
		}
		p.Levels = append(p.Levels, ids)
	}
	for _, i := range wf.CriticalPath {
		p.CriticalPath = append(p.CriticalPath, id(i))
	}
	return p
}

// CheckResult is vmcp_workflow_check's result.
type CheckResult struct {
	OK          bool         `json:"ok"`
	Name        string       `json:"name,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
	Plan        *PlanSummary `json:"plan,omitempty"`
}

func checkResult(ch *Checked) CheckResult {
	r := CheckResult{OK: ch.OK(), Name: ch.Name, Diagnostics: Diagnostics(ch.Diagnostics)}
	if ch.OK() {
		r.Plan = Summary(ch.Workflow)
	}
	return r
}

// Tools returns the authoring tools, their handlers running on svc and,
// for vmcp_workflow_run, on srv.
func Tools(svc *Service, srv *server.Server) []mcpserver.ServerTool {
	h := &handlers{svc: svc, srv: srv}
	def := func(name, desc, schema string, fn func(context.Context, mcp.CallToolRequest, map[string]any) *mcp.CallToolResult, readOnly bool) mcpserver.ServerTool {
		tool := mcp.NewToolWithRawSchema(name, desc, json.RawMessage(schema))
		tool.Annotations = mcp.ToolAnnotation{ReadOnlyHint: mcp.ToBoolPtr(readOnly), DestructiveHint: mcp.ToBoolPtr(false), OpenWorldHint: mcp.ToBoolPtr(false)}
		return mcpserver.ServerTool{Tool: tool, Handler: h.wrap(name, fn)}
	}
	return []mcpserver.ServerTool{
		def(guide.ToolBackendTools, "List the backends' tools that workflows may call, with their input schemas: the names and arguments to write in a workflow's steps (tool: backend.tool).",
			`{"type":"object","properties":{"backend":{"type":"string","description":"only this backend's tools"},"query":{"type":"string","description":"only tools whose name or description contains this text (any case)"}}}`,
			h.backendTools, true),
		def(guide.ToolCheck, "Compile a workflow draft (YAML or JSON) against the live backend tools and return every diagnostic with line, column, YAML path and a fix, and the plan (levels, critical path). Nothing is stored.",
			`{"type":"object","properties":{"source":{"type":"string","description":"the workflow, YAML or JSON"}},"required":["source"]}`,
			h.check, true),
		def(guide.ToolSave, "Save a workflow that compiles as a new version and serve it as a tool at once (clients get notifications/tools/list_changed). Returns {name, version}. A draft with errors is refused with the same diagnostics as vmcp_workflow_check.",
			`{"type":"object","properties":{"source":{"type":"string","description":"the workflow, YAML or JSON"},"replace":{"type":"boolean","description":"true to save a new version of a workflow that exists (default false: an existing name is refused)"}},"required":["source"]}`,
			h.save, false),
		def(guide.ToolRun, "Run a workflow once: a draft given as source (checked first, never saved; the run is recorded as a draft) or a served workflow by name.",
			`{"type":"object","properties":{"source":{"type":"string","description":"a draft to check and run once, YAML or JSON"},"name":{"type":"string","description":"a served workflow to run (instead of source)"},"arguments":{"type":"object","description":"the workflow's parameters"}}}`,
			h.run, false),
		def(guide.ToolList, "List the served workflows with their versions and origin (authored, or files).",
			`{"type":"object","properties":{}}`, h.list, true),
		def(guide.ToolGet, "Return the source of an authored workflow: the current version, or the version asked for.",
			`{"type":"object","properties":{"name":{"type":"string"},"version":{"type":"integer","minimum":1,"description":"a version number (default: the current one)"}},"required":["name"]}`,
			h.get, true),
		def(guide.ToolDelete, "Stop serving an authored workflow (clients get notifications/tools/list_changed). Its versions are kept; saving the name again starts the next version.",
			`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`,
			h.delete, false),
	}
}

type handlers struct {
	svc *Service
	srv *server.Server
}

// wrap checks the scope (a second line behind the HTTP check) and the
// arguments' shape, then calls fn.
func (h *handlers) wrap(name string, fn func(context.Context, mcp.CallToolRequest, map[string]any) *mcp.CallToolResult) mcpserver.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if h.srv != nil {
			if sc, ok := h.srv.CallAllowed(ctx, name); !ok {
				return mcp.NewToolResultError(httpsafe.ForbiddenMessage(sc, "calling "+name)), nil
			}
		}
		args, err := server.CallArguments(req)
		if err != nil {
			return mcp.NewToolResultError(fmt.Sprintf("invalid arguments for %s: %v", name, err)), nil
		}
		res := fn(ctx, req, args)
		if h.srv != nil && (name == guide.ToolSave || name == guide.ToolDelete) && !res.IsError {
			// The caller's list_changed must leave before the result.
			h.srv.AwaitNotifications(ctx)
		}
		return res, nil
	}
}

func jsonResult(v any) *mcp.CallToolResult {
	text, err := runtime.MarshalJSON(v)
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("internal error: result is not JSON: %v", err))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(text))}, StructuredContent: v}
}

func errorResult(msg string, structured any) *mcp.CallToolResult {
	res := mcp.NewToolResultError(msg)
	if structured != nil {
		if text, err := runtime.MarshalJSON(structured); err == nil {
			res.Content = append(res.Content, mcp.NewTextContent(string(text)))
			res.StructuredContent = structured
		}
	}
	return res
}

func stringArg(args map[string]any, key string, required bool) (string, string) {
	v, ok := args[key]
	if !ok || v == nil {
		if required {
			return "", fmt.Sprintf("the %s argument is required", key)
		}
		return "", ""
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Sprintf("the %s argument must be a string", key)
	}
	return s, ""
}

// BackendTool is one entry of vmcp_backend_tools.
type BackendTool struct {
	Backend     string         `json:"backend"`
	Name        string         `json:"name"`
	Ref         string         `json:"ref"` // what a step's tool: field says
	Description string         `json:"description,omitempty"`
	InputSchema map[string]any `json:"inputSchema"`
}

// maxToolDescription keeps vmcp_backend_tools compact.
const maxToolDescription = 300

func (h *handlers) backendTools(_ context.Context, _ mcp.CallToolRequest, args map[string]any) *mcp.CallToolResult {
	backend, problem := stringArg(args, "backend", false)
	query, problem2 := stringArg(args, "query", false)
	if problem != "" || problem2 != "" {
		return mcp.NewToolResultError(problem + problem2)
	}
	cat := h.svc.opts.Compiler.allowedCatalog()
	names := cat.BackendNames()
	if backend != "" && cat.Backends[backend] == nil {
		return mcp.NewToolResultError(fmt.Sprintf("no backend %q that workflows may call; the backends are %s", backend, strings.Join(names, ", ")))
	}
	q := strings.ToLower(query)
	tools := []BackendTool{}
	for _, b := range names {
		if backend != "" && b != backend {
			continue
		}
		for _, t := range cat.Backends[b].Tools {
			if q != "" && !strings.Contains(strings.ToLower(t.Name), q) && !strings.Contains(strings.ToLower(t.Description), q) {
				continue
			}
			desc := t.Description
			if len(desc) > maxToolDescription {
				desc = strings.TrimSpace(desc[:maxToolDescription]) + "..."
			}
			schema := t.InputSchema
			if schema == nil {
				schema = map[string]any{"type": "object"}
			}
			tools = append(tools, BackendTool{Backend: b, Name: t.Name, Ref: b + "." + t.Name, Description: desc, InputSchema: schema})
		}
	}
	sort.SliceStable(tools, func(i, j int) bool { return tools[i].Ref < tools[j].Ref })
	return jsonResult(map[string]any{"tools": tools, "count": len(tools)})
}

func (h *handlers) check(_ context.Context, _ mcp.CallToolRequest, args map[string]any) *mcp.CallToolResult {
	source, problem := stringArg(args, "source", true)
	if problem != "" {
		return mcp.NewToolResultError(problem)
	}
	return jsonResult(checkResult(h.svc.Check(source)))
}

// SaveResult is vmcp_workflow_save's result.
type SaveResult struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
	// Diagnostics are the draft's warnings, when it has any.
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
}

func (h *handlers) save(ctx context.Context, _ mcp.CallToolRequest, args map[string]any) *mcp.CallToolResult {
	source, problem := stringArg(args, "source", true)
	if problem != "" {
		return mcp.NewToolResultError(problem)
	}
	replace := false
	if v, ok := args["replace"]; ok && v != nil {
		b, isBool := v.(bool)
		if !isBool {
			return mcp.NewToolResultError("the replace argument must be true or false")
		}
		replace = b
	}
	v, ch, err := h.svc.Save(ctx, source, replace)
	switch {
	case errors.Is(err, ErrInvalid):
		n := len(ch.Diagnostics.Errors())
		return errorResult(fmt.Sprintf("the draft has %d error(s); nothing was saved: fix them (see diagnostics) and save again", n), checkResult(ch))
	case err != nil:
		return errorResult(err.Error(), nil)
	}
	res := SaveResult{Name: v.Name, Version: v.Version}
	if len(ch.Diagnostics) > 0 {
		res.Diagnostics = Diagnostics(ch.Diagnostics)
	}
	return jsonResult(res)
}

func (h *handlers) run(ctx context.Context, req mcp.CallToolRequest, args map[string]any) *mcp.CallToolResult {
	source, p1 := stringArg(args, "source", false)
	name, p2 := stringArg(args, "name", false)
	if p1 != "" || p2 != "" {
		return mcp.NewToolResultError(p1 + p2)
	}
	params := map[string]any{}
	if a, ok := args["arguments"]; ok && a != nil {
		m, isMap := a.(map[string]any)
		if !isMap {
			return mcp.NewToolResultError("the arguments argument must be an object of the workflow's parameters")
		}
		params = m
	}
	switch {
	case (source == "") == (name == ""):
		return mcp.NewToolResultError("give either source (a draft to run once) or name (a served workflow), not both or neither")
	case name != "":
		wf, ok := h.srv.Workflow(name)
		if !ok {
			return mcp.NewToolResultError(fmt.Sprintf("no served workflow %q; vmcp_workflow_list lists them", name))
		}
		if sc, ok := h.srv.CallAllowed(ctx, name); !ok {
			return mcp.NewToolResultError(httpsafe.ForbiddenMessage(sc, "running "+name))
		}
		return h.srv.RunTool(ctx, req, wf, params, false)
	}
	ch := h.svc.Check(source)
	if !ch.OK() {
		return errorResult(fmt.Sprintf("the draft has %d error(s); it was not run: fix them (see diagnostics)", len(ch.Diagnostics.Errors())), checkResult(ch))
	}
	for _, callee := range ch.Callees {
		if sc, ok := h.srv.CallAllowed(ctx, callee); !ok {
			return mcp.NewToolResultError(httpsafe.ForbiddenMessage(sc, "running workflow "+callee+" from a draft"))
		}
	}
	wf := ch.Workflow
	sum := sha256.Sum256([]byte(source))
	wf.Version = "draft-" + hex.EncodeToString(sum[:6])
	return h.srv.RunTool(ctx, req, wf, params, true)
}

func (h *handlers) list(context.Context, mcp.CallToolRequest, map[string]any) *mcp.CallToolResult {
	return jsonResult(map[string]any{"workflows": h.svc.List()})
}

func (h *handlers) get(ctx context.Context, _ mcp.CallToolRequest, args map[string]any) *mcp.CallToolResult {
	name, problem := stringArg(args, "name", true)
	if problem != "" {
		return mcp.NewToolResultError(problem)
	}
	version := 0
	if v, ok := args["version"]; ok && v != nil {
		f, isNum := v.(float64)
		if !isNum || f < 1 || f != float64(int(f)) {
			return mcp.NewToolResultError("the version argument must be a whole number from 1")
		}
		version = int(f)
	}
	v, err := h.svc.Get(ctx, name, version)
	if err != nil {
		return mcp.NewToolResultError(err.Error())
	}
	return jsonResult(v)
}

func (h *handlers) delete(ctx context.Context, _ mcp.CallToolRequest, args map[string]any) *mcp.CallToolResult {
	name, problem := stringArg(args, "name", true)
	if problem != "" {
		return mcp.NewToolResultError(problem)
	}
	v, err := h.svc.Delete(ctx, name)
	if err != nil {
		return mcp.NewToolResultError(err.Error())
	}
	return jsonResult(map[string]any{"name": v.Name, "version": v.Version, "deleted": true})
}
