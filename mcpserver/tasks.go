package mcpserver

// Long runs as MCP Tasks (design.md "Long runs as MCP Tasks").
//
// A client that asks for a task gets back a handle on the run instead of
// waiting for its result: the task id is the run id, and the handle is
// returned only once the engine has stored the run (the engine sends
// EventRunStarted right after its store's CreateRun, so the first event is
// the signal). Two wire flavours share this file's state; tasks_wire.go
// speaks them over streamable HTTP, and tasks_stdio.go the first on stdio:
//
//   - MCP 2025-11-25 tasks (tools/call with params.task; tasks/get,
//     tasks/result, tasks/list, tasks/cancel), negotiated in initialize;
//   - the io.modelcontextprotocol/tasks extension on 2026-07-28 requests
//     (resultType "task"; tasks/get, tasks/update, tasks/cancel), declared
//     in each request's _meta.
//
// Tasks live in vmcp's run store, not in mcp-go's per-session task map:
// tasks/get reads the run record, so any session can read a task, also
// after the session that made it is gone, and (with the SQLite store)
// after vmcp restarted. What is not in the record is held here, per run
// this process started, while the run goes: its cancel, the questions its
// waiting elicitation steps ask (together when they go at the same time),
// and the end of the run.
//
// Who may read a task. A task's run records its owner (Run.Owner, the
// caller's httpsafe.Identity subject; "" without authentication), and
// tasks/* apply the rule every way to a run applies (package access): a
// caller reads, answers, lists and cancels its own tasks, admin every
// task, and any other task is "task not found", exactly as an unknown id.
// Every session of the same caller can, before and after a restart. What
// makes a run a task is its id: a random UUID whose last 6 bytes are a
// SHA-256 tag over the owner's subject and the id's first 10 random
// bytes. Runs that were not started as tasks fail the check (the chance
// that a random id carries a valid tag is 2^-48), so plain tools/call
// runs are never tasks; and a caller's tasks/get of an id whose tag is not
// its own is refused before the store is read.
//
// Statuses: pending and running are "working", or "input_required" while
// an elicitation step waits for its answer; completed is "completed";
// cancelled is "cancelled"; failed, timed_out and interrupted are "failed"
// with the failure message in 2025-11-25, and "completed" with an isError
// result in the extension, whose "failed" means a JSON-RPC error only.
//
// TTL: every task reports the server's task TTL (state.retention, 24h when
// unset). A finished task older than its TTL is "expired" (not found),
// whatever the store still keeps. A client's requested ttl is not honoured:
// the run record has nowhere to keep it across a restart.

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// DefaultTaskTTL is how long a task stays readable when state.retention is
// not set.
const DefaultTaskTTL = 24 * time.Hour

// DefaultTaskPollInterval is the polling interval tasks suggest.
const DefaultTaskPollInterval = 500 * time.Millisecond

// TaskRuns is what tasks need of the engine besides starting runs: reading
// a run's record, cancelling a run, and listing runs (*runtime.Engine
// implements it).
type TaskRuns interface {
	Status(ctx context.Context, id string) (*runtime.Run, error)
	Cancel(ctx context.Context, id string) error
	Store() runtime.Store
}

// TaskOptions turn on MCP Tasks: both flavours over streamable HTTP, and
// 2025-11-25 tasks on stdio.
type TaskOptions struct {
	// Runs reads and cancels the runs behind tasks; nil disables tasks.
	Runs TaskRuns
	// TTL is how long a task stays readable after it was created
	// (state.retention); 0 means DefaultTaskTTL.
	TTL time.Duration
	// PollInterval is the polling interval tasks suggest; 0 means
	// DefaultTaskPollInterval.
	PollInterval time.Duration
	// Board, when set, shares the questions of this process's live tasks
	// with the other processes on the run store (replicas on
	// store/postgres): a task another replica runs reads as
	// input_required with its questions in tasks/get, and tasks/update
	// hands the answers to that replica (the Tasks extension).
	Board TaskBoard
}

// TaskBoard is where replicas share their live tasks' questions, as
// opaque JSON (*postgres.Store implements it).
type TaskBoard interface {
	// Post records the questions task id waits on here (nil: none);
	// seq orders the posts of one task.
	Post(ctx context.Context, id string, seq int64, questions []byte) error
	// Questions reads the questions task id waits on, nil when none.
	Questions(ctx context.Context, id string) ([]byte, error)
	// Answer hands an answer to the process that runs task id.
	Answer(ctx context.Context, id, key string, answer []byte) error
	// OnAnswer calls fn with every answer handed to any task.
	OnAnswer(fn func(id, key string, answer []byte))
}

