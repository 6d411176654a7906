package main

// How the load runs: write a config (SQLite store, one stdio test backend,
// a four-step diamond workflow: echo -> (echo, add) -> echo, bearer tokens
// for a few owners, and the server's caps on as a deployment would set
// them), start `vmcp run --transport http` on loopback, wait for /healthz,
// warm it up with one plain call and one task call, and read the baseline
// from /metrics. Then N clients, each its own MCP session, call the
// workflow in a loop until the duration ends; a share of the calls (-tasks)
// are MCP 2025-11-25 tasks: tools/call with params.task, tasks/get every
// -poll until the task is terminal, then tasks/result. A call fails when
// the transport errors, the answer is a JSON-RPC error or an error result,
// a task ends other than completed, or the result is not the workflow's.
// While the clients call, /metrics is read every half second for the peak
// goroutines and memory, and the process's open sockets are counted. After
// the clients close their sessions, /metrics is read every second until
// the goroutines are back within goroutineSlack of the baseline (or -settle
// passes). Memory comes back only at a garbage collection, and an idle Go
// process collects at the latest two minutes after its last one: with
// -gc-wait, the harness waits for vmcp's first collection after the load
// and checks the heap (go_memstats_alloc_bytes) within heapSlack of the
// baseline and the RSS within rssSlack (given up to 20 s more for the
// runtime to return the freed pages); without, only the RSS, within
// rssSlackNoGC (the runtime keeps the load's peak heap until it collects).
// Then vmcp is stopped with SIGTERM. The run fails when a call failed,
// vmcp's count of completed runs differs from the clients', or the server
// did not return to its baseline.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// options are the load's knobs (main.go's flags).
type options struct {
	Clients  int
	Duration time.Duration
	Tasks    float64       // share of calls made as tasks
	Poll     time.Duration // tasks/get interval of a task call
	Owners   int           // tokens the clients are spread over
	Port     int
	VMCP     string // binaries; "" builds them
	Backend  string
	Store    string
	Settle   time.Duration // longest wait for the goroutines to return to baseline
	GCWait   time.Duration // longest wait for vmcp's first GC after the load; 0: no wait
	// Runs and PerOwnerRuns are server.limits (runs, perOwner.runs).
	Runs, PerOwnerRuns int
	// Replicas > 0 is the replica load (replicas.go): that many vmcp
	// processes on ReplicaPorts, on a PostgreSQL cluster on PGPort
	// (durable with PGDurable) with lease Lease, one killed at half time
	// and started again RestartAfter later; then the SQLite leg on Port.
	Replicas     int
	ReplicaPorts []int
	PGPort       int
	PGDurable    bool
	Lease        time.Duration
	RestartAfter time.Duration
}

// The server's connection caps, as a deployment that expects a few
// hundred clients would set them (the run caps are options; by default
// 256 runs and 96 per owner, which the clients fit under). Every client
// connects from 127.0.0.1, as every client does behind a reverse proxy, so
// the per-client connection cap is the server's (docs/reference.md: "raise
// maxConnectionsPerClient to maxConnections there").
const (
	maxConnections = 512
	bodyTimeout    = "10s"
)

// Back at baseline: goroutines within goroutineSlack of the baseline
// (timers and the HTTP server's own come and go); after a GC the heap
// within heapSlack (a leak of a kilobyte per run or per session is more at
// this load) and the RSS within rssSlack (the runtime returns freed pages
// to the OS only gradually, and keeps some); without a GC the RSS within
// rssSlackNoGC.
const (
	goroutineSlack = 5
	heapSlack      = 16 << 20
	rssSlack       = 64 << 20
	rssSlackNoGC   = 128 << 20
)

const adminToken = "load-admin-token"

// ownerToken is the bearer token of owner i; its name is load-owner-i.
func ownerToken(i int) string { return fmt.Sprintf("load-owner-token-%d", i) }

