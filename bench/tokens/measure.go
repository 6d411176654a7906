package main

// The measurement. For one scenario (a workflow, its backends and the
// arguments of one run) it writes a vmcp.yaml that serves the workflow
// made sequential (sequential.go, so the bytes are the same on every run)
// and whose backends are the real example servers started through the
// recording proxy (proxy.go), starts
// the real `vmcp run` over stdio and speaks JSON-RPC to it as an agent's
// MCP client would: initialize, tools/list, one tools/call of the
// composite tool. Then it reads what crossed the wire:
//
//   - one composite call (per run, vmcp in the middle): the composite
//     tool's definition in vmcp's tools/list answer, the tools/call params
//     the client wrote and the result it read, as vmcp sent them (minus
//     the result's _meta: run id and timeline, for the host, not the
//     model);
//   - the agent in the loop (per run, no vmcp): the same backend calls made
//     by the agent itself. Its context holds every backend's tool list (the
//     tools arrays of the backends' tools/list answers), each tools/call
//     request it would write (the params vmcp sent, minus the _meta
//     progress token an agent does not send) and each result it reads (the
//     backends' results, byte for byte from the proxy's record);
//   - the design loop (once): the resources/read answers for the guide and
//     the schema (authoring/guide), the vmcp_backend_tools call and answer
//     (the backends' tools, compact: backend, name, ref, description,
//     input schema), the draft sent to vmcp_workflow_check and its answer
//     (ok, no diagnostics, the plan's levels, critical path and stats, from
//     the real compiler against the recorded tools), and the
//     vmcp_workflow_save call and answer. These are built here in the wire
//     shape of the authoring tools (design.md "Agents author workflows";
//     the author branch serves them), not read from a server.
//
// Every count is a byte count of JSON (or markdown) text; tokens are
// bytes / 4, rounded up, the rule of thumb for English and JSON with
// common tokenizers. The agent's own reasoning tokens are not measured:
// no model runs here.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/authoring/guide"
	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Backend is one backend of a scenario: its name in vmcp.yaml and its
// command line.
type Backend struct {
	Name string
	Args []string // the program and its arguments
}

// Scenario is one workflow measured with one run.
type Scenario struct {
	Label     string // the row's name in the table
	Workflow  string // the workflow file, absolute
	Tool      string // the composite tool's name
	Arguments map[string]any
	Backends  []Backend
}

// Counts are the bytes of one scenario.
type Counts struct {
	Calls int // backend tool calls in one run

	// The agent in the loop, per run.
	ToolList, Requests, Results int

	// One composite call, per run.
	Definition, CallRequest, CallResult int

	// The design loop, once.
	Guide, Schema, BackendTools, Check, CheckAnswer, Save, SaveAnswer int
}

// Loop is the bytes per run with the agent in the loop.
func (c Counts) Loop() int { return c.ToolList + c.Requests + c.Results }

// Composite is the bytes per run through one composite call.
func (c Counts) Composite() int { return c.Definition + c.CallRequest + c.CallResult }

// Design is the bytes of the design loop, once.
func (c Counts) Design() int {
	return c.Guide + c.Schema + c.BackendTools + c.Check + c.CheckAnswer + c.Save + c.SaveAnswer
}

// Tokens converts bytes to tokens: 4 bytes a token, rounded up.
func Tokens(bytes int) int { return (bytes + 3) / 4 }

// Measure runs sc once through vmcp (the binary at vmcpBin, its backends
// started through proxy, the path of this program) and counts its bytes.
// dir receives the config and the records.
func Measure(ctx context.Context, sc Scenario, vmcpBin, proxy, dir string) (Counts, error) {
	cfg, err := writeConfig(sc, proxy, dir)
	if err != nil {
		return Counts{}, err
	}
	sess, err := session(ctx, vmcpBin, cfg, sc)
	if err != nil {
		return Counts{}, fmt.Errorf("%s: %w", sc.Label, err)
	}
	var c Counts
	c.Definition, c.CallRequest, c.CallResult = len(sess.definition), len(sess.request), len(sess.result)
	cat := catalog.New()
	for _, be := range sc.Backends {
		traffic, err := readRecord(filepath.Join(dir, be.Name+".rec"))
		if err != nil {
			return Counts{}, fmt.Errorf("%s: backend %s: %w", sc.Label, be.Name, err)
		}
		c.ToolList += len(traffic.tools)
		c.Calls += len(traffic.requests)
		for _, r := range traffic.requests {
			c.Requests += len(r)
		}
		for _, r := range traffic.results {
			c.Results += len(r)
		}
		var tools []*catalog.Tool
		if err := json.Unmarshal(traffic.tools, &tools); err != nil {
			return Counts{}, fmt.Errorf("%s: backend %s: tools/list: %w", sc.Label, be.Name, err)
		}
		cat.Backends[be.Name] = &catalog.Backend{Tools: tools}
	}
	if err := design(&c, sc, cat); err != nil {
		return Counts{}, fmt.Errorf("%s: %w", sc.Label, err)
	}
	return c, nil
}