// boardQuestion is a question as the board holds it.
type boardQuestion struct {
	Key     string         `json:"key"`
	StepID  string         `json:"stepId"`
	Message string         `json:"message"`
	Schema  map[string]any `json:"schema,omitempty"`
	Backend string         `json:"backend,omitempty"`
	Tool    string         `json:"tool,omitempty"`
}

// boardAnswer is an answer as the board carries it.
type boardAnswer struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// post puts lt's waiting questions on the board.
func (t *tasks) post(lt *liveTask) {
	if t.opts.Board == nil {
		return
	}
	lt.mu.Lock()
	seq := t.boardSeq.Add(1) // under lt.mu: the snapshots of a task are in seq order
	var qs []boardQuestion
	for _, q := range lt.waiting {
		qs = append(qs, boardQuestion{Key: q.key, StepID: q.req.StepID, Message: q.req.Message, Schema: q.req.Schema,
			Backend: q.req.Backend, Tool: q.req.Tool})
	}
	lt.mu.Unlock()
	var b []byte
	if len(qs) > 0 {
		var err error
		if b, err = json.Marshal(qs); err != nil {
			t.s.log.Warn("a task's questions cannot be shared with the other replicas", "run_id", lt.id, "err", err)
			return
		}
	}
	if err := t.opts.Board.Post(context.Background(), lt.id, seq, b); err != nil {
		t.s.log.Warn("sharing a task's questions with the other replicas failed", "run_id", lt.id, "err", err)
	}
}

// boardQuestions reads the questions of task id that another process
// runs, as questions this process can show (never answered here).
func (t *tasks) boardQuestions(id string) []*taskQuestion {
	b, err := t.opts.Board.Questions(context.Background(), id)
	if err != nil || b == nil {
		return nil
	}
	var qs []boardQuestion
	if json.Unmarshal(b, &qs) != nil {
		return nil
	}
	out := make([]*taskQuestion, len(qs))
	for i, q := range qs {
		out[i] = &taskQuestion{ctx: context.Background(), key: q.Key, req: runtime.ElicitRequest{RunID: id, StepID: q.StepID, Message: q.Message, Schema: q.Schema,
			Backend: q.Backend, Tool: q.Tool}}
	}
	return out
}

// answerElsewhere hands the answer to question key of task id to the
// process that runs it, when this one does not (reporting whether it did).
func (t *tasks) answerElsewhere(id, key string, a answerOrErr) bool {
	if t.opts.Board == nil || a.err != nil || t.liveTaskOf(id) != nil {
		return false
	}
	b, err := json.Marshal(boardAnswer{Action: a.res.Action, Content: a.res.Content})
	if err == nil {
		err = t.opts.Board.Answer(context.Background(), id, key, b)
	}
	if err != nil {
		t.s.log.Warn("handing an answer to the replica that runs the task failed", "run_id", id, "err", err)
		return false
	}
	return true
}

// Task statuses of both flavours.
const (
	taskWorking       = mcp.TaskStatus("working")
	taskInputRequired = mcp.TaskStatus("input_required")
	taskCompleted     = mcp.TaskStatus("completed")
	taskFailed        = mcp.TaskStatus("failed")
	taskCancelled     = mcp.TaskStatus("cancelled")
)

// flavour is the Tasks dialect of a request.
type flavour int

const (
	flavourV1  flavour = iota // MCP 2025-11-25 tasks/*
	flavourExt                // the io.modelcontextprotocol/tasks extension
)

// errTaskNotFound is what a caller learns about a task it may not read,
// or one that does not exist.
var errTaskNotFound = errors.New("task not found")

// errTaskExpired is a finished task older than the task TTL.
var errTaskExpired = errors.New("task has expired")

// taskState is the status of a run as a task.
type taskState struct {
	Status  mcp.TaskStatus
	Message string
}