const configTemplate = `backends:
  tb: {command: "%s"}
%sstate:
  store: %s
compositeTools:
  - name: diamond
    description: Four fast steps in a diamond
    parameters:
      msg: {type: string, required: true}
    steps:
      - id: start
        tool: tb.echo
        arguments: {text: "{{.params.msg}}"}
      - id: left
        tool: tb.echo
        arguments: {text: "left {{.steps.start.output.text}}"}
        dependsOn: [start]
      - id: right
        tool: tb.add
        arguments: {a: 1, b: 2}
        dependsOn: [start]
      - id: join
        tool: tb.echo
        arguments: {text: "{{.steps.left.output.text}} {{.steps.right.output.sum}}"}
        dependsOn: [left, right]
`

func config(o options, backend string) string {
	return fmt.Sprintf(configTemplate, backend, serverSection(o), o.Store)
}

// serverSection is the server: section of every load's config (ending in
// a newline): the harness's admin token and a run token per owner, the
// connection and body limits, and the run caps.
func serverSection(o options) string {
	var tokens strings.Builder
	fmt.Fprintf(&tokens, "      - %q  # the harness: every scope, reads /metrics\n", adminToken)
	for i := range o.Owners {
		fmt.Fprintf(&tokens, "      - {token: %q, name: load-owner-%d, scopes: [run]}\n", ownerToken(i), i)
	}
	return fmt.Sprintf(`server:
  auth:
    tokens:
%s  maxConnections: %d
  maxConnectionsPerClient: %d
  bodyTimeout: %s
  limits: {runs: %d, perOwner: {runs: %d}, onLimit: wait}
`, tokens.String(), maxConnections, maxConnections, bodyTimeout, o.Runs, o.PerOwnerRuns)
}

// sample is what the harness reads of the server at one moment.
type sample struct {
	metrics map[string]float64
	sockets int // open sockets of the vmcp process (-1 when unknown)
}

func (s sample) goroutines() float64 { return s.metrics["go_goroutines"] }
func (s sample) rss() float64        { return s.metrics["process_resident_memory_bytes"] }
func (s sample) alloc() float64      { return s.metrics["go_memstats_alloc_bytes"] }

// clientResult is one client's calls.
type clientResult struct {
	plain, task, create []time.Duration // latencies of ok calls; create: until the task handle
	errs                map[string]int
}

