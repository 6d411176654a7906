package mcpserver

// The two Tasks flavours on the wire (state and rules: tasks.go).
//
// The endpoint (endpoint.go) hands these requests to this file before
// mcp-go sees them, because mcp-go's task support keeps tasks in its own
// per-session map under ids it makes itself, while a vmcp task is a run in
// the run store under the run's id. What vmcp does take from mcp-go is the
// advertising (the tasks capability in initialize, the extension in
// server/discover, taskSupport on each workflow tool) and the types;
// server/discover goes through here only to drop the tasks capability,
// which is the 2025-11-25 flavour's. Requests served here have their
// Mcp-Method and Mcp-Name headers checked here (mcp-go checks the rest).
//
//   - 2025-11-25, on a session: tools/call of a workflow with params.task
//     returns {task}; tasks/get and tasks/cancel return the task; tasks/list
//     the caller's tasks; tasks/result waits for the end and returns the
//     tool result with the related-task _meta. While it waits, a question
//     of the run goes out on the tasks/result response stream as an
//     elicitation/create request tied to the task (related-task _meta), and
//     the client's JSON-RPC response, POSTed as usual, is routed back here
//     by its id.
//   - the extension, on 2026-07-28 requests that declare it in
//     _meta clientCapabilities.extensions: tools/call of a workflow returns
//     a CreateTaskResult (resultType "task"); tasks/get returns the detailed
//     task (inputRequests, result or error inline); tasks/update answers
//     inputRequests; tasks/cancel acknowledges.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/runtime"
)

// TasksExtension is the Tasks extension's identifier.
const TasksExtension = "io.modelcontextprotocol/tasks"

// codeMissingCapability is the JSON-RPC error code for a request that needs
// a client capability the client did not declare.
const codeMissingCapability = -32021

