package main

// The load on several replicas (-replicas N): N `vmcp run` processes on
// one PostgreSQL database (a throwaway cluster this program starts with
// initdb and pg_ctl, as the tests do), the clients spread over them, one
// replica killed with SIGKILL in the middle of the load and started again;
// then the same load, the same workflow and clients, against one `vmcp
// run` on SQLite, in the same run, so that the two can be compared.
//
// The workflow is the diamond of load.go, made of the test backend's
// recorded tools: start, left and right are gated_idempotent, join is
// gated (not idempotent), each labelled "MSG STEP", so the backend's call
// record (one file all the backends append to) says how often each step
// of each call reached a backend. Client i calls replica i mod N (its
// home) in its own session. When its replica dies under a call, the call
// is "cut" (the client cannot know whether the run exists) and the client
// moves to the next live replica; a task it was following it goes on
// polling there (tasks/get, tasks/result on another replica). When its
// home is back, it returns home.
//
// After the load, the checks of exactlyonce.go.
// The SQLite leg has no kill: every call must succeed, each step of each
// call be called once, and vmcp's count of completed runs equal the
// clients'. Timings are reported, never judged.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// recordedWorkflow is the replica load's diamond (see the top of the file).
const recordedWorkflow = `compositeTools:
  - name: diamond
    description: Four recorded backend calls in a diamond; join is not idempotent
    parameters:
      msg: {type: string, required: true}
    steps:
      - id: start
        tool: tb.gated_idempotent
        arguments: {label: "{{.params.msg}} start"}
      - id: left
        tool: tb.gated_idempotent
        arguments: {label: "{{.params.msg}} left"}
        dependsOn: [start]
      - id: right
        tool: tb.gated_idempotent
        arguments: {label: "{{.params.msg}} right"}
        dependsOn: [start]
      - id: join
        tool: tb.gated
        arguments: {label: "{{.params.msg}} join"}
        dependsOn: [left, right]
`

var diamondSteps = []string{"start", "left", "right", "join"}

// recordedConfig is the config of one leg: state is its state section.
func recordedConfig(o options, backend, record, state string) string {
	return fmt.Sprintf(`backends:
  tb: {command: %q, args: [-gated, -record, %q]}
%sstate: %s
%s`, backend, record, serverSection(o), state, recordedWorkflow)
}

// replica is one `vmcp run` of a leg, on a fixed address; it keeps that
// address across a restart, and its stderr goes to one log file.
type replica struct {
	idx        int
	addr, base string
	log        string
	cmd        *exec.Cmd // nil when it is not running
	exited     chan error
	up         atomic.Bool  // serving; false from the kill until the restart is healthy
	gen        atomic.Int32 // kills so far: a call that fails after it changed was cut by a kill
}

// leg is one configuration under load: its replicas and what they share.
type leg struct {
	name     string
	vmcp     string
	dir, cfg string
	record   string
	replicas []*replica
}

func (l *leg) start(r *replica) error {
	f, err := os.OpenFile(r.log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(l.vmcp, "run", "--config", l.cfg, "--transport", "http", "--listen", r.addr)
	cmd.Dir = l.dir // the SQLite file goes here
	cmd.Stderr = f
	if err := cmd.Start(); err != nil {
		f.Close()
		return err
	}
	r.cmd, r.exited = cmd, make(chan error, 1)
	go func() { r.exited <- cmd.Wait(); f.Close() }()
	if err := waitHealthy(r.base, r.exited); err != nil {
		cmd.Process.Kill() // when it has not exited already
		r.cmd = nil
		return fmt.Errorf("%s replica %d: %v\n%s", l.name, r.idx, err, firstLines(readFile(r.log), 20))
	}
	r.up.Store(true)
	return nil
}

// kill SIGKILLs r: first marked down and its generation bumped, so that
// the calls it cuts are counted as cut.
func (l *leg) kill(r *replica) {
	r.up.Store(false)
	r.gen.Add(1)
	r.cmd.Process.Kill()
	<-r.exited
	r.cmd = nil
}

// stop SIGTERMs every replica that runs and waits for it.
func (l *leg) stop() {
	for _, r := range l.replicas {
		if r.cmd == nil {
			continue
		}
		r.up.Store(false)
		r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.exited:
		case <-time.After(20 * time.Second):
			r.cmd.Process.Kill()
			<-r.exited
		}
	}
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// sentCall is one call a client made: where, and how it ended for it.
type sentCall struct {
	msg     string
	replica int
	gen     int32 // the replica's kills before the call
	task    bool
	taskID  string
	// outcome: "ok", "cut" (its replica was killed under it), "failed"
	// (a task that ended failed), or "error".
	outcome string
	took    time.Duration // of an ok call
}

// legResult is what a leg's clients saw.
type legResult struct {
	clientResult
	sent    []sentCall
	elapsed time.Duration
	// moved counts the tasks a client followed to another replica.
	moved int
}

// legClient is one client of a leg: its session on its current replica.
type legClient struct {
	l      *leg
	o      options
	token  string
	home   int
	cur    int // -1: no session
	c      loadClient
	moved  int
	result clientResult
}

// connect opens a session on the first live replica from prefer on.
func (lc *legClient) connect(prefer int) bool {
	n := len(lc.l.replicas)
	for k := range n {
		j := (prefer + k) % n
		if !lc.l.replicas[j].up.Load() {
			continue
		}
		c, err := newClient(lc.l.replicas[j].base, lc.token, lc.o.Tasks > 0, transport.WithHTTPLogger(closeQuiet))
		if err != nil {
			continue
		}
		lc.drop()
		lc.c, lc.cur = c, j
		return true
	}
	return false
}

// closeQuiet is mcp-go's default logger without "failed to send close
// request": closing a session on the killed replica fails, as expected.
var closeQuiet = slog.New(dropMessage{slog.Default().Handler(), "failed to send close request"})

type dropMessage struct {
	slog.Handler
	msg string
}

func (d dropMessage) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == d.msg {
		return nil
	}
	return d.Handler.Handle(ctx, r)
}