// stateOf maps a run record to its task status in the given flavour;
// waiting reports that an elicitation step waits for its answer.
func stateOf(run *runtime.Run, waiting bool, f flavour) taskState {
	switch run.Status {
	case runtime.RunPending, runtime.RunRunning:
		if waiting {
			return taskState{taskInputRequired, "waiting for the answer to an elicitation"}
		}
		return taskState{taskWorking, progressMessage(run)}
	case runtime.RunCompleted:
		return taskState{taskCompleted, "workflow " + run.Workflow + " completed"}
	case runtime.RunCancelled:
		return taskState{taskCancelled, FailureMessage(run)}
	}
	// failed, timed_out, interrupted and anything newer.
	if f == flavourExt {
		return taskState{taskCompleted, FailureMessage(run)}
	}
	return taskState{taskFailed, FailureMessage(run)}
}

// progressMessage says how far a running run is.
func progressMessage(run *runtime.Run) string {
	done := 0
	for _, st := range run.Steps {
		switch st.Status {
		case runtime.StepCompleted, runtime.StepFailed, runtime.StepSkipped:
			done++
		}
	}
	return fmt.Sprintf("workflow %s running: %d of %d steps done", run.Workflow, done, len(run.Steps))
}

// ownerTag is the 6-byte tag that ties a task id's random prefix to its
// owner's subject (see the top of the file).
func ownerTag(owner string, prefix []byte) []byte {
	h := sha256.New()
	h.Write([]byte("vmcp task owner\x00"))
	h.Write([]byte(owner))
	h.Write([]byte{0})
	h.Write(prefix)
	return h.Sum(nil)[:6]
}

// newTaskID returns a fresh task (and run) id owned by owner.
func newTaskID(owner string) string {
	u := uuid.MustParse(runtime.NewRunID())
	copy(u[10:], ownerTag(owner, u[:10]))
	return u.String()
}

// ownsTask reports whether id is a task id made for owner.
func ownsTask(owner, id string) bool {
	u, err := uuid.Parse(id)
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(u[10:], ownerTag(owner, u[:10])) == 1
}

// isTask reports whether run was started as a task (its id carries its
// owner's tag).
func isTask(run *runtime.Run) bool { return ownsTask(run.Owner, run.ID) }

// tasks holds the tasks' state that is not in the run store.
type tasks struct {
	s    *Server
	opts TaskOptions

	boardSeq atomic.Int64 // orders the posts to opts.Board

	mu       sync.Mutex
	live     map[string]*liveTask                    // runs this process started as tasks, while they go
	pending  map[string]pendingAnswer                // elicitation requests out on tasks/result streams, by id
	sessions map[string]mcpgo.SessionWithElicitation // mcp-go's HTTP sessions, by id
}

func newTasks(s *Server, opts TaskOptions) *tasks {
	if opts.TTL <= 0 {
		opts.TTL = DefaultTaskTTL
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultTaskPollInterval
	}
	t := &tasks{s: s, opts: opts, live: map[string]*liveTask{}, pending: map[string]pendingAnswer{},
		sessions: map[string]mcpgo.SessionWithElicitation{}}
	if opts.Board != nil {
		opts.Board.OnAnswer(func(id, key string, answer []byte) {
			var a boardAnswer
			if json.Unmarshal(answer, &a) == nil {
				t.answer(id, key, answerOrErr{res: runtime.ElicitResult{Action: a.Action, Content: a.Content}})
			}
		})
	}
	return t
}

// hooks keeps track of mcp-go's sessions, through which 2025-11-25 tasks
// ask their questions when no tasks/result stream waits.
func (t *tasks) hooks() *mcpgo.Hooks {
	h := &mcpgo.Hooks{}
	h.AddOnRegisterSession(func(_ context.Context, cs mcpgo.ClientSession) {
		if es, ok := cs.(mcpgo.SessionWithElicitation); ok {
			t.mu.Lock()
			t.sessions[cs.SessionID()] = es
			t.mu.Unlock()
		}
	})
	h.AddOnUnregisterSession(func(_ context.Context, cs mcpgo.ClientSession) {
		t.mu.Lock()
		delete(t.sessions, cs.SessionID())
		t.mu.Unlock()
	})
	return h
}