func run(o options, out io.Writer) error {
	switch {
	case o.Store != "sqlite" && o.Store != "memory":
		return fmt.Errorf("-store must be sqlite or memory, not %q", o.Store)
	case o.Tasks < 0 || o.Tasks > 1:
		return fmt.Errorf("-tasks must be from 0 to 1, not %v", o.Tasks)
	case o.Clients < 1 || o.Owners < 1:
		return fmt.Errorf("-clients and -owners must be at least 1")
	}
	dir, err := os.MkdirTemp("", "vmcp-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// vmcp runs in dir (its SQLite file goes there): binaries by absolute path.
	if err := binaries(&o, dir); err != nil {
		return err
	}
	cfg := filepath.Join(dir, "vmcp.yaml")
	if err := os.WriteFile(cfg, []byte(config(o, o.Backend)), 0o644); err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", o.Port)
	base := "http://" + addr
	var stderr strings.Builder
	var errMu sync.Mutex
	cmd := exec.Command(o.VMCP, "run", "--config", cfg, "--transport", "http", "--listen", addr, "--log-level", "warn")
	cmd.Dir = dir // the SQLite file goes here
	cmd.Stderr = writerFunc(func(p []byte) (int, error) {
		errMu.Lock()
		defer errMu.Unlock()
		if stderr.Len() < 1<<20 {
			stderr.Write(p)
		}
		return len(p), nil
	})
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}()
	vmcpStderr := func() string {
		errMu.Lock()
		defer errMu.Unlock()
		return stderr.String()
	}
	if err := waitHealthy(base, exited); err != nil {
		return fmt.Errorf("%v\n%s", err, vmcpStderr())
	}
	pid := cmd.Process.Pid
	read := func() (sample, error) {
		m, err := scrape(base)
		return sample{metrics: m, sockets: countSockets(pid)}, err
	}

	// One call of each kind warms up the backend connection, the SQLite
	// file and the tasks machinery, so that the baseline has everything a
	// steady server has.
	warm, err := newClient(base, ownerToken(0), o.Tasks > 0)
	if err != nil {
		return fmt.Errorf("warm-up client: %w", err)
	}
	if _, err := callOnce(warm, "warm", checkResult); err != nil {
		return fmt.Errorf("warm-up call: %w", err)
	}
	if o.Tasks > 0 {
		if _, _, err := taskOnce(warm, "warm-task", o.Poll); err != nil {
			return fmt.Errorf("warm-up task: %w", err)
		}
	}
	closeClient(warm)
	time.Sleep(2 * time.Second)
	before, err := read()
	if err != nil {
		return err
	}

	protocol := "2026-07-28 (mcp-go's default)"
	if o.Tasks > 0 {
		protocol = "2025-11-25 sessions (tasks: params.task, tasks/get, tasks/result)"
	}
	fmt.Fprintf(out, "load:        %d clients x %s, %.0f%% of calls as tasks (tasks/get every %s), %d owners, %s\n", o.Clients, o.Duration, 100*o.Tasks, o.Poll, o.Owners, protocol)
	fmt.Fprintf(out, "server:      vmcp run at %s, workflow diamond (4 backend calls), %s store, stdio test backend\n", base, o.Store)
	fmt.Fprintf(out, "caps:        maxConnections %d, maxConnectionsPerClient %d, bodyTimeout %s, limits {runs: %d, perOwner: {runs: %d}, onLimit: wait}\n",
		maxConnections, maxConnections, bodyTimeout, o.Runs, o.PerOwnerRuns)

	results := make([]clientResult, o.Clients)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(o.Duration)
	for i := range o.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = client1(base, i, o, deadline)
		}()
	}
	// The peak while the clients call.
	peak := before
	samplerDone := make(chan struct{})
	loadDone := make(chan struct{})
	go func() {
		defer close(samplerDone)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-loadDone:
				return
			case <-tick.C:
			}
			s, err := read()
			if err != nil {
				continue
			}
			peak = maxSample(peak, s)
		}
	}()
	wg.Wait()
	elapsed := time.Since(start)
	close(loadDone)
	<-samplerDone

	var plain, task, create []time.Duration
	errs := map[string]int{}
	for _, r := range results {
		plain = append(plain, r.plain...)
		task = append(task, r.task...)
		create = append(create, r.create...)
		for k, v := range r.errs {
			errs[k] += v
		}
	}
	failed := 0
	for _, v := range errs {
		failed += v
	}
	ok := len(plain) + len(task)

	// Wait for the server to settle: sessions closed, runs' last writes
	// done, keep-alive connections closed by the clients.
	settleStart := time.Now()
	var after sample
	for {
		time.Sleep(time.Second)
		if after, err = read(); err != nil {
			return err
		}
		if after.goroutines() <= before.goroutines()+goroutineSlack || time.Since(settleStart) > o.Settle {
			break
		}
	}
	settled := time.Since(settleStart)
	// Then the first garbage collection after the load.
	var afterGC *sample
	var gcAfter time.Duration
	if o.GCWait > 0 {
		const gcs = "go_gc_duration_seconds_count"
		gcStart := time.Now()
		for time.Since(gcStart) < o.GCWait {
			time.Sleep(2 * time.Second)
			s, err := read()
			if err != nil {
				return err
			}
			if s.metrics[gcs] > after.metrics[gcs] {
				afterGC, gcAfter = &s, time.Since(settleStart)
				break
			}
		}
		// The runtime's scavenger returns the freed pages to the OS in
		// the background, over some seconds.
		for i := 0; afterGC != nil && i < 10 && afterGC.rss() > before.rss()+rssSlack; i++ {
			time.Sleep(2 * time.Second)
			s, err := read()
			if err != nil {
				return err
			}
			afterGC, gcAfter = &s, time.Since(settleStart)
		}
	}

	fmt.Fprintf(out, "calls:       %d ok (%d plain, %d tasks), %d failed in %.1fs\n", ok, len(plain), len(task), failed, elapsed.Seconds())
	fmt.Fprintf(out, "throughput:  %.0f workflow calls/s (%.0f backend calls/s)\n", float64(ok)/elapsed.Seconds(), 4*float64(ok)/elapsed.Seconds())
	printLatency(out, "plain call", plain)
	printLatency(out, "task", task)
	printLatency(out, "task create", create)
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(out, "error:       %d x %s\n", errs[k], k)
	}
	const completed = `vmcp_runs_total{status="completed",workflow="diamond"}`
	recorded := after.metrics[completed] - before.metrics[completed]
	others := 0.0
	for k, v := range after.metrics {
		if strings.HasPrefix(k, "vmcp_runs_total{") && k != completed {
			others += v - before.metrics[k]
		}
	}
	fmt.Fprintf(out, "store:       %.0f runs completed according to vmcp (clients saw %d ok), %.0f ended otherwise\n", recorded, ok, others)
	fmt.Fprintf(out, "goroutines:  baseline %.0f  peak %.0f  after %.0f (%.0fs after the load)\n", before.goroutines(), peak.goroutines(), after.goroutines(), settled.Seconds())
	fmt.Fprintf(out, "RSS:         baseline %s  peak %s  after %s%s\n", mib(before.rss()), mib(peak.rss()), mib(after.rss()), gcNoteFor(afterGC, gcAfter, sample.rss))
	fmt.Fprintf(out, "heap:        baseline %s  peak %s  after %s%s\n", mib(before.alloc()), mib(peak.alloc()), mib(after.alloc()), gcNoteFor(afterGC, gcAfter, sample.alloc))
	if before.sockets >= 0 {
		fmt.Fprintf(out, "sockets:     baseline %d  peak %d  after %d (maxConnections %d)\n", before.sockets, peak.sockets, after.sockets, maxConnections)
	}
	fmt.Fprintf(out, "in flight:   runs at most %.0f (sampled; limits %d, %d per owner), ", peak.metrics[`vmcp_runs_in_flight{workflow="diamond"}`], o.Runs, o.PerOwnerRuns)
	fmt.Fprintf(out, "runs %.0f, steps %.0f, backend calls %.0f after the load\n",
		after.metrics[`vmcp_runs_in_flight{workflow="diamond"}`], after.metrics[`vmcp_steps_in_flight{workflow="diamond"}`], after.metrics[`vmcp_backend_calls_in_flight{backend="tb"}`])

	var problems []string
	if failed > 0 {
		problems = append(problems, fmt.Sprintf("%d calls failed", failed))
	}
	if ok == 0 {
		problems = append(problems, "no call succeeded")
	}
	if int(recorded) != ok || others != 0 {
		problems = append(problems, fmt.Sprintf("vmcp recorded %.0f completed runs and %.0f others for %d ok calls", recorded, others, ok))
	}
	if after.goroutines() > before.goroutines()+goroutineSlack {
		problems = append(problems, fmt.Sprintf("goroutines did not return to baseline within %s (%.0f -> %.0f)", o.Settle, before.goroutines(), after.goroutines()))
	}
	switch {
	case o.GCWait > 0 && afterGC == nil:
		problems = append(problems, fmt.Sprintf("vmcp did not collect garbage within %s after the load", o.GCWait))
	case afterGC != nil:
		if afterGC.alloc() > before.alloc()+heapSlack {
			problems = append(problems, fmt.Sprintf("the heap after a GC is not within %s of baseline (%s -> %s)", mib(heapSlack), mib(before.alloc()), mib(afterGC.alloc())))
		}
		if afterGC.rss() > before.rss()+rssSlack {
			problems = append(problems, fmt.Sprintf("RSS after a GC is not within %s of baseline (%s -> %s)", mib(rssSlack), mib(before.rss()), mib(afterGC.rss())))
		}
	case after.rss() > before.rss()+rssSlackNoGC:
		problems = append(problems, fmt.Sprintf("RSS is not within %s of baseline (%s -> %s)", mib(rssSlackNoGC), mib(before.rss()), mib(after.rss())))
	}
	if len(problems) > 0 {
		if s := vmcpStderr(); s != "" {
			fmt.Fprintf(out, "vmcp stderr (first lines):\n%s\n", firstLines(s, 20))
		}
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	fmt.Fprintln(out, "ok:          0 errors; goroutines and memory back to baseline")
	return nil
}

