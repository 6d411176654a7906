package authoring

// The MCP tools. Each takes a JSON object and returns one as
// structuredContent. The text content depends on the caller's protocol
// revision (resultContent): structuredContent came with 2025-06-18, whose
// spec asks for the serialized JSON in a text block "for backwards
// compatibility", so a client that negotiated an older revision (or whose
// revision is unknown) gets the whole JSON as text as well; a client on
// 2025-06-18 or later reads structuredContent, and its text is a short
// summary, so it does not pay for every answer twice. A problem the caller
// can fix (a draft with errors, a name that exists, a missing scope) is an
// isError result that says how to fix it, with the diagnostics as
// structured content, never a protocol error.

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
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/authoring/guide"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/mcpserver"
	"github.com/vmcp-dev/vmcp/runtime"
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
func Tools(svc *Service, srv *mcpserver.Server) []mcpgo.ServerTool {
	h := &handlers{svc: svc, srv: srv}
	def := func(name, desc, schema string, fn func(context.Context, mcp.CallToolRequest, map[string]any) *mcp.CallToolResult, readOnly bool) mcpgo.ServerTool {
		tool := mcp.NewToolWithRawSchema(name, desc, json.RawMessage(schema))
		tool.Annotations = mcp.ToolAnnotation{ReadOnlyHint: mcp.ToBoolPtr(readOnly), DestructiveHint: mcp.ToBoolPtr(false), OpenWorldHint: mcp.ToBoolPtr(false)}
		return mcpgo.ServerTool{Tool: tool, Handler: h.wrap(name, fn)}
	}
	return []mcpgo.ServerTool{
		def(guide.ToolBackendTools, "List the backends' tools that workflows may call, with their input schemas: the names and arguments to write in a workflow's steps (tool: backend.tool).",
			`{"type":"object","properties":{"backend":{"type":"string","description":"only this backend's tools"},"query":{"type":"string","description":"only tools whose name or description contains this text (any case)"}}}`,
			h.backendTools, true),
		def(guide.ToolCheck, "Compile a workflow draft (YAML or JSON) against the live backend tools and return every diagnostic with line, column, YAML path and a fix, and the plan (levels, critical path). Nothing is stored.",
			`{"type":"object","properties":{"source":{"type":"string","description":"the workflow, YAML or JSON"}},"required":["source"]}`,
			h.check, true),
		def(guide.ToolSave, "Save a workflow that compiles as a new version and serve it as a tool at once (clients get notifications/tools/list_changed). Returns {name, version}. A draft with errors is refused with the same diagnostics as vmcp_workflow_check.",
			`{"type":"object","properties":{"source":{"type":"string","description":"the workflow, YAML or JSON"},"replace":{"type":"boolean","description":"true to save a new version of a workflow that exists (default false: an existing name is refused)"}},"required":["source"]}`,
			h.save, false),
		def(guide.ToolRun, runDescription,
			`{"type":"object","properties":{"source":{"type":"string","description":"a draft to check and run once, YAML or JSON"},"name":{"type":"string","description":"a served workflow to run (instead of source)"},"arguments":{"type":"object","description":"the workflow's parameters"},"full":{"type":"boolean","description":"true for whole outputs instead of samples (default false)"}}}`,
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

// runDescription is vmcp_workflow_run's description; it states the sample
// rules of sample.go.
var runDescription = fmt.Sprintf("Run a workflow once: a draft given as source (checked first, never saved; the run is recorded as a draft) or a served workflow by name. "+
	"Returns a report: the run's status and error, and per step its status, attempts, duration, error, a loop's iteration counts and first failed iterations, the size of its output in JSON bytes, and the output. "+
	"Outputs (the workflow's and each step's) are samples unless full is true: arrays keep their first %d items, strings their first %d characters, objects their first %d keys, nesting %d levels and %d values in all, each cut saying how much there was.",
	SampleItems, SampleChars, SampleKeys, SampleDepth, SampleValues)

type handlers struct {
	svc *Service
	srv *mcpserver.Server
}

// wrap checks the scope (a second line behind the HTTP check) and the
// arguments' shape, then calls fn.
func (h *handlers) wrap(name string, fn func(context.Context, mcp.CallToolRequest, map[string]any) *mcp.CallToolResult) mcpgo.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if h.srv != nil {
			if sc, ok := h.srv.CallAllowed(ctx, name); !ok {
				return mcp.NewToolResultError(httpsafe.ForbiddenMessage(sc, "calling "+name)), nil
			}
		}
		args, err := mcpserver.CallArguments(req)
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

// readsStructured reports whether the caller's protocol revision has
// structuredContent: 2025-06-18 or later (revisions are dates, so they
// compare as strings). An unknown revision counts as older.
func readsStructured(ctx context.Context) bool {
	v := mcpgo.RequestProtocolVersion(ctx)
	return v != "" && v >= mcp.ProtocolVersion20250618
}

// resultContent is the text content of a result whose structuredContent is
// v (see the top of the file): summary for a client that reads
// structuredContent, summary and then the JSON of v for any other.
func resultContent(ctx context.Context, summary string, v any) ([]mcp.Content, error) {
	content := []mcp.Content{}
	if summary != "" {
		content = append(content, mcp.NewTextContent(summary))
	}
	if readsStructured(ctx) {
		return content, nil
	}
	text, err := runtime.MarshalJSON(v)
	if err != nil {
		return nil, err
	}
	return append(content, mcp.NewTextContent(string(text))), nil
}

// jsonResult is a result with v as structuredContent and summary as its
// text (plus the JSON for older clients).
func jsonResult(ctx context.Context, summary string, v any) *mcp.CallToolResult {
	if readsStructured(ctx) && summary == "" {
		summary = "The result is in structuredContent."
	}
	content, err := resultContent(ctx, summary, v)
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("internal error: result is not JSON: %v", err))
	}
	return &mcp.CallToolResult{Content: content, StructuredContent: v}
}

// errorResult is an isError result saying msg, with structured (when not
// nil) as structuredContent.
func errorResult(ctx context.Context, msg string, structured any) *mcp.CallToolResult {
	if structured == nil {
		return mcp.NewToolResultError(msg)
	}
	res := jsonResult(ctx, msg, structured)
	res.IsError = true
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
	// OutputSchema is the schema of the tool's structured output, when the
	// backend declares one: the fields .steps.ID.output has.
	OutputSchema map[string]any `json:"outputSchema,omitempty"`
}

// maxToolDescription keeps vmcp_backend_tools compact.
const maxToolDescription = 300

func (h *handlers) backendTools(ctx context.Context, _ mcp.CallToolRequest, args map[string]any) *mcp.CallToolResult {
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
			tools = append(tools, BackendTool{Backend: b, Name: t.Name, Ref: b + "." + t.Name, Description: desc, InputSchema: schema, OutputSchema: t.OutputSchema})
		}
	}
	sort.SliceStable(tools, func(i, j int) bool { return tools[i].Ref < tools[j].Ref })
	refs := make([]string, len(tools))
	for i, t := range tools {
		refs[i] = t.Ref
	}
	summary := fmt.Sprintf("%d tools: %s. Their input (and declared output) schemas are in structuredContent.", len(tools), strings.Join(refs, ", "))
	return jsonResult(ctx, summary, map[string]any{"tools": tools, "count": len(tools)})
}

