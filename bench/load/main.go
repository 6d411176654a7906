package main

// How the test runs: write a config (SQLite store, one stdio test backend,
// a four-step diamond workflow: echo -> (echo, add) -> echo), start
// `vmcp run --transport http` on loopback with a bearer token, wait for
// /healthz, read the baseline from /metrics, then start N clients, each its
// own MCP session, calling the workflow in a loop until the duration ends.
// Each call's latency is recorded; a call fails when the transport errors or
// the result is an error. After the clients close their sessions, wait for
// the process to settle and read /metrics again, then stop vmcp with
// SIGTERM.

import (
	"bufio"
	"context"
	"flag"
	"fmt"
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

const token = "load-test-token"

const configTemplate = `backends:
  tb: {command: "%s"}
server:
  auth: {tokens: ["%s"]}
state:
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

func main() {
	clients := flag.Int("clients", 50, "concurrent MCP clients, one session each")
	duration := flag.Duration("duration", 30*time.Second, "how long the clients call")
	port := flag.Int("port", 17650, "loopback port for vmcp (use 17000-17999 on shared machines)")
	vmcpBin := flag.String("vmcp", "", "vmcp binary (default: go build ./cmd/vmcp)")
	tbBin := flag.String("backend", "", "test backend binary (default: go build ./e2e/testbackend)")
	store := flag.String("store", "sqlite", "run store: sqlite or memory (for comparison)")
	flag.Parse()
	if err := run(*clients, *duration, *port, *vmcpBin, *tbBin, *store); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run(clients int, duration time.Duration, port int, vmcpBin, tbBin, store string) error {
	if store != "sqlite" && store != "memory" {
		return fmt.Errorf("-store must be sqlite or memory, not %q", store)
	}
	dir, err := os.MkdirTemp("", "vmcp-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if vmcpBin == "" {
		vmcpBin = filepath.Join(dir, "vmcp")
		if err := goBuild(vmcpBin, "./cmd/vmcp"); err != nil {
			return err
		}
	}
	if tbBin == "" {
		tbBin = filepath.Join(dir, "testbackend")
		if err := goBuild(tbBin, "./e2e/testbackend"); err != nil {
			return err
		}
	}
	cfg := filepath.Join(dir, "vmcp.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, configTemplate, tbBin, token, store), 0o644); err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	base := "http://" + addr
	var stderr strings.Builder
	var errMu sync.Mutex
	cmd := exec.Command(vmcpBin, "run", "--config", cfg, "--transport", "http", "--listen", addr, "--log-level", "warn")
	cmd.Stderr = writerFunc(func(p []byte) (int, error) { errMu.Lock(); defer errMu.Unlock(); return stderr.Write(p) })
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
	if err := waitHealthy(base, exited); err != nil {
		errMu.Lock()
		defer errMu.Unlock()
		return fmt.Errorf("%v\n%s", err, stderr.String())
	}
	// One call warms up the backend connection and the SQLite file, so the
	// baseline includes everything a steady server has.
	warm, err := newClient(base)
	if err != nil {
		return err
	}
	if _, err := callOnce(warm, 0); err != nil {
		return fmt.Errorf("warm-up call: %w", err)
	}
	warm.Close()
	time.Sleep(2 * time.Second)
	before, err := scrape(base)
	if err != nil {
		return err
	}

	fmt.Printf("load: %d clients x %s, workflow diamond (4 backend calls), %s store, stdio test backend, vmcp at %s\n", clients, duration, store, base)
	type result struct {
		lat  []time.Duration
		errs map[string]int
	}
	results := make([]result, clients)
	var during map[string]float64
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(duration)
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := result{errs: map[string]int{}}
			defer func() { results[i] = res }()
			c, err := newClient(base)
			if err != nil {
				res.errs["connect: "+err.Error()]++
				return
			}
			defer c.Close()
			for n := 0; time.Now().Before(deadline); n++ {
				t0 := time.Now()
				kind, err := callOnce(c, i*1_000_000+n)
				if err != nil {
					res.errs[kind]++
					continue
				}
				res.lat = append(res.lat, time.Since(t0))
			}
		}()
	}
	// Sample the server in the middle of the load.
	time.Sleep(duration / 2)
	during, _ = scrape(base)
	wg.Wait()
	elapsed := time.Since(start)

	var all []time.Duration
	errs := map[string]int{}
	for _, r := range results {
		all = append(all, r.lat...)
		for k, v := range r.errs {
			errs[k] += v
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	failed := 0
	for _, v := range errs {
		failed += v
	}
	// Let the server close the sessions and finish its last writes.
	time.Sleep(5 * time.Second)
	after, err := scrape(base)
	if err != nil {
		return err
	}

	fmt.Printf("calls:       %d ok, %d failed in %.1fs\n", len(all), failed, elapsed.Seconds())
	fmt.Printf("throughput:  %.0f workflow calls/s (%.0f backend calls/s)\n", float64(len(all))/elapsed.Seconds(), 4*float64(len(all))/elapsed.Seconds())
	if len(all) > 0 {
		fmt.Printf("latency:     p50 %s  p90 %s  p99 %s  max %s\n", pct(all, 50), pct(all, 90), pct(all, 99), all[len(all)-1].Round(time.Microsecond))
	}
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("error:       %d x %s\n", errs[k], k)
	}
	recorded := after[`vmcp_runs_total{status="completed",workflow="diamond"}`] - before[`vmcp_runs_total{status="completed",workflow="diamond"}`]
	fmt.Printf("store:       %.0f runs completed according to vmcp (clients saw %d ok)\n", recorded, len(all))
	fmt.Printf("goroutines:  before %.0f  during %.0f  after %.0f\n", before["go_goroutines"], during["go_goroutines"], after["go_goroutines"])
	fmt.Printf("memory:      RSS before %s  during %s  after %s; heap in use before %s  after %s\n",
		mib(before["process_resident_memory_bytes"]), mib(during["process_resident_memory_bytes"]), mib(after["process_resident_memory_bytes"]),
		mib(before["go_memstats_heap_inuse_bytes"]), mib(after["go_memstats_heap_inuse_bytes"]))
	fmt.Printf("in flight:   runs %.0f, steps %.0f, backend calls %.0f after the load\n",
		after[`vmcp_runs_in_flight{workflow="diamond"}`], after[`vmcp_steps_in_flight{workflow="diamond"}`], after[`vmcp_backend_calls_in_flight{backend="tb"}`])

	var problems []string
	if failed > 0 {
		problems = append(problems, fmt.Sprintf("%d calls failed", failed))
	}
	if int(recorded) != len(all) {
		problems = append(problems, fmt.Sprintf("vmcp recorded %.0f completed runs for %d ok calls", recorded, len(all)))
	}
	// Baseline with a little slack for the HTTP server's idle keep-alive
	// connections, which close on their own after IdleTimeout.
	if after["go_goroutines"] > before["go_goroutines"]+5 {
		problems = append(problems, fmt.Sprintf("goroutines did not return to baseline (%.0f -> %.0f)", before["go_goroutines"], after["go_goroutines"]))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func goBuild(out, pkg string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	b, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build %s (run from the repository root): %v\n%s", pkg, err, b)
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

func newClient(base string) (*client.Client, error) {
	tr, err := transport.NewStreamableHTTP(base+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		return nil, err
	}
	c := client.NewClient(tr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// callOnce calls the workflow and checks its answer. On failure it returns
// a short kind for the error table.
func callOnce(c *client.Client, n int) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	msg := "m" + strconv.Itoa(n)
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "diamond", Arguments: map[string]any{"msg": msg}}})
	if err != nil {
		return "transport: " + firstLine(err.Error()), err
	}
	if res.IsError {
		text := ""
		if len(res.Content) > 0 {
			if t, ok := res.Content[0].(mcp.TextContent); ok {
				text = t.Text
			}
		}
		return "tool error: " + firstLine(text), fmt.Errorf("%s", text)
	}
	want := "left " + msg + " 3"
	out, _ := res.StructuredContent.(map[string]any)
	if out == nil || out["text"] != want {
		return "wrong result", fmt.Errorf("result %v; want text %q", res.StructuredContent, want)
	}
	return "", nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

// scrape reads /metrics into a map of series (name{labels}) to value.
func scrape(base string) (map[string]float64, error) {
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+token)
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

func pct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	if i > 0 {
		i--
	}
	return sorted[min(i, len(sorted)-1)].Round(time.Microsecond)
}

func mib(b float64) string { return fmt.Sprintf("%.1fMiB", b/(1<<20)) }