// liveTask is a task's run while it goes in this process.
type liveTask struct {
	id        string
	workflow  string
	session   string // the 2025-11-25 session that created it, or ""
	canElicit bool
	cancel    context.CancelFunc
	done      chan struct{} // closed when the run has returned
	final     *runtime.Run  // the run's end, set before done closes
	startErr  error         // the run did not start, set before done closes

	mu      sync.Mutex
	updated time.Time // the last change not in the run record
	asks    int       // questions asked so far, for unique keys
	// waiting: the questions waiting for their answers, oldest first (the
	// elicitation steps of a run that go at the same time ask at the same
	// time); ask is the oldest, or nil. The extension shows them all in
	// inputRequests; 2025-11-25 sends them one by one.
	waiting []*taskQuestion
	ask     *taskQuestion
	changed chan struct{} // closed and replaced on every change of waiting
	waiters int           // tasks/result streams waiting on the task
	// seen: the client has asked about the task (2025-11-25), so it knows
	// the id; questions go out through the session only then, since a
	// client cannot tie a request to a task whose id it has not yet read.
	seen bool
}

// taskQuestion is an elicitation step's question to a task's client.
type taskQuestion struct {
	ctx    context.Context // the step's: it ends when the step does
	key    string          // unique over the task's life
	req    runtime.ElicitRequest
	answer chan answerOrErr // buffered; the first answer wins
	// 2025-11-25: the question has been sent, on a tasks/result stream, or
	// through the creating session (withdraw then cancels that request, so
	// that a tasks/result stream can take the question over).
	offered  bool
	withdraw context.CancelFunc
}

// start starts a run of wf as a task of caller and returns once the run is
// stored (a tasks/get would find it), or with the reason it did not start.
func (t *tasks) start(ctx context.Context, wf *ir.Workflow, args map[string]any, caller httpsafe.Identity, session string, canElicit bool) (*liveTask, error) {
	release, err := t.s.admitRun(ctx, caller.Subject, wf.Name)
	if err != nil {
		return nil, err
	}
	id := newTaskID(caller.Subject)
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	lt := &liveTask{
		id: id, workflow: wf.Name, session: session, canElicit: canElicit, cancel: cancel,
		done: make(chan struct{}), updated: time.Now(), changed: make(chan struct{}),
	}
	stored := make(chan struct{})
	var once sync.Once
	t.mu.Lock()
	t.live[id] = lt
	t.mu.Unlock()
	go func() {
		defer release()
		defer cancel()
		run, err := t.s.opts.Runner.Run(runCtx, wf.Name, args, runtime.RunOptions{
			RunID:    id,
			Owner:    caller.Subject,
			Elicitor: &taskElicitor{t: t, lt: lt},
			OnEvent: func(ev runtime.Event) {
				if ev.Kind == runtime.EventRunStarted {
					once.Do(func() { close(stored) })
				}
			},
		})
		lt.final, lt.startErr = run, err
		t.mu.Lock()
		delete(t.live, id)
		t.mu.Unlock()
		close(lt.done)
		if err == nil {
			t.s.log.Info("task finished", "workflow", wf.Name, "run_id", id, "status", run.Status)
		}
	}()
	select {
	case <-stored:
		t.s.log.Info("task created", "workflow", wf.Name, "run_id", id)
		return lt, nil
	case <-lt.done:
		if lt.startErr != nil {
			return nil, lt.startErr
		}
		return lt, nil // stored and finished before the event was seen
	}
}

// liveTaskOf returns the live task of id, or nil.
func (t *tasks) liveTaskOf(id string) *liveTask {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.live[id]
}

// taskView is one task as tasks/get shows it.
type taskView struct {
	run      *runtime.Run
	state    taskState
	ask      *taskQuestion   // the oldest waiting question, if any
	asks     []*taskQuestion // all waiting questions, oldest first
	updated  time.Time
	expireAt time.Time
}

// get reads task id for caller: errTaskNotFound unless it is a task that
// caller sees (see the top of the file).
func (t *tasks) get(ctx context.Context, caller httpsafe.Identity, id string, f flavour) (*taskView, error) {
	if !caller.SeesAll() && !ownsTask(caller.Subject, id) {
		return nil, errTaskNotFound
	}
	lt := t.liveTaskOf(id)
	var run *runtime.Run
	if lt != nil {
		select {
		case <-lt.done:
			run = lt.final
		default:
		}
	}
	if run == nil {
		r, err := t.opts.Runs.Status(ctx, id)
		if errors.Is(err, runtime.ErrRunNotFound) {
			return nil, errTaskNotFound
		}
		if err != nil {
			return nil, fmt.Errorf("reading the run of task %s: %w", id, err)
		}
		run = r
	}
	if !isTask(run) || !caller.Sees(run.Owner) {
		return nil, errTaskNotFound
	}
	return t.view(run, lt, f)
}