func (lc *legClient) drop() {
	if lc.cur >= 0 {
		closeClient(lc.c)
		lc.cur = -1
	}
}

// session makes sure of a session (home when home is up), waiting up to
// a minute for a live replica.
func (lc *legClient) session() bool {
	if lc.cur >= 0 && (lc.cur == lc.home || !lc.l.replicas[lc.home].up.Load()) && lc.l.replicas[lc.cur].up.Load() {
		return true
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if lc.connect(lc.home) {
			return true
		}
	}
	return false
}

// cutBy says whether the call on r that failed was cut by a kill: r was
// killed since generation gen, or is down (killed after the caller read
// gen, before the call); it then drops the session.
func (lc *legClient) cutBy(r *replica, gen int32) bool {
	if r.gen.Load() == gen && r.up.Load() {
		return false
	}
	lc.drop()
	return true
}

func runLegClient(l *leg, i int, o options, deadline time.Time) ([]sentCall, clientResult, int) {
	lc := &legClient{l: l, o: o, token: ownerToken(i % o.Owners), home: i % len(l.replicas), cur: -1, result: clientResult{errs: map[string]int{}}}
	defer lc.drop()
	var sent []sentCall
	for n := 0; time.Now().Before(deadline); n++ {
		if !lc.session() {
			lc.result.errs["connect: no replica answered for a minute"]++
			break
		}
		r := lc.l.replicas[lc.cur]
		s := sentCall{msg: "m" + strconv.Itoa(i*1_000_000+n), replica: lc.cur, gen: r.gen.Load()}
		k := float64(i + n)
		s.task = int((k+1)*o.Tasks) > int(k*o.Tasks)
		t0 := time.Now()
		if s.task {
			lc.task(&s, r, t0)
		} else if kind, err := callOnce(lc.c, s.msg, checkRecorded); err != nil {
			if lc.cutBy(r, s.gen) {
				s.outcome = "cut"
			} else {
				s.outcome = "error"
				lc.result.errs[kind]++
			}
		} else {
			s.outcome, s.took = "ok", time.Since(t0)
			lc.result.plain = append(lc.result.plain, s.took)
		}
		sent = append(sent, s)
	}
	return sent, lc.result, lc.moved
}