// writeConfig writes dir/vmcp.yaml: sc's workflow made sequential
// (sequential.go) as dir/workflow.json, and each backend started through
// the proxy with its own record file.
func writeConfig(sc Scenario, proxy, dir string) (string, error) {
	src, err := os.ReadFile(sc.Workflow)
	if err != nil {
		return "", err
	}
	seq, err := Sequential(src)
	if err != nil {
		return "", fmt.Errorf("%s: %w", sc.Workflow, err)
	}
	wfPath := filepath.Join(dir, "workflow.json")
	if err := os.WriteFile(wfPath, seq, 0o644); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("backends:\n")
	for _, be := range sc.Backends {
		rec := filepath.Join(dir, be.Name+".rec")
		if err := os.WriteFile(rec, nil, 0o644); err != nil {
			return "", err
		}
		args, _ := json.Marshal(be.Args)
		fmt.Fprintf(&b, "  %s: {command: %q, args: %s, env: {%s: %q}, maxParallel: 1}\n", be.Name, proxy, args, RecordEnv, rec)
	}
	fmt.Fprintf(&b, "workflows: [%q]\nserver: {transport: stdio, maxParallel: 1}\n", wfPath)
	path := filepath.Join(dir, "vmcp.yaml")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

// sessionBytes are the client's side of one composite call.
type sessionBytes struct {
	definition, request, result []byte
}

// session starts `vmcp run`, lists its tools and calls sc.Tool once.
func session(ctx context.Context, vmcpBin, cfg string, sc Scenario) (sessionBytes, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, vmcpBin, "run", "--config", cfg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return sessionBytes{}, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return sessionBytes{}, err
	}
	if err := cmd.Start(); err != nil {
		return sessionBytes{}, err
	}
	defer func() {
		in.Close()
		cmd.Wait()
	}()
	r := bufio.NewReaderSize(out, 1<<20)
	fail := func(err error) (sessionBytes, error) {
		return sessionBytes{}, fmt.Errorf("%w\nvmcp stderr:\n%s", err, stderr.String())
	}
	send := func(msg string) error {
		_, err := io.WriteString(in, msg+"\n")
		return err
	}
	if err := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench-tokens","version":"1"}}}`); err != nil {
		return fail(err)
	}
	if _, err := reply(r, 1); err != nil {
		return fail(err)
	}
	if err := send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return fail(err)
	}
	if err := send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); err != nil {
		return fail(err)
	}
	list, err := reply(r, 2)
	if err != nil {
		return fail(err)
	}
	var s sessionBytes
	var tools struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(list, &tools); err != nil {
		return fail(fmt.Errorf("tools/list: %w", err))
	}
	for _, t := range tools.Tools {
		var named struct{ Name string }
		if json.Unmarshal(t, &named) == nil && named.Name == sc.Tool {
			s.definition = t
		}
	}
	if s.definition == nil {
		return fail(fmt.Errorf("vmcp does not serve %s", sc.Tool))
	}
	s.request, err = json.Marshal(map[string]any{"name": sc.Tool, "arguments": sc.Arguments})
	if err != nil {
		return fail(err)
	}
	if err := send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":` + string(s.request) + `}`); err != nil {
		return fail(err)
	}
	if s.result, err = reply(r, 3); err != nil {
		return fail(err)
	}
	if s.result, err = withoutMeta(s.result); err != nil {
		return fail(err)
	}
	var res struct {
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(s.result, &res); err != nil || res.IsError {
		return fail(fmt.Errorf("%s failed: %s", sc.Tool, s.result))
	}
	return s, nil
}

// message is the part of a JSON-RPC message the measurement reads.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// reply reads messages until the response with id, skipping
// notifications, and returns its result as sent.
func reply(r *bufio.Reader, id int) (json.RawMessage, error) {
	want := fmt.Sprint(id)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("waiting for the answer to request %d: %w", id, err)
		}
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			return nil, fmt.Errorf("vmcp wrote a line that is not JSON-RPC: %q", line)
		}
		if m.Method != "" || string(m.ID) != want {
			continue
		}
		if m.Error != nil {
			return nil, fmt.Errorf("request %d failed: %s", id, m.Error)
		}
		return m.Result, nil
	}
}

// traffic is what one backend's record holds.
type traffic struct {
	tools    json.RawMessage   // the tools array of its tools/list answer
	requests []json.RawMessage // tools/call params, without _meta
	results  []json.RawMessage // tools/call results, in request order
}

