package demo

// The runnable blocks of docs/temporal.md and docs/reference.md, run from
// the pages' own text (the README's tour and docs/authoring.md have their
// own tests, tour_test.go and authoring_session_test.go):
//
//   - TestTemporalPage runs the page's three commands in a fresh clone: a
//     dev server (started by testenv.StartTemporal on a free port of
//     17600-17649, the page's command with ports of its own; the clone's
//     examples/demo/vmcp-temporal.yaml is pointed at it), the worker in the
//     background, and the call, whose result must be the one the same
//     call gives on the local executor (examples/demo/vmcp.yaml, the same
//     config without executor:). The page's executor block must load as
//     the executor that config file uses.
//   - TestConsolePage serves the tour's demo (its saved files in a fresh
//     clone) with the page's command, on a free port of 17600-17649 for
//     127.0.0.1:8080, makes one run over MCP and reads the pages the page
//     shows: the runs list with that run, the run with its steps, the
//     workflow with its plan graph.
//   - TestReferenceConfig loads the reference's "every key" vmcp.yaml with
//     the config package, beside the files its workflows: list names: no
//     key of it may be unknown or wrong.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// pageBlock is one fenced block of a markdown page.
type pageBlock struct {
	lang string
	line int // the page line of its first body line
	body []string
}

// pageBlocks lists the fenced blocks of a page, in order.
func pageBlocks(file, text string) ([]pageBlock, error) {
	lines := strings.Split(text, "\n")
	var blocks []pageBlock
	for i := 0; i < len(lines); i++ {
		l := strings.TrimLeft(lines[i], " ")
		if !strings.HasPrefix(l, "```") {
			continue
		}
		indent := len(lines[i]) - len(l)
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		if end == len(lines) {
			return nil, fmt.Errorf("%s:%d: the block is never closed", file, i+1)
		}
		b := pageBlock{lang: strings.TrimPrefix(l, "```"), line: i + 2}
		for _, body := range lines[i+1 : end] {
			if len(body) >= indent {
				body = body[indent:]
			}
			b.body = append(b.body, body)
		}
		blocks = append(blocks, b)
		i = end
	}
	return blocks, nil
}