// view is run, and lt (nil when this process does not drive it), as a task.
func (t *tasks) view(run *runtime.Run, lt *liveTask, f flavour) (*taskView, error) {
	v := &taskView{run: run, updated: lastUpdate(run), expireAt: run.StartedAt.Add(t.opts.TTL)}
	if run.Status.Finished() && time.Now().After(v.expireAt) {
		return nil, errTaskExpired
	}
	if lt != nil && !run.Status.Finished() {
		lt.mu.Lock()
		v.ask = lt.ask
		v.asks = append([]*taskQuestion(nil), lt.waiting...)
		if lt.updated.After(v.updated) {
			v.updated = lt.updated
		}
		lt.mu.Unlock()
	}
	if lt == nil && t.opts.Board != nil && !run.Status.Finished() {
		// Another replica runs it: its questions are on the board.
		if v.asks = t.boardQuestions(run.ID); len(v.asks) > 0 {
			v.ask = v.asks[0]
		}
	}
	v.state = stateOf(run, v.ask != nil, f)
	return v, nil
}

// lastUpdate is the latest time in a run record.
func lastUpdate(run *runtime.Run) time.Time {
	last := run.StartedAt
	for _, st := range run.Steps {
		for _, ts := range []time.Time{st.StartedAt, st.EndedAt} {
			if ts.After(last) {
				last = ts
			}
		}
	}
	if run.EndedAt.After(last) {
		last = run.EndedAt
	}
	return last
}

// cancel cancels task id for caller. wait says to return only once the run
// has ended (or ctx ends), as 2025-11-25 asks; the extension's cancel is
// an acknowledgement.
func (t *tasks) cancel(ctx context.Context, caller httpsafe.Identity, id string, wait bool) (*taskView, error) {
	v, err := t.get(ctx, caller, id, flavourV1)
	if err != nil {
		return nil, err
	}
	if v.run.Status.Finished() {
		return v, errTaskFinished{v.state.Status}
	}
	if err := t.opts.Runs.Cancel(ctx, id); err != nil {
		return nil, fmt.Errorf("cancelling task %s: %w", id, err)
	}
	if lt := t.liveTaskOf(id); lt != nil {
		lt.cancel() // also a run the engine no longer lists but that has not returned yet
	}
	if !wait {
		return v, nil
	}
	for {
		v, err := t.get(ctx, caller, id, flavourV1)
		if err != nil || v.run.Status.Finished() {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, nil
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// errTaskFinished refuses to cancel a task that has already ended.
type errTaskFinished struct{ status mcp.TaskStatus }

func (e errTaskFinished) Error() string {
	return fmt.Sprintf("cannot cancel task: it has already ended (status %s)", e.status)
}

// list returns the tasks caller sees, newest first.
func (t *tasks) list(ctx context.Context, caller httpsafe.Identity) ([]*taskView, error) {
	runs, err := t.opts.Runs.Store().ListRuns(ctx, runtime.RunFilter{Owner: caller.OwnerFilter(), Limit: maxListedRuns})
	if err != nil {
		return nil, fmt.Errorf("listing runs: %w", err)
	}
	var out []*taskView
	for _, r := range runs {
		if r.ParentID != "" || !isTask(r) || !caller.Sees(r.Owner) {
			continue
		}
		v, err := t.view(r, t.liveTaskOf(r.ID), flavourV1)
		if err != nil {
			continue // expired
		}
		out = append(out, v)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].run.StartedAt.After(out[j].run.StartedAt) })
	return out, nil
}

// maxListedRuns is how many of the newest runs tasks/list looks at.
const maxListedRuns = 1000

// answer hands the client's answer to the question of task id whose key is
// key. It reports whether that question was waiting.
func (t *tasks) answer(id, key string, a answerOrErr) bool {
	lt := t.liveTaskOf(id)
	if lt == nil {
		return false
	}
	lt.mu.Lock()
	var q *taskQuestion
	for _, w := range lt.waiting {
		if w.key == key {
			q = w
		}
	}
	lt.mu.Unlock()
	if q == nil {
		return false
	}
	select {
	case q.answer <- a:
		// Answered: no longer waiting, also for a tasks/get that comes
		// before the step has taken the answer.
		lt.dropAsk(q)
		t.post(lt)
		return true
	default:
		return false // already answered
	}
}

// addAsk adds q to the waiting questions and wakes the watchers.
func (lt *liveTask) addAsk(q *taskQuestion) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.waiting = append(lt.waiting, q)
	lt.changedLocked()
}