// taskRequest is what the task handlers read of a JSON-RPC request.
type taskRequest struct {
	ID     json.RawMessage `json:"id"` // echoed as sent: a float64 would change big ids
	Method string          `json:"method"`
	Params struct {
		Name           string                     `json:"name"`
		Arguments      json.RawMessage            `json:"arguments"`
		Task           json.RawMessage            `json:"task"`
		TaskID         string                     `json:"taskId"`
		Cursor         string                     `json:"cursor"`
		InputResponses mcp.InputResponses         `json:"inputResponses"`
		Meta           map[string]json.RawMessage `json:"_meta"`
	} `json:"params"`
	// A response to a request vmcp sent (2025-11-25 elicitation).
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// clientCaps is the per-request client capabilities of a 2026-07-28
// request.
type clientCaps struct {
	Extensions  map[string]json.RawMessage `json:"extensions"`
	Elicitation json.RawMessage            `json:"elicitation"`
}

func (r *taskRequest) caps() clientCaps {
	var c clientCaps
	if raw, ok := r.Params.Meta[mcp.MetaKeyClientCapabilities]; ok {
		_ = json.Unmarshal(raw, &c)
	}
	return c
}

func (r *taskRequest) arguments() (map[string]any, error) {
	if len(r.Params.Arguments) == 0 || string(r.Params.Arguments) == "null" {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal(r.Params.Arguments, &v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("arguments must be a JSON object, not %s", jsonKind(v))
	}
	return m, nil
}

// elicitIDPrefix starts the ids of the elicitation requests tasks/result
// streams carry, so their responses are told apart from mcp-go's.
const elicitIDPrefix = "vmcp-task-elicit-"

// pendingAnswer is an elicitation request sent on a tasks/result stream.
type pendingAnswer struct {
	task, key string
}

// declaresElicitation reports whether an initialize request declares the
// elicitation capability.
func declaresElicitation(body []byte) bool {
	var m struct {
		Params struct {
			Capabilities struct {
				Elicitation json.RawMessage `json:"elicitation"`
			} `json:"capabilities"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &m)
	e := m.Params.Capabilities.Elicitation
	return len(e) > 0 && string(e) != "null"
}

// caller is the identity of an HTTP request's client.
func (t *tasks) caller(r *http.Request) httpsafe.Identity {
	return httpsafe.Caller(r.Context())
}

// serveExtension serves a 2026-07-28 request that belongs to the Tasks
// extension and reports whether it did; other requests go on to mcp-go.
func (e *Endpoint) serveExtension(w http.ResponseWriter, r *http.Request, body []byte) bool {
	t := e.s.tasks
	var req taskRequest
	if json.Unmarshal(body, &req) != nil {
		return false
	}
	declared := req.caps().Extensions[TasksExtension] != nil
	ctx := r.Context()
	switch req.Method {
	case string(mcp.MethodServerDiscover):
		e.discover(w, r)
		return true
	case string(mcp.MethodToolsCall):
		wf, ok := e.s.Workflow(req.Params.Name)
		if !ok || !declared {
			return false
		}
		if !checkRoutingHeaders(w, r, &req) {
			return true
		}
		args, err := req.arguments()
		if err != nil {
			writeExtResult(w, e.s, req.ID, toolResultMap(mcp.NewToolResultError(fmt.Sprintf("invalid arguments for %s: %v", wf.Name, err))))
			return true
		}
		lt, err := t.start(ctx, wf, args, t.caller(r), "", req.caps().Elicitation != nil)
		if err != nil {
			writeExtResult(w, e.s, req.ID, toolResultMap(startError(wf, err)))
			return true
		}
		v, err := t.get(ctx, t.caller(r), lt.id, flavourExt)
		if err != nil {
			writeRPCError(w, http.StatusOK, req.ID, mcp.INTERNAL_ERROR, err.Error())
			return true
		}
		res := t.extTask(v, false)
		res["resultType"] = "task"
		writeExtResult(w, e.s, req.ID, res)
		return true
	case "tasks/get", "tasks/update", "tasks/cancel":
	default:
		return false
	}
	if !checkRoutingHeaders(w, r, &req) {
		return true
	}
	if !declared {
		writeMissingExtension(w, req.ID, req.Method)
		return true
	}
	caller := t.caller(r)
	switch req.Method {
	case "tasks/get":
		v, err := t.get(ctx, caller, req.Params.TaskID, flavourExt)
		if err != nil {
			failTask(httpReply{w, req.ID}, "Failed to retrieve task", err)
			return true
		}
		writeExtResult(w, e.s, req.ID, t.extTask(v, true))
	case "tasks/update":
		if _, err := t.get(ctx, caller, req.Params.TaskID, flavourExt); err != nil {
			failTask(httpReply{w, req.ID}, "Failed to update task", err)
			return true
		}
		// Keys that are not outstanding are ignored, as the extension says.
		for key, resp := range req.Params.InputResponses {
			a := answerFromInput(resp, key)
			if !t.answer(req.Params.TaskID, key, a) {
				t.answerElsewhere(req.Params.TaskID, key, a) // a replica on the store runs it
			}
		}
		writeExtResult(w, e.s, req.ID, map[string]any{})
	case "tasks/cancel":
		_, err := t.cancel(ctx, caller, req.Params.TaskID, false)
		var finished errTaskFinished
		if err != nil && !errors.As(err, &finished) {
			failTask(httpReply{w, req.ID}, "Failed to cancel task", err)
			return true
		}
		writeExtResult(w, e.s, req.ID, map[string]any{})
	}
	return true
}

// checkRoutingHeaders checks the Mcp-Method and Mcp-Name headers of a
// request served here (mcp-go checks those of the others): Mcp-Method must
// be the body's method; Mcp-Name the tool's name on tools/call and, as the
// Tasks extension adds, the task id on tasks/*. A missing or different
// header is answered with HTTP 400 and -32020 (header mismatch), as mcp-go
// answers its own, and false is returned. Requests of an older protocol
// version (by the MCP-Protocol-Version header) are not checked, as in
// mcp-go.
func checkRoutingHeaders(w http.ResponseWriter, r *http.Request, req *taskRequest) bool {
	if !mcp.RequiresStandardHeaders(r.Header.Get(mcp.HeaderProtocolVersion)) {
		return true
	}
	name, what := req.Params.TaskID, "params.taskId"
	if req.Method == string(mcp.MethodToolsCall) {
		name, what = req.Params.Name, "params.name"
	}
	var err error
	method, header := r.Header.Get(mcp.HeaderMethod), r.Header.Get(mcp.HeaderName)
	decoded, ok := mcp.DecodeHeaderValue(header)
	switch {
	case method == "":
		err = mcp.HeaderMismatchError{Header: mcp.HeaderMethod, Reason: "missing required header: send the request's method"}
	case method != req.Method:
		err = mcp.HeaderMismatchError{Header: mcp.HeaderMethod, Reason: fmt.Sprintf("header value %q does not match body value %q", method, req.Method)}
	case header == "":
		err = mcp.HeaderMismatchError{Header: mcp.HeaderName, Reason: fmt.Sprintf("missing required header for method %q: send the %s", req.Method, what)}
	case !ok:
		err = mcp.HeaderMismatchError{Header: mcp.HeaderName, Reason: "invalid Base64 encoding"}
	case decoded != name:
		err = mcp.HeaderMismatchError{Header: mcp.HeaderName, Reason: fmt.Sprintf("header value %q does not match %s %q", decoded, what, name)}
	default:
		return true
	}
	writeRPCError(w, http.StatusBadRequest, req.ID, mcp.HEADER_MISMATCH, err.Error())
	return false
}

// discover serves server/discover through mcp-go without its
// capabilities.tasks: that slot is the 2025-11-25 flavour's, negotiated in
// initialize, while a 2026-07-28 client finds tasks under
// capabilities.extensions (the extension replaces the slot there).
func (e *Endpoint) discover(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	e.serve(rec, r)
	out := rec.Body.Bytes()
	var msg map[string]json.RawMessage
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") && json.Unmarshal(out, &msg) == nil {
		var res map[string]json.RawMessage
		if json.Unmarshal(msg["result"], &res) == nil {
			var caps map[string]json.RawMessage
			if json.Unmarshal(res["capabilities"], &caps) == nil && caps["tasks"] != nil {
				delete(caps, "tasks")
				res["capabilities"], _ = json.Marshal(caps)
				msg["result"], _ = json.Marshal(res)
				if b, err := runtime.MarshalJSON(msg); err == nil {
					out = append(b, '\n')
				}
			}
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.Code)
	_, _ = w.Write(out)
}

// answerFromInput decodes one inputResponses entry as an elicitation
// answer.
func answerFromInput(resp mcp.InputResponse, key string) answerOrErr {
	res := resp.Elicitation
	if res == nil {
		raw, err := json.Marshal(resp)
		if err == nil {
			var er mcp.ElicitationResult
			if json.Unmarshal(raw, &er) == nil && er.Action != "" {
				res = &er
			}
		}
	}
	if res == nil {
		return answerOrErr{err: fmt.Errorf("the answer to input request %q is not an elicitation result", key)}
	}
	out, err := convertElicitResult(res)
	return answerOrErr{res: out, err: err}
}

// extTask is the extension's Task (detailed adds inputRequests, result or
// error as tasks/get shows them).
func (t *tasks) extTask(v *taskView, detailed bool) map[string]any {
	m := map[string]any{
		"taskId":         v.run.ID,
		"status":         string(v.state.Status),
		"statusMessage":  v.state.Message,
		"createdAt":      isoTime(v.run.StartedAt),
		"lastUpdatedAt":  isoTime(v.updated),
		"ttlMs":          t.opts.TTL.Milliseconds(),
		"pollIntervalMs": t.opts.PollInterval.Milliseconds(),
	}
	if !detailed {
		return m
	}
	switch {
	case len(v.asks) > 0:
		reqs := map[string]any{}
		for _, q := range v.asks {
			reqs[q.key] = elicitationRequest(q, "")
		}
		m["inputRequests"] = reqs
	case v.run.Status.Finished() && v.state.Status == taskCompleted:
		res := RunResult(v.run)
		res.ResultType = mcp.ResultTypeComplete
		m["result"] = toolResultJSON(res)
	}
	return m
}

// elicitationRequest is a question as an elicitation/create request's
// method and params; taskID, when set, ties it to its task.
func elicitationRequest(q *taskQuestion, taskID string) map[string]any {
	params := map[string]any{"mode": "form", "message": q.req.Message, "requestedSchema": q.req.Schema}
	if taskID != "" {
		params["_meta"] = map[string]any{mcp.RelatedTaskMetaKey: mcp.RelatedTaskMeta(taskID)}
	}
	return map[string]any{"method": string(mcp.MethodElicitationCreate), "params": params}
}

// v1Task is the 2025-11-25 Task.
func (t *tasks) v1Task(v *taskView) mcp.Task {
	ttl := t.opts.TTL.Milliseconds()
	poll := t.opts.PollInterval.Milliseconds()
	return mcp.Task{
		TaskId:        v.run.ID,
		Status:        v.state.Status,
		StatusMessage: v.state.Message,
		CreatedAt:     isoTime(v.run.StartedAt),
		LastUpdatedAt: isoTime(v.updated),
		TTL:           &ttl,
		PollInterval:  &poll,
	}
}

func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// serveV1 serves a 2025-11-25 request of session that belongs to tasks and
// reports whether it did.
func (e *Endpoint) serveV1(w http.ResponseWriter, r *http.Request, session string, body []byte, msg rpcMessage) bool {
	t := e.s.tasks
	if msg.Method == "" {
		id, ok := msg.ID.(string)
		if !ok || !strings.HasPrefix(id, elicitIDPrefix) {
			return false
		}
		var req taskRequest
		if json.Unmarshal(body, &req) != nil {
			return false
		}
		t.deliver(id, &req)
		w.WriteHeader(http.StatusAccepted)
		return true
	}
	req, ok := e.s.v1TaskRequest(msg.Method, body)
	if !ok {
		return false
	}
	caller := t.caller(r)
	if req.Method == "tasks/result" {
		e.taskResult(w, r.Context(), caller, session, req)
		return true
	}
	t.v1Request(r.Context(), caller, session, e.sessions.canElicit(session), req, httpReply{w, req.ID})
	return true
}

// v1TaskRequest decodes a 2025-11-25 request that tasks serve: tools/call
// of a workflow with params.task, and tasks/*.
func (s *Server) v1TaskRequest(method string, body []byte) (*taskRequest, bool) {
	switch method {
	case string(mcp.MethodToolsCall), "tasks/get", "tasks/result", "tasks/list", "tasks/cancel":
	default:
		return nil, false
	}
	var req taskRequest
	if json.Unmarshal(body, &req) != nil {
		return nil, false // mcp-go reports it
	}
	if req.Method == string(mcp.MethodToolsCall) {
		if _, ok := s.Workflow(req.Params.Name); !ok || len(req.Params.Task) == 0 || string(req.Params.Task) == "null" {
			return nil, false
		}
	}
	return &req, true
}

// rpcReply answers one request, on whatever transport it came.
type rpcReply interface {
	result(v any)
	fail(code int, message string)
}

type httpReply struct {
	w  http.ResponseWriter
	id any
}

func (h httpReply) result(v any) { writeRPCResult(h.w, h.id, v) }
func (h httpReply) fail(code int, message string) {
	writeRPCError(h.w, http.StatusOK, h.id, code, message)
}

// failTask answers a task request that failed: not found and expired are
// invalid params (-32602), as both flavours say.
func failTask(rep rpcReply, what string, err error) {
	code := mcp.INTERNAL_ERROR
	var finished errTaskFinished
	if errors.Is(err, errTaskNotFound) || errors.Is(err, errTaskExpired) || errors.As(err, &finished) {
		code = mcp.INVALID_PARAMS
	}
	rep.fail(code, what+": "+err.Error())
}

// v1Request serves a 2025-11-25 tools/call as a task, tasks/get,
// tasks/cancel or tasks/list (tasks/result streams, so each transport
// serves it itself).
func (t *tasks) v1Request(ctx context.Context, caller httpsafe.Identity, session string, canElicit bool, req *taskRequest, rep rpcReply) {
	switch req.Method {
	case string(mcp.MethodToolsCall):
		wf, ok := t.s.Workflow(req.Params.Name)
		if !ok { // deleted since the request was routed here
			rep.fail(mcp.INVALID_PARAMS, fmt.Sprintf("unknown tool %q", req.Params.Name))
			return
		}
		args, err := req.arguments()
		if err != nil {
			rep.fail(mcp.INVALID_PARAMS, fmt.Sprintf("invalid arguments for %s: %v", wf.Name, err))
			return
		}
		lt, err := t.start(ctx, wf, args, caller, session, canElicit)
		if err != nil {
			rep.fail(mcp.INVALID_PARAMS, startError(wf, err).Content[0].(mcp.TextContent).Text)
			return
		}
		v, err := t.get(ctx, caller, lt.id, flavourV1)
		if err != nil {
			rep.fail(mcp.INTERNAL_ERROR, err.Error())
			return
		}
		rep.result(mcp.CreateTaskResult{Task: t.v1Task(v)})
	case "tasks/get":
		v, err := t.get(ctx, caller, req.Params.TaskID, flavourV1)
		if err != nil {
			failTask(rep, "Failed to retrieve task", err)
			return
		}
		rep.result(mcp.GetTaskResult{Task: t.v1Task(v)})
		t.markSeen(req.Params.TaskID)
	case "tasks/cancel":
		v, err := t.cancel(ctx, caller, req.Params.TaskID, true)
		if err != nil {
			failTask(rep, "Failed to cancel task", err)
			return
		}
		rep.result(mcp.CancelTaskResult{Task: t.v1Task(v)})
	case "tasks/list":
		t.listTasks(ctx, caller, req, rep)
	default:
		rep.fail(mcp.METHOD_NOT_FOUND, req.Method+" is not served here")
	}
}

// tasksPageSize is how many tasks one tasks/list page holds.
const tasksPageSize = 100

func (t *tasks) listTasks(ctx context.Context, caller httpsafe.Identity, req *taskRequest, rep rpcReply) {
	views, err := t.list(ctx, caller)
	if err != nil {
		rep.fail(mcp.INTERNAL_ERROR, err.Error())
		return
	}
	from := 0
	if c := req.Params.Cursor; c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 0 || n > len(views) {
			rep.fail(mcp.INVALID_PARAMS, fmt.Sprintf("invalid cursor %q: pass the nextCursor of the previous tasks/list page", c))
			return
		}
		from = n
	}
	to := min(from+tasksPageSize, len(views))
	res := mcp.ListTasksResult{Tasks: []mcp.Task{}}
	for _, v := range views[from:to] {
		res.Tasks = append(res.Tasks, t.v1Task(v))
	}
	if to < len(views) {
		res.NextCursor = mcp.Cursor(strconv.Itoa(to))
	}
	rep.result(res)
}

// taskResult serves tasks/result: it waits for the run to end and returns
// its tool result. While it waits, the run's questions go out on this
// response as elicitation/create requests tied to the task.
func (e *Endpoint) taskResult(w http.ResponseWriter, ctx context.Context, caller httpsafe.Identity, session string, req *taskRequest) {
	t := e.s.tasks
	id := req.Params.TaskID
	v, err := t.get(ctx, caller, id, flavourV1)
	if err != nil {
		failTask(httpReply{w, req.ID}, "Failed to retrieve task result", err)
		return
	}
	sse := newSSEWriter(w)
	for !v.run.Status.Finished() {
		lt := t.liveTaskOf(id)
		if lt == nil { // a run this process did not start (resumed): poll the store
			select {
			case <-ctx.Done():
				return
			case <-time.After(t.opts.PollInterval / 5):
			}
		} else if !e.waitLive(ctx, sse, lt, session) {
			return
		}
		if v, err = t.get(ctx, caller, id, flavourV1); err != nil {
			sse.reply(req.ID, nil, &rpcErr{mcp.INVALID_PARAMS, "Failed to retrieve task result: " + err.Error()})
			return
		}
	}
	res := RunResult(v.run)
	res.Meta.AdditionalFields[mcp.RelatedTaskMetaKey] = mcp.RelatedTaskMeta(id)
	sse.reply(req.ID, toolResultJSON(res), nil)
}

// waitLive waits until lt's run ends, sending its questions on sse. It
// returns false when the request ended first.
func (e *Endpoint) waitLive(ctx context.Context, sse *sseWriter, lt *liveTask, session string) bool {
	t := e.s.tasks
	var offered *taskQuestion
	var reqID string
	defer func() {
		if offered == nil {
			return
		}
		// Unanswered when this stream ends: the next tasks/result asks again.
		lt.mu.Lock()
		offered.offered = false
		lt.mu.Unlock()
		t.mu.Lock()
		delete(t.pending, reqID)
		t.mu.Unlock()
	}()
	lt.mu.Lock()
	lt.waiters++
	lt.mu.Unlock()
	defer func() {
		lt.mu.Lock()
		lt.waiters--
		lt.mu.Unlock()
	}()
	for {
		lt.mu.Lock()
		q, changed := lt.ask, lt.changed
		// Take the question, also from the session request it went out on
		// (a client without a GET stream never sees that one).
		offer := q != nil && q != offered && (!q.offered || q.withdraw != nil) && e.sessions.canElicit(session)
		if offer {
			if q.withdraw != nil {
				q.withdraw()
				q.withdraw = nil
			}
			q.offered = true
		}
		lt.mu.Unlock()
		if offer {
			reqID = elicitIDPrefix + uuid.NewString()
			offered = q
			t.mu.Lock()
			t.pending[reqID] = pendingAnswer{task: lt.id, key: q.key}
			t.mu.Unlock()
			msg := elicitationRequest(q, lt.id)
			msg["jsonrpc"], msg["id"] = "2.0", reqID
			if err := sse.send(msg); err != nil {
				return false
			}
		}
		select {
		case <-lt.done:
			offered = nil
			return true
		case <-changed:
			lt.mu.Lock()
			gone := lt.ask != offered // answered or timed out: nothing to take back
			lt.mu.Unlock()
			if offered != nil && gone {
				offered = nil
				t.mu.Lock()
				delete(t.pending, reqID)
				t.mu.Unlock()
			}
		case <-ctx.Done():
			return false
		}
	}
}

// deliver routes the client's response to an elicitation request that a
// tasks/result stream carried.
func (t *tasks) deliver(id string, resp *taskRequest) {
	t.mu.Lock()
	p, ok := t.pending[id]
	delete(t.pending, id)
	t.mu.Unlock()
	if !ok {
		return
	}
	var a answerOrErr
	if resp.Error != nil {
		a.err = fmt.Errorf("the client refused the elicitation: %s", resp.Error.Message)
	} else {
		var res mcp.ElicitationResult
		if err := json.Unmarshal(resp.Result, &res); err != nil {
			a.err = fmt.Errorf("the client's answer to the elicitation is not an elicitation result: %v", err)
		} else {
			a.res, a.err = convertElicitResult(&res)
		}
	}
	t.answer(p.task, p.key, a)
}

// toolResultJSON is a tool result as JSON, kept as it is (a round trip
// through map[string]any would turn integers beyond 2^53 into floats).
func toolResultJSON(res *mcp.CallToolResult) json.RawMessage {
	b, err := runtime.MarshalJSON(res)
	if err != nil {
		b, _ = json.Marshal(mcp.NewToolResultError(err.Error()))
	}
	return b
}

// toolResultMap is a tool result as a JSON object, for results that get
// more fields.
func toolResultMap(res *mcp.CallToolResult) map[string]any {
	b, err := json.Marshal(res)
	if err != nil {
		return map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": err.Error()}}}
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func writeMissingExtension(w http.ResponseWriter, id any, method string) {
	body, _ := runtime.MarshalJSON(map[string]any{
		"jsonrpc": "2.0", "id": id,
		"error": map[string]any{
			"code":    codeMissingCapability,
			"message": fmt.Sprintf("Missing required client capability: %s needs the %s extension in _meta %s", method, TasksExtension, mcp.MetaKeyClientCapabilities),
			"data":    map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}},
		},
	})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(body, '\n'))
}

// writeExtResult writes a 2026-07-28 result: resultType (complete unless
// set) and the server's identity in _meta, as mcp-go stamps its own.
func writeExtResult(w http.ResponseWriter, s *Server, id any, res map[string]any) {
	if _, ok := res["resultType"]; !ok {
		res["resultType"] = string(mcp.ResultTypeComplete)
	}
	meta, _ := res["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[mcp.MetaKeyServerInfo] = mcp.Implementation{Name: s.opts.Name, Version: s.opts.Version}
	res["_meta"] = meta
	writeRPCResult(w, id, res)
}

func writeRPCResult(w http.ResponseWriter, id any, result any) {
	body, err := runtime.MarshalJSON(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	if err != nil {
		writeRPCError(w, http.StatusOK, id, mcp.INTERNAL_ERROR, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(body, '\n'))
}

// rpcErr is a JSON-RPC error object.
type rpcErr struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// sseWriter answers one request: with a plain JSON reply, or, once it has
// sent a server request first, as a stream of SSE events ending with the
// reply.
type sseWriter struct {
	w       http.ResponseWriter
	flusher http.Flusher
	started bool
}

func newSSEWriter(w http.ResponseWriter) *sseWriter {
	f, _ := w.(http.Flusher)
	return &sseWriter{w: w, flusher: f}
}

// send writes msg as an SSE event, switching the response to SSE first.
func (s *sseWriter) send(msg map[string]any) error {
	if s.flusher == nil {
		return errors.New("the response writer cannot stream")
	}
	data, err := runtime.MarshalJSON(msg)
	if err != nil {
		return err
	}
	if !s.started {
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		s.w.WriteHeader(http.StatusOK)
		s.started = true
	}
	if _, err := fmt.Fprintf(s.w, "event: message\ndata: %s\n\n", data); err != nil {
		return err
	}
	s.flusher.Flush()
	return nil
}

// reply writes the request's result or error.
func (s *sseWriter) reply(id any, result any, rerr *rpcErr) {
	if !s.started {
		if rerr != nil {
			writeRPCError(s.w, http.StatusOK, id, rerr.Code, rerr.Message)
		} else {
			writeRPCResult(s.w, id, result)
		}
		return
	}
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if rerr != nil {
		msg["error"] = rerr
	} else {
		msg["result"] = result
	}
	_ = s.send(msg)
}