// task makes s a task on r and follows it to its end, on another replica
// when r dies meanwhile.
func (lc *legClient) task(s *sentCall, r *replica, t0 time.Time) {
	fail := func(kind string) {
		s.outcome = "error"
		lc.result.errs[kind]++
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, err := lc.c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId("task-" + s.msg),
		Method:  string(mcp.MethodToolsCall),
		Params:  map[string]any{"name": "diamond", "arguments": map[string]any{"msg": s.msg}, "task": map[string]any{}},
	})
	switch {
	case err != nil && lc.cutBy(r, s.gen):
		s.outcome = "cut"
		return
	case err != nil:
		fail("task create: transport: " + firstLine(err.Error()))
		return
	case resp.Error != nil:
		fail("task create: JSON-RPC error: " + firstLine(resp.Error.Message))
		return
	}
	created := time.Since(t0)
	var cr mcp.CreateTaskResult
	if err := json.Unmarshal(resp.Result, &cr); err != nil || cr.Task.TaskId == "" {
		fail("task create: not a task")
		return
	}
	s.taskID = cr.Task.TaskId
	task := cr.Task
	// follow does one request on the current replica; when that replica
	// dies under it, the session moves and the request is sent again.
	follow := func(do func() error) error {
		for {
			cur := lc.l.replicas[lc.cur]
			gen := cur.gen.Load()
			err := do()
			if err == nil || !lc.cutBy(cur, gen) {
				return err
			}
			lc.moved++
			if !lc.session() {
				return fmt.Errorf("no replica answered for a minute")
			}
		}
	}
	for !task.Status.IsTerminal() {
		time.Sleep(lc.o.Poll)
		err := follow(func() error {
			got, err := lc.c.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: s.taskID}})
			if err == nil {
				task = got.Task
			}
			return err
		})
		if err != nil {
			fail("tasks/get: " + firstLine(err.Error()))
			return
		}
	}
	if task.Status == mcp.TaskStatusFailed {
		s.outcome = "failed" // checked against the store (interrupted) later
		return
	}
	if task.Status != mcp.TaskStatusCompleted {
		fail(fmt.Sprintf("task %s: %s", task.Status, firstLine(task.StatusMessage)))
		return
	}
	var res *mcp.TaskResultResult
	if err := follow(func() error {
		var err error
		res, err = lc.c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: s.taskID}})
		return err
	}); err != nil {
		fail("tasks/result: " + firstLine(err.Error()))
		return
	}
	if kind, err := checkRecorded(res.StructuredContent, res.Content, s.msg); err != nil {
		fail("tasks/result: " + kind)
		return
	}
	s.outcome, s.took = "ok", time.Since(t0)
	lc.result.task = append(lc.result.task, s.took)
	lc.result.create = append(lc.result.create, created)
}

// checkRecorded checks the recorded diamond's result for msg.
func checkRecorded(structured any, content []mcp.Content, msg string) (string, error) {
	return checkField(structured, content, "label", msg+" join")
}

// loadLeg warms every replica up, runs the clients for o.Duration and,
// when kill is set, kills the second replica at half time and starts it
// again o.RestartAfter later.
func loadLeg(l *leg, o options, kill bool) (res legResult, err error) {
	for _, r := range l.replicas {
		warm, err := newClient(r.base, ownerToken(0), o.Tasks > 0)
		if err != nil {
			return res, fmt.Errorf("%s warm-up client: %w", l.name, err)
		}
		if _, err := callOnce(warm, fmt.Sprintf("warm-%d", r.idx), checkRecorded); err != nil {
			closeClient(warm)
			return res, fmt.Errorf("%s warm-up call: %w", l.name, err)
		}
		closeClient(warm)
	}
	results := make([]legResult, o.Clients)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(o.Duration)
	for i := range o.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sent, cr, moved := runLegClient(l, i, o, deadline)
			results[i] = legResult{clientResult: cr, sent: sent, moved: moved}
		}()
	}
	var restartErr error
	if kill {
		victim := l.replicas[1%len(l.replicas)]
		time.Sleep(o.Duration / 2)
		l.kill(victim)
		time.Sleep(o.RestartAfter)
		restartErr = l.start(victim)
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.errs = map[string]int{}
	for _, r := range results {
		res.plain = append(res.plain, r.plain...)
		res.task = append(res.task, r.task...)
		res.create = append(res.create, r.create...)
		res.sent = append(res.sent, r.sent...)
		res.moved += r.moved
		for k, v := range r.errs {
			res.errs[k] += v
		}
	}
	if restartErr != nil {
		return res, restartErr
	}
	return res, nil
}