func (h *handlers) check(ctx context.Context, _ mcp.CallToolRequest, args map[string]any) *mcp.CallToolResult {
	source, problem := stringArg(args, "source", true)
	if problem != "" {
		return mcp.NewToolResultError(problem)
	}
	r := checkResult(h.svc.Check(source))
	return jsonResult(ctx, r.summary(), r)
}

// maxSummaryDiagnostics is how many diagnostics a summary lists.
const maxSummaryDiagnostics = 5

// summary is the check in a few lines: whether it compiles, the plan's
// size, and the first diagnostics as line:col severity code: message.
func (r CheckResult) summary() string {
	var b strings.Builder
	if r.OK {
		fmt.Fprintf(&b, "ok: %s compiles", r.Name)
		if r.Plan != nil {
			fmt.Fprintf(&b, " (%d steps in %d levels, critical path %s)", r.Plan.Stats.TotalSteps, r.Plan.Stats.TotalLevels, strings.Join(r.Plan.CriticalPath, " -> "))
		}
	} else {
		b.WriteString("not ok")
	}
	fmt.Fprintf(&b, "; %d diagnostic(s)", len(r.Diagnostics))
	for i, d := range r.Diagnostics {
		if i == maxSummaryDiagnostics {
			fmt.Fprintf(&b, "\n... and %d more", len(r.Diagnostics)-i)
			break
		}
		fmt.Fprintf(&b, "\n%d:%d %s %s: %s", d.Line, d.Col, d.Severity, d.Code, d.Message)
	}
	b.WriteString("\nDetails (paths, fixes, the plan) are in structuredContent.")
	return b.String()
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
	replace, problem := boolArg(args, "replace")
	if problem != "" {
		return mcp.NewToolResultError(problem)
	}
	v, ch, err := h.svc.Save(ctx, source, replace)
	switch {
	case errors.Is(err, ErrInvalid):
		n := len(ch.Diagnostics.Errors())
		r := checkResult(ch)
		return errorResult(ctx, fmt.Sprintf("the draft has %d error(s); nothing was saved: fix them (see diagnostics) and save again\n%s", n, r.summary()), r)
	case err != nil:
		return errorResult(ctx, err.Error(), nil)
	}
	res := SaveResult{Name: v.Name, Version: v.Version}
	if len(ch.Diagnostics) > 0 {
		res.Diagnostics = Diagnostics(ch.Diagnostics)
	}
	return jsonResult(ctx, fmt.Sprintf("saved %s version %d (%d warning(s)); it is served as the tool %s.", v.Name, v.Version, len(res.Diagnostics), v.Name), res)
}