// readRecord parses a proxy record.
func readRecord(path string) (traffic, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return traffic{}, err
	}
	var t traffic
	pending := map[string]string{} // request id -> method
	var order []string             // tools/call ids in request order
	results := map[string]json.RawMessage{}
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		if len(line) < 2 {
			continue
		}
		var m message
		if err := json.Unmarshal(line[2:], &m); err != nil {
			return traffic{}, fmt.Errorf("record line is not JSON-RPC: %q", line)
		}
		switch line[0] {
		case toBackend:
			if m.Method == "" || m.ID == nil {
				continue
			}
			pending[string(m.ID)] = m.Method
			if m.Method == "tools/call" {
				params, err := withoutMeta(m.Params)
				if err != nil {
					return traffic{}, err
				}
				t.requests = append(t.requests, params)
				order = append(order, string(m.ID))
			}
		case fromBackend:
			if m.Method != "" || m.ID == nil {
				continue
			}
			switch pending[string(m.ID)] {
			case "tools/list":
				var list struct {
					Tools json.RawMessage `json:"tools"`
				}
				if err := json.Unmarshal(m.Result, &list); err != nil {
					return traffic{}, err
				}
				t.tools = list.Tools
			case "tools/call":
				if m.Error != nil {
					return traffic{}, fmt.Errorf("tools/call %s failed: %s", m.ID, m.Error)
				}
				results[string(m.ID)] = m.Result
			}
		}
	}
	if t.tools == nil {
		return traffic{}, errors.New("the record has no tools/list answer")
	}
	for _, id := range order {
		res, ok := results[id]
		if !ok {
			return traffic{}, fmt.Errorf("tools/call %s has no answer in the record", id)
		}
		t.results = append(t.results, res)
	}
	return t, nil
}

// withoutMeta drops the _meta of a message's params or result. In a
// tools/call request it is the progress token vmcp adds, which an agent
// calling the tool itself does not write; in vmcp's result it is the run
// id, status and step timeline, which MCP hosts keep out of the model's
// context (and whose millisecond times differ from run to run).
func withoutMeta(params json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(params, &m); err != nil {
		return nil, err
	}
	delete(m, "_meta")
	return json.Marshal(m)
}

// design counts the design loop once for sc, against the tools the
// backends listed. Each exchange is counted as it travels: the request's
// params and the MCP result, built with mcp-go's types in the shape vmcp's
// authoring tools answer (a JSON object as structuredContent and the same
// JSON as text, as every vmcp tool result has).
func design(c *Counts, sc Scenario, cat *catalog.Catalog) error {
	src, err := os.ReadFile(sc.Workflow)
	if err != nil {
		return err
	}
	var errs []error
	size := func(v any) int {
		b, err := json.Marshal(v)
		errs = append(errs, err)
		return len(b)
	}
	call := func(tool string, args map[string]any) int {
		return size(map[string]any{"name": tool, "arguments": args})
	}
	answer := func(v any) int {
		text, err := runtime.MarshalJSON(v)
		errs = append(errs, err)
		return size(&mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(text))}, StructuredContent: v})
	}
	resource := func(uri, mime, text string) int {
		return size(map[string]any{"uri": uri}) + size(&mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
			mcp.TextResourceContents{URI: uri, MIMEType: mime, Text: text}}})
	}

	c.Guide = resource(guide.DocsURI, guide.DocsMIME, guide.Markdown())
	c.Schema = resource(guide.SchemaURI, guide.SchemaMIME, string(guide.Schema()))

	// vmcp_backend_tools {}: every backend's tools, compact.
	type tool struct {
		Backend     string         `json:"backend"`
		Name        string         `json:"name"`
		Ref         string         `json:"ref"`
		Description string         `json:"description,omitempty"`
		InputSchema map[string]any `json:"inputSchema"`
	}
	var listing []tool
	for _, be := range cat.BackendNames() {
		for _, t := range cat.Backends[be].Tools {
			listing = append(listing, tool{be, t.Name, be + "." + t.Name, t.Description, t.InputSchema})
		}
	}
	c.BackendTools = call(guide.ToolBackendTools, map[string]any{}) +
		answer(map[string]any{"tools": listing, "count": len(listing)})

	// vmcp_workflow_check {source}: the draft, and the compiler's verdict
	// with the plan's levels and critical path as step ids.
	plan, diags := compiler.Compile([]compiler.Source{{Name: filepath.Base(sc.Workflow), Src: src}}, compiler.Options{Tools: cat})
	if diags.HasErrors() {
		return fmt.Errorf("the draft does not compile against the backends' tools: %v", diags)
	}
	var summary map[string]any
	for _, w := range plan.Workflows {
		if w.Name != sc.Tool {
			continue
		}
		ids := func(idx []int) []string {
			out := make([]string, len(idx))
			for i, x := range idx {
				out[i] = w.Steps[x].ID
			}
			return out
		}
		levels := make([][]string, len(w.Levels))
		for i, l := range w.Levels {
			levels[i] = ids(l)
		}
		summary = map[string]any{"levels": levels, "critical_path": ids(w.CriticalPath), "stats": w.Stats}
	}
	draft := map[string]any{"source": string(src)}
	c.Check = call(guide.ToolCheck, draft)
	c.CheckAnswer = answer(map[string]any{"ok": true, "name": sc.Tool, "diagnostics": []any{}, "plan": summary})

	// vmcp_workflow_save {source}: the draft again, and {name, version}.
	c.Save = call(guide.ToolSave, draft)
	c.SaveAnswer = answer(map[string]any{"name": sc.Tool, "version": 1})
	return errors.Join(errs...)
}