// runReplicas is the -replicas load: the replicated leg, then the SQLite
// leg, then the comparison. It fails when any check fails.
func runReplicas(o options, out io.Writer) error {
	switch {
	case o.Replicas < 2:
		return fmt.Errorf("-replicas must be at least 2, not %d", o.Replicas)
	case len(o.ReplicaPorts) != o.Replicas:
		return fmt.Errorf("%d replica ports for %d replicas", len(o.ReplicaPorts), o.Replicas)
	}
	dir, err := os.MkdirTemp("", "vmcp-load-replicas-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := binaries(&o, dir); err != nil {
		return err
	}
	pg, err := testenv.StartPostgresOn(o.PGPort, testenv.PostgresOptions{Durable: o.PGDurable})
	if err != nil {
		return err
	}
	defer pg.Stop()
	if err := pg.Exec("CREATE DATABASE vmcp_load"); err != nil {
		return err
	}
	url := pg.URL("vmcp_load")

	newLeg := func(name, state string, ports []int) (*leg, error) {
		l := &leg{name: name, vmcp: o.VMCP, dir: filepath.Join(dir, name)}
		if err := os.MkdirAll(l.dir, 0o755); err != nil {
			return nil, err
		}
		l.record, l.cfg = filepath.Join(l.dir, "calls.log"), filepath.Join(l.dir, "vmcp.yaml")
		if err := os.WriteFile(l.cfg, []byte(recordedConfig(o, o.Backend, l.record, state)), 0o644); err != nil {
			return nil, err
		}
		for i, p := range ports {
			addr := fmt.Sprintf("127.0.0.1:%d", p)
			l.replicas = append(l.replicas, &replica{idx: i, addr: addr, base: "http://" + addr, log: filepath.Join(l.dir, fmt.Sprintf("replica-%d.log", i))})
		}
		return l, nil
	}

	durability := "fsync off"
	if o.PGDurable {
		durability = "durable (fsync, synchronous_commit)"
	}
	fmt.Fprintf(out, "load:        %d clients x %s each leg, %.0f%% of calls as tasks (tasks/get every %s), %d owners, 2025-11-25 sessions\n", o.Clients, o.Duration, 100*o.Tasks, o.Poll, o.Owners)
	fmt.Fprintf(out, "workflow:    diamond of 4 recorded backend calls (join not idempotent), stdio test backend per process\n")

	// The replicated leg.
	pgLeg, err := newLeg("postgres", fmt.Sprintf("{store: postgres, url: %q, lease: %s}", url, o.Lease), o.ReplicaPorts)
	if err != nil {
		return err
	}
	var problems []string
	pgSum, err := func() (legSummary, error) {
		defer pgLeg.stop()
		for _, r := range pgLeg.replicas {
			if err := pgLeg.start(r); err != nil {
				return legSummary{}, err
			}
		}
		res, err := loadLeg(pgLeg, o, true)
		if err != nil {
			return legSummary{}, err
		}
		runs, err := storedRuns(url, 4*o.Lease+30*time.Second)
		if err != nil {
			return legSummary{}, err
		}
		calls, err := callRecord(pgLeg.record)
		if err != nil {
			return legSummary{}, err
		}
		e := checkExactlyOnce(pgLeg, res, runs, calls, true, 1)
		fmt.Fprintf(out, "\n[postgres]   %d replicas on one PostgreSQL %s, lease %s; replica 1 SIGKILLed at %s, started again %s later\n",
			o.Replicas, durability, o.Lease, o.Duration/2, o.RestartAfter)
		sum := report(out, res)
		fmt.Fprintf(out, "kill:        %d calls sent to replica 1 before the kill, %d cut by it (no answer), %d tasks followed to another replica\n", e.touched, e.cut, res.moved)
		fmt.Fprintf(out, "slowest:     %s among those calls that succeeded, %s among the others\n", e.slowestTouched.Round(time.Millisecond), e.slowestOther.Round(time.Millisecond))
		fmt.Fprintf(out, "store:       %d runs, %d completed, %d interrupted (join in flight at the kill), %d resumed by another replica, each exactly once\n", e.runs, e.completed, e.interrupted, e.resumed)
		if n := failures(res); n > 0 {
			problems = append(problems, fmt.Sprintf("postgres: %d calls failed", n))
		}
		for _, p := range e.problems {
			problems = append(problems, "postgres: "+p)
		}
		if e.touched == 0 || e.completed == 0 {
			problems = append(problems, fmt.Sprintf("postgres: %d calls went to the killed replica and %d runs completed; want some of each", e.touched, e.completed))
		}
		return sum, nil
	}()
	if err != nil {
		return err
	}

	// The SQLite leg: the same load on one process.
	sqLeg, err := newLeg("sqlite", "{store: sqlite}", []int{o.Port})
	if err != nil {
		return err
	}
	sqSum, err := func() (legSummary, error) {
		defer sqLeg.stop()
		if err := sqLeg.start(sqLeg.replicas[0]); err != nil {
			return legSummary{}, err
		}
		before, err := scrape(sqLeg.replicas[0].base)
		if err != nil {
			return legSummary{}, err
		}
		res, err := loadLeg(sqLeg, o, false)
		if err != nil {
			return legSummary{}, err
		}
		time.Sleep(time.Second) // the runs' last writes
		after, err := scrape(sqLeg.replicas[0].base)
		if err != nil {
			return legSummary{}, err
		}
		calls, err := callRecord(sqLeg.record)
		if err != nil {
			return legSummary{}, err
		}
		fmt.Fprintf(out, "\n[sqlite]     one vmcp run on SQLite, no kill\n")
		sum := report(out, res)
		const completed = `vmcp_runs_total{status="completed",workflow="diamond"}`
		recorded := int(after[completed]-before[completed]) - len(sqLeg.replicas) // the warm-up calls
		fmt.Fprintf(out, "store:       %d runs completed according to vmcp (clients saw %d ok)\n", recorded, sum.ok)
		if n := failures(res); n > 0 {
			problems = append(problems, fmt.Sprintf("sqlite: %d calls failed", n))
		}
		if recorded != sum.ok || sum.ok != len(res.sent) {
			problems = append(problems, fmt.Sprintf("sqlite: %d calls sent, %d ok, %d runs completed", len(res.sent), sum.ok, recorded))
		}
		bad := 0
		for _, s := range res.sent {
			for _, step := range diamondSteps {
				if calls[s.msg][step] != 1 {
					bad++
					if bad <= 5 {
						problems = append(problems, fmt.Sprintf("sqlite: call %s called %s %d times; want once", s.msg, step, calls[s.msg][step]))
					}
				}
			}
		}
		return sum, nil
	}()
	if err != nil {
		return err
	}

	fmt.Fprintf(out, "\n%-34s %10s %12s %12s %12s\n", "side by side", "calls/s", "plain p99", "task p99", "create p99")
	for _, s := range []struct {
		name string
		legSummary
	}{{fmt.Sprintf("postgres, %d replicas, one killed", o.Replicas), pgSum}, {"sqlite, one process", sqSum}} {
		fmt.Fprintf(out, "%-34s %10.0f %12s %12s %12s\n", s.name, s.throughput, s.plainP99, s.taskP99, s.createP99)
	}
	if len(problems) > 0 {
		for _, l := range []*leg{pgLeg, sqLeg} {
			for _, r := range l.replicas {
				fmt.Fprintf(out, "%s replica %d log (first lines):\n%s\n", l.name, r.idx, firstLines(grepOut(readFile(r.log), "resuming run left unfinished"), 15))
			}
		}
		return fmt.Errorf("%s", strings.Join(problems, "\n  "))
	}
	fmt.Fprintln(out, "ok:          every run ended exactly once; no call or task lost")
	return nil
}