// client1 is client i: its own session, calling until deadline; a share
// o.Tasks of its calls are tasks, spread evenly (with 0.3, three calls of
// every ten, at offsets that differ from client to client).
func client1(base string, i int, o options, deadline time.Time) clientResult {
	res := clientResult{errs: map[string]int{}}
	c, err := newClient(base, ownerToken(i%o.Owners), o.Tasks > 0)
	if err != nil {
		res.errs["connect: "+firstLine(err.Error())]++
		return res
	}
	defer closeClient(c)
	for n := 0; time.Now().Before(deadline); n++ {
		msg := "m" + strconv.Itoa(i*1_000_000+n)
		k := float64(i + n)
		t0 := time.Now()
		if math.Floor((k+1)*o.Tasks) > math.Floor(k*o.Tasks) {
			created, kind, err := taskOnce(c, msg, o.Poll)
			if err != nil {
				res.errs[kind]++
				continue
			}
			res.task = append(res.task, time.Since(t0))
			res.create = append(res.create, created)
			continue
		}
		if kind, err := callOnce(c, msg, checkResult); err != nil {
			res.errs[kind]++
			continue
		}
		res.plain = append(res.plain, time.Since(t0))
	}
	return res
}

func maxSample(a, b sample) sample {
	m := map[string]float64{}
	for k, v := range a.metrics {
		m[k] = v
	}
	for k, v := range b.metrics {
		m[k] = max(m[k], v)
	}
	return sample{metrics: m, sockets: max(a.sockets, b.sockets)}
}