func (h *handlers) run(ctx context.Context, req mcp.CallToolRequest, args map[string]any) *mcp.CallToolResult {
	source, p1 := stringArg(args, "source", false)
	name, p2 := stringArg(args, "name", false)
	if p1 != "" || p2 != "" {
		return mcp.NewToolResultError(p1 + p2)
	}
	full, problem := boolArg(args, "full")
	if problem != "" {
		return mcp.NewToolResultError(problem)
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
		return h.report(ctx, req, wf, params, false, full)
	}
	ch := h.svc.Check(source)
	if !ch.OK() {
		r := checkResult(ch)
		return errorResult(ctx, fmt.Sprintf("the draft has %d error(s); it was not run: fix them (see diagnostics)\n%s", len(ch.Diagnostics.Errors()), r.summary()), r)
	}
	for _, callee := range ch.Callees {
		if sc, ok := h.srv.CallAllowed(ctx, callee); !ok {
			return mcp.NewToolResultError(httpsafe.ForbiddenMessage(sc, "running workflow "+callee+" from a draft"))
		}
	}
	wf := ch.Workflow
	sum := sha256.Sum256([]byte(source))
	wf.Version = "draft-" + hex.EncodeToString(sum[:6])
	return h.report(ctx, req, wf, params, true, full)
}

// report runs wf once and returns its RunReport: an isError result when
// the run did not complete, with the same _meta as a workflow tool's
// result (run id, status, timeline, version, draft).
func (h *handlers) report(ctx context.Context, req mcp.CallToolRequest, wf *ir.Workflow, params map[string]any, draft, full bool) *mcp.CallToolResult {
	run, refused := h.srv.RunWorkflow(ctx, req, wf, params, draft)
	if refused != nil {
		return refused
	}
	rep := Report(run, full)
	res := jsonResult(ctx, rep.Summary(), rep)
	res.IsError = run.Status != runtime.RunCompleted
	res.Meta = mcpserver.RunMeta(run)
	return res
}

// boolArg reads an optional boolean argument (false when absent).
func boolArg(args map[string]any, key string) (bool, string) {
	v, ok := args[key]
	if !ok || v == nil {
		return false, ""
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, fmt.Sprintf("the %s argument must be true or false", key)
	}
	return b, ""
}

func (h *handlers) list(ctx context.Context, _ mcp.CallToolRequest, _ map[string]any) *mcp.CallToolResult {
	list := h.svc.List()
	names := make([]string, len(list))
	for i, e := range list {
		names[i] = fmt.Sprintf("%s (%s %s)", e.Name, e.Origin, e.Version)
	}
	return jsonResult(ctx, fmt.Sprintf("%d workflows: %s.", len(list), strings.Join(names, ", ")), map[string]any{"workflows": list})
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
	return jsonResult(ctx, fmt.Sprintf("%s version %d, %d bytes of source (structuredContent.source).", v.Name, v.Version, len(v.Source)), v)
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
	return jsonResult(ctx, fmt.Sprintf("deleted %s; its versions (the last %d) are kept.", v.Name, v.Version), map[string]any{"name": v.Name, "version": v.Version, "deleted": true})
}