// readPage reads a page of the repository by its slash path.
func readPage(t *testing.T, root, page string) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// onlyBlock returns the one block of a page whose body has a line with
// prefix (a command or key the page is known for).
func onlyBlock(t *testing.T, page, text, lang, prefix string) pageBlock {
	t.Helper()
	blocks, err := pageBlocks(page, text)
	if err != nil {
		t.Fatal(err)
	}
	var found []pageBlock
	for _, b := range blocks {
		for _, l := range b.body {
			if b.lang == lang && strings.HasPrefix(l, prefix) {
				found = append(found, b)
				break
			}
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s has %d %s blocks with a line starting %q; want one", page, len(found), lang, prefix)
	}
	return found[0]
}

func TestPageBlocks(t *testing.T) {
	text := "a\n```sh\necho 1\n```\n- item\n\n  ```yaml\n  k: v\n  ```\n"
	got, err := pageBlocks("p.md", text)
	if err != nil {
		t.Fatal(err)
	}
	want := []pageBlock{{"sh", 3, []string{"echo 1"}}, {"yaml", 8, []string{"k: v"}}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(pageBlock{})); diff != "" {
		t.Errorf("pageBlocks (-want +got):\n%s", diff)
	}
	if _, err := pageBlocks("p.md", "```sh\nopen\n"); err == nil {
		t.Error("an unclosed block gave no error")
	}
}

const temporalPage = "docs/temporal.md"

func TestTemporalPage(t *testing.T) {
	root := testenv.RepoRoot()
	text := readPage(t, root, temporalPage)
	block := onlyBlock(t, temporalPage, text, "sh", "bin/vmcp worker")
	var commands []string
	for _, l := range block.body {
		if strings.TrimSpace(l) != "" {
			commands = append(commands, l)
		}
	}
	if len(commands) != 3 || !strings.HasPrefix(commands[0], "temporal server start-dev --headless") {
		t.Fatalf("%s:%d: want the three commands: a dev server (temporal server start-dev --headless), a worker, a call; got %q", temporalPage, block.line, commands)
	}

	const temporalConfig, localConfig = "examples/demo/vmcp-temporal.yaml", "examples/demo/vmcp.yaml"
	if !strings.Contains(commands[2], "--config "+temporalConfig+" ") {
		t.Fatalf("%s:%d: the call does not use %s: %s", temporalPage, block.line+2, temporalConfig, commands[2])
	}

	clone := freshClone(t, root)
	buildDemo(t, clone)

	// The same call on the local executor gives the result to expect.
	local := strings.Replace(commands[2], temporalConfig, localConfig, 1)
	want, err := runCall(clone, local)
	if err != nil {
		t.Fatalf("%s: %v", local, err)
	}

	// The page's executor block is the section the demo's config holds.
	executor := onlyBlock(t, temporalPage, text, "yaml", "executor:")
	cfgPath := filepath.Join(clone, "examples", "demo", "vmcp-temporal.yaml")
	demo, err := config.Load(cfgPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	section := filepath.Join(t.TempDir(), "vmcp.yaml")
	if err := os.WriteFile(section, []byte(strings.Join(executor.body, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	shown, err := config.Load(section, nil)
	if err != nil {
		t.Fatalf("%s:%d: the executor block does not load: %v", temporalPage, executor.line, err)
	}
	if diff := cmp.Diff(demo.Executor, shown.Executor); diff != "" {
		t.Errorf("%s:%d: the executor block is not the one examples/demo/vmcp-temporal.yaml uses (-config +page):\n%s", temporalPage, executor.line, diff)
	}

	// 1: the dev server, on ports of its own, and the config pointed at it.
	server := testenv.StartTemporal(t, 17600, 17649)
	src, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	const defaultAddress = "address: 127.0.0.1:7233"
	if !bytes.Contains(src, []byte(defaultAddress)) {
		t.Fatalf("examples/demo/vmcp-temporal.yaml does not say %q, the address the page's dev server listens on", defaultAddress)
	}
	src = bytes.ReplaceAll(src, []byte(defaultAddress), []byte("address: "+server.Address))
	if err := os.WriteFile(cfgPath, src, 0o644); err != nil {
		t.Fatal(err)
	}

	// 2: the worker, in the background ("its own terminal") until the test ends.
	var workerLog bytes.Buffer
	worker := exec.Command("bash", "-c", commands[1])
	worker.Dir = clone
	worker.Stdout, worker.Stderr = &workerLog, &workerLog
	worker.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- worker.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-worker.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			syscall.Kill(-worker.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})

	// 3: the run.
	got, err := runCall(clone, commands[2])
	if err != nil {
		t.Fatalf("%s:%d: %s: %v\nworker:\n%s", temporalPage, block.line+2, commands[2], err, workerLog.String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: %s gave another result than on the local executor (-local +temporal):\n%s", temporalPage, commands[2], diff)
	}
	if got["severity"] != "high" {
		t.Errorf("the run's result %v has no severity high, what the demo's analysis backend finds", got)
	}
}

// runCall runs a vmcp call command line with bash in dir and returns the
// JSON result it prints on stdout.
func runCall(dir, line string) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	call := exec.CommandContext(ctx, "bash", "-c", line)
	call.Dir = dir
	call.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	call.Stdout, call.Stderr = &stdout, &stderr
	if err := call.Run(); err != nil {
		return nil, fmt.Errorf("%v\nstderr:\n%s", err, stderr.String())
	}
	var result map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &result); err != nil {
		return nil, fmt.Errorf("the result is not JSON: %v\n%s", err, stdout.String())
	}
	return result, nil
}

const consolePage = "docs/console.md"

func TestConsolePage(t *testing.T) {
	root := testenv.RepoRoot()
	block := onlyBlock(t, consolePage, readPage(t, root, consolePage), "sh", "bin/vmcp run --transport http")
	if len(block.body) != 1 || !strings.Contains(block.body[0], "127.0.0.1:8080") {
		t.Fatalf("%s:%d: want one command serving on 127.0.0.1:8080; got %q", consolePage, block.line, block.body)
	}
	// The demo the page serves is the tour's: the files it saves.
	clone := tourClone(t, root)

	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, 17600, 17649))
	var serverLog bytes.Buffer
	server := exec.Command("bash", "-c", strings.ReplaceAll(block.body[0], "127.0.0.1:8080", addr))
	server.Dir = clone
	server.Stdout, server.Stderr = &serverLog, &serverLog
	server.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- server.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-server.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			syscall.Kill(-server.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	base := "http://" + addr
	get := func(path string) (int, string) {
		t.Helper()
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v\nserver log:\n%s", path, err, serverLog.String())
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, string(body)
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		if res, err := http.Get(base + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("%s exited: %v\n%s", block.body[0], err, serverLog.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not ready after 60s\n%s", block.body[0], serverLog.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	c := testenv.HTTPClient(t, base+"/mcp")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = "investigate_incident"
	req.Params.Arguments = map[string]any{"incident_id": "INC-1"}
	res, err := c.CallTool(ctx, req)
	if err != nil || res.IsError {
		t.Fatalf("calling investigate_incident: %v %+v", err, res)
	}
	runID, _ := res.Meta.AdditionalFields["vmcp/runId"].(string)
	if runID == "" {
		t.Fatalf("the result's _meta has no vmcp/runId: %+v", res.Meta)
	}

	for _, p := range []struct {
		path string
		want []string
	}{
		{"/ui/", []string{`data-run="` + runID + `" data-status="completed"`}}, // the runs list
		{"/ui/runs/" + runID, []string{`data-step="fetch_logs" data-status="completed"`, `data-step="create_ticket" data-status="completed"`}},
		{"/ui/workflows/investigate_incident", []string{`data-step="fetch_logs"`, `data-step="create_ticket"`}},
	} {
		code, body := get(p.path)
		if code != http.StatusOK {
			t.Errorf("GET %s: %d; want 200", p.path, code)
			continue
		}
		for _, w := range p.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: the page has no %s", p.path, w)
			}
		}
	}
}

const referencePage = "docs/reference.md"

// TestReferenceConfig loads the reference's vmcp.yaml, every key of it,
// with each ${VAR} set.
func TestReferenceConfig(t *testing.T) {
	root := testenv.RepoRoot()
	block := onlyBlock(t, referencePage, readPage(t, root, referencePage), "yaml", "compositeTools:")
	dir := t.TempDir()
	path := filepath.Join(dir, "vmcp.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(block.body, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The files its workflows: list names (their contents are the
	// compiler's business, not the config's).
	for _, name := range []string{"workflows/incident.yaml", "build/plan.json"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var asked []string
	env := func(name string) (string, bool) {
		asked = append(asked, name)
		return "value-of-" + name, true
	}
	cfg, err := config.Load(path, env)
	if err != nil {
		t.Fatalf("%s:%d: the config block does not load (lines of the block, not the page):\n%v", referencePage, block.line, err)
	}
	if len(asked) == 0 {
		t.Errorf("%s:%d: the config block read no ${VAR}; it shows them", referencePage, block.line)
	}
	// Spot checks that the block was read as the page explains it.
	if b := cfg.Backends["search"]; b == nil || b.RateLimit == nil {
		t.Errorf("%s:%d: backend search has no rateLimit: %+v", referencePage, block.line, b)
	}
	if len(cfg.Schedules) != 2 || cfg.Schedules[0].Cron == "" || cfg.Schedules[1].Every == 0 {
		t.Errorf("%s:%d: schedules = %+v; want a cron one and an every one", referencePage, block.line, cfg.Schedules)
	}
	if cfg.Server.MaxConnectionsPerClient != 128 || cfg.State.Store != "memory" {
		t.Errorf("%s:%d: server.maxConnectionsPerClient %d, state.store %q; want 128 and memory",
			referencePage, block.line, cfg.Server.MaxConnectionsPerClient, cfg.State.Store)
	}
}

// tourClone is a fresh clone of root with the files the README's tour
// saves and the two binaries it builds (bin/vmcp, bin/demo-backend): the
// demo the docs' pages start from.
func tourClone(t *testing.T, root string) string {
	t.Helper()
	tour, err := readTour(readPage(t, root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	clone := freshClone(t, root)
	for _, s := range tour {
		if s.file == "" {
			continue
		}
		path := filepath.Join(clone, filepath.FromSlash(s.file))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s.body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	buildDemo(t, clone)
	return clone
}

// buildDemo builds the binaries the docs' pages run (bin/vmcp,
// bin/demo-backend) in clone.
func buildDemo(t *testing.T, clone string) {
	t.Helper()
	for _, args := range [][]string{
		{"build", "-o", "bin/vmcp", "./cmd/vmcp"},
		{"build", "-o", "bin/demo-backend", "./examples/demo/backends"},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = clone
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