// grepOut drops the lines that contain s.
func grepOut(text, s string) string {
	var keep []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.Contains(l, s) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// legSummary is one leg's line of the comparison.
type legSummary struct {
	ok                           int
	throughput                   float64
	plainP99, taskP99, createP99 time.Duration
}

func failures(res legResult) int {
	n := 0
	for _, v := range res.errs {
		n += v
	}
	return n
}

// report prints a leg's calls, throughput, latencies and errors.
func report(out io.Writer, res legResult) legSummary {
	ok := len(res.plain) + len(res.task)
	s := legSummary{ok: ok, throughput: float64(ok) / res.elapsed.Seconds()}
	fmt.Fprintf(out, "calls:       %d ok (%d plain, %d tasks), %d failed in %.1fs\n", ok, len(res.plain), len(res.task), failures(res), res.elapsed.Seconds())
	fmt.Fprintf(out, "throughput:  %.0f workflow calls/s (%.0f backend calls/s)\n", s.throughput, 4*s.throughput)
	printLatency(out, "plain call", res.plain)
	printLatency(out, "task", res.task)
	printLatency(out, "task create", res.create)
	p99 := func(d []time.Duration) time.Duration {
		if len(d) == 0 {
			return 0
		}
		return pct(d, 99) // printLatency sorted d
	}
	s.plainP99, s.taskP99, s.createP99 = p99(res.plain), p99(res.task), p99(res.create)
	keys := make([]string, 0, len(res.errs))
	for k := range res.errs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(out, "error:       %d x %s\n", res.errs[k], k)
	}
	return s
}

// binaries builds vmcp and the test backend into dir unless given.
func binaries(o *options, dir string) error {
	var err error
	for _, bin := range []*string{&o.VMCP, &o.Backend} {
		if *bin != "" {
			if *bin, err = filepath.Abs(*bin); err != nil {
				return err
			}
		}
	}
	if o.VMCP == "" {
		o.VMCP = filepath.Join(dir, "vmcp")
		if err := goBuild(o.VMCP, "github.com/vmcp-dev/vmcp/cmd/vmcp"); err != nil {
			return err
		}
	}
	if o.Backend == "" {
		o.Backend = filepath.Join(dir, "testbackend")
		if err := goBuild(o.Backend, "github.com/vmcp-dev/vmcp/e2e/testbackend"); err != nil {
			return err
		}
	}
	return nil
}