// gcNoteFor is the report's "after the next GC" column of one measure,
// or "" without a GC.
func gcNoteFor(afterGC *sample, at time.Duration, measure func(sample) float64) string {
	if afterGC == nil {
		return ""
	}
	return fmt.Sprintf("  after the next GC (%.0fs after the load) %s", at.Seconds(), mib(measure(*afterGC)))
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func goBuild(out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	b, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build %s (run inside the repository): %v\n%s", pkg, err, b)
	}
	return nil
}

func waitHealthy(base string, exited chan error) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		select {
		case err := <-exited:
			return fmt.Errorf("vmcp exited: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("vmcp did not become healthy within 60s")
}

// loadClient is an MCP client and its own HTTP client.
type loadClient struct {
	*client.Client
	http *http.Client
}

// closeClient closes c's session (DELETE) and its keep-alive connection:
// mcp-go closes only the connections of an HTTP client it made itself, and
// the server would keep an idle one for server.idleTimeout.
func closeClient(c loadClient) {
	c.Close()
	c.http.CloseIdleConnections()
}

// newClient opens an MCP session as the owner of token; v1 makes it a
// 2025-11-25 session, the protocol whose tasks mcp-go speaks.
func newClient(base, token string, v1 bool, extra ...transport.StreamableHTTPCOption) (loadClient, error) {
	// The token goes on every request through the HTTP client, not
	// WithHTTPHeaders: mcp-go v1.2.1's Close sends its DELETE without
	// those headers, so vmcp answers 401 and the session stays until
	// server.sessions.idleTimeout.
	hc := &http.Client{Transport: bearer{token: token, next: http.DefaultTransport.(*http.Transport).Clone()}}
	tr, err := transport.NewStreamableHTTP(base+"/mcp", append([]transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(hc)}, extra...)...)
	if err != nil {
		return loadClient{}, err
	}
	var opts []client.ClientOption
	if v1 {
		opts = append(opts, client.WithLegacyProtocolOnly())
	}
	c := client.NewClient(tr, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lc := loadClient{Client: c, http: hc}
	if err := c.Start(ctx); err != nil {
		hc.CloseIdleConnections()
		return loadClient{}, err
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		closeClient(lc)
		return loadClient{}, err
	}
	return lc, nil
}

// bearer sets the Authorization header of every request.
type bearer struct {
	token string
	next  *http.Transport
}

// CloseIdleConnections makes http.Client.CloseIdleConnections reach next.
func (b bearer) CloseIdleConnections() { b.next.CloseIdleConnections() }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// callOnce calls the workflow and checks its answer. On failure it returns
// a short kind for the error table.
// check is checkResult, or checkRecorded for the replica load's workflow.
func callOnce(c loadClient, msg string, check func(any, []mcp.Content, string) (string, error)) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "diamond", Arguments: map[string]any{"msg": msg}}})
	if err != nil {
		return "transport: " + firstLine(err.Error()), err
	}
	if res.IsError {
		text := resultText(res.Content)
		return "tool error: " + firstLine(text), fmt.Errorf("%s", text)
	}
	return check(res.StructuredContent, res.Content, msg)
}