// dropAsk removes q from the waiting questions and wakes the watchers.
func (lt *liveTask) dropAsk(q *taskQuestion) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	for i, w := range lt.waiting {
		if w == q {
			lt.waiting = append(lt.waiting[:i:i], lt.waiting[i+1:]...)
			break
		}
	}
	lt.changedLocked()
}

// changedLocked records a change of the waiting questions (lt.mu held).
func (lt *liveTask) changedLocked() {
	lt.ask = nil
	if len(lt.waiting) > 0 {
		lt.ask = lt.waiting[0]
	}
	lt.updated = time.Now()
	close(lt.changed)
	lt.changed = make(chan struct{})
}

// taskElicitor asks a task's elicitation steps through the task: the
// question shows in tasks/get (input_required) until the client answers,
// with tasks/update (extension) or with the elicitation/create request a
// tasks/result stream carries (2025-11-25).
type taskElicitor struct {
	t  *tasks
	lt *liveTask
}

func (e *taskElicitor) Elicit(ctx context.Context, req runtime.ElicitRequest) (runtime.ElicitResult, error) {
	if !e.lt.canElicit {
		return runtime.ElicitResult{}, ErrNoElicitation
	}
	e.lt.mu.Lock()
	e.lt.asks++
	key := fmt.Sprintf("%s-%d", req.StepID, e.lt.asks)
	e.lt.mu.Unlock()
	q := &taskQuestion{ctx: ctx, key: key, req: req, answer: make(chan answerOrErr, 1)}
	e.lt.addAsk(q)
	e.t.post(e.lt)
	defer e.t.post(e.lt)
	defer e.lt.dropAsk(q)
	e.t.offerOnSession(e.lt, q)
	timeout := time.NewTimer(e.t.s.opts.ElicitTimeout)
	defer timeout.Stop()
	select {
	case a := <-q.answer:
		return a.res, a.err
	case <-ctx.Done():
		return runtime.ElicitResult{}, ctx.Err()
	case <-timeout.C:
		return runtime.ElicitResult{}, errors.New("the client did not answer the elicitation before its deadline")
	}
}

// offerOnSession sends q as an elicitation/create request tied to the task
// through mcp-go's session that created the task (its standalone GET
// stream), unless a tasks/result stream already waits to carry it. The
// answer comes back through mcp-go, as for any elicitation.
func (t *tasks) offerOnSession(lt *liveTask, q *taskQuestion) {
	t.mu.Lock()
	sess := t.sessions[lt.session]
	t.mu.Unlock()
	if sess == nil {
		return // the extension, or the session is gone: tasks/get shows the question
	}
	sctx, withdraw := context.WithCancel(q.ctx)
	lt.mu.Lock()
	if !lt.seen || lt.waiters > 0 || q.offered {
		lt.mu.Unlock()
		withdraw()
		return
	}
	q.offered, q.withdraw = true, withdraw
	lt.mu.Unlock()
	go func() {
		defer withdraw()
		res, err := sess.RequestElicitation(t.s.mcp.WithContext(sctx, sess), mcp.ElicitationRequest{
			Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
			Params: mcp.ElicitationParams{
				Meta:            mcp.WithRelatedTask(lt.id),
				Mode:            mcp.ElicitationModeForm,
				Message:         q.req.Message,
				RequestedSchema: q.req.Schema,
			},
		})
		if sctx.Err() != nil {
			return // withdrawn, or the step ended
		}
		if err != nil {
			// Undelivered: leave the question to a tasks/result stream.
			lt.mu.Lock()
			q.offered, q.withdraw = false, nil
			if lt.ask == q { // still waiting: wake the streams
				close(lt.changed)
				lt.changed = make(chan struct{})
			}
			lt.mu.Unlock()
			return
		}
		a := answerOrErr{}
		a.res, a.err = convertElicitResult(res)
		t.answer(lt.id, q.key, a)
	}()
}

// markSeen records that the client has asked about task id, and sends a
// question that waited for that.
func (t *tasks) markSeen(id string) {
	lt := t.liveTaskOf(id)
	if lt == nil {
		return
	}
	lt.mu.Lock()
	first := !lt.seen
	lt.seen = true
	q := lt.ask
	lt.mu.Unlock()
	if first && q != nil {
		t.offerOnSession(lt, q)
	}
}