// taskOnce calls the workflow as a 2025-11-25 task (mcp-go's CallTool
// cannot return a CreateTaskResult, so the create goes through the
// transport), polls tasks/get until the task is terminal, reads
// tasks/result and checks it. It returns how long the create took.
func taskOnce(c loadClient, msg string, poll time.Duration) (time.Duration, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	t0 := time.Now()
	resp, err := c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId("task-" + msg),
		Method:  string(mcp.MethodToolsCall),
		Params:  map[string]any{"name": "diamond", "arguments": map[string]any{"msg": msg}, "task": map[string]any{}},
	})
	if err != nil {
		return 0, "task create: transport: " + firstLine(err.Error()), err
	}
	if resp.Error != nil {
		return 0, "task create: JSON-RPC error: " + firstLine(resp.Error.Message), fmt.Errorf("%s", resp.Error.Message)
	}
	created := time.Since(t0)
	var cr mcp.CreateTaskResult
	if err := json.Unmarshal(resp.Result, &cr); err != nil || cr.Task.TaskId == "" {
		var tr mcp.CallToolResult
		if json.Unmarshal(resp.Result, &tr) == nil && tr.IsError {
			text := resultText(tr.Content)
			return 0, "task create: tool error: " + firstLine(text), fmt.Errorf("%s", text)
		}
		return 0, "task create: not a task", fmt.Errorf("the result %s is not a CreateTaskResult", resp.Result)
	}
	task := cr.Task
	for !task.Status.IsTerminal() {
		time.Sleep(poll)
		got, err := c.GetTask(ctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: task.TaskId}})
		if err != nil {
			return 0, "tasks/get: " + firstLine(err.Error()), err
		}
		task = got.Task
	}
	if task.Status != mcp.TaskStatusCompleted {
		return 0, fmt.Sprintf("task %s: %s", task.Status, firstLine(task.StatusMessage)), fmt.Errorf("task %s %s: %s", task.TaskId, task.Status, task.StatusMessage)
	}
	res, err := c.TaskResult(ctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: task.TaskId}})
	if err != nil {
		return 0, "tasks/result: " + firstLine(err.Error()), err
	}
	if res.IsError {
		text := resultText(res.Content)
		return 0, "tasks/result: tool error: " + firstLine(text), fmt.Errorf("%s", text)
	}
	kind, err := checkResult(res.StructuredContent, res.Content, msg)
	return created, kind, err
}

// checkResult checks the diamond's result for msg: structured content, or
// else the JSON text of the content.
func checkResult(structured any, content []mcp.Content, msg string) (string, error) {
	return checkField(structured, content, "text", "left "+msg+" 3")
}

// checkField checks that a result's field key (in its structured content,
// or else in the JSON text of its content) is want.
func checkField(structured any, content []mcp.Content, key, want string) (string, error) {
	out, _ := structured.(map[string]any)
	if out == nil {
		json.Unmarshal([]byte(resultText(content)), &out)
	}
	if out == nil || out[key] != want {
		return "wrong result", fmt.Errorf("result %v / %q; want %s %q", structured, resultText(content), key, want)
	}
	return "", nil
}

func resultText(content []mcp.Content) string {
	var texts []string
	for _, c := range content {
		if t, ok := c.(mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	return strings.Join(texts, "\n")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// scrape reads /metrics into a map of series (name{labels}) to value.
func scrape(base string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// countSockets counts the open sockets of process pid (Linux), or -1.
func countSockets(pid int) int {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return -1
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

func printLatency(out io.Writer, what string, sorted []time.Duration) {
	if len(sorted) == 0 {
		return
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	fmt.Fprintf(out, "latency:     %-12s p50 %s  p90 %s  p99 %s  max %s\n", what, pct(sorted, 50), pct(sorted, 90), pct(sorted, 99), sorted[len(sorted)-1].Round(time.Microsecond))
}

func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	if i > 0 {
		i--
	}
	return sorted[min(i, len(sorted)-1)].Round(time.Microsecond)
}

func mib(b float64) string { return fmt.Sprintf("%.1fMiB", b/(1<<20)) }
