package e2e

// `vmcp run` on stdio answers its client while backends are still coming
// up (issue 22, item 3). The backends here are the test backend started
// with -init-delay, which sleeps before it serves, so its initialize is
// answered that late: an hour is "still connecting" for the whole test.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// stdioLines is `vmcp run` on stdio spoken to as JSON-RPC lines.
type stdioLines struct {
	stdin   io.WriteCloser
	answers chan map[string]any
	stderr  *testenv.Buffer
	exited  chan error
	stop    func() error // close stdin, wait for the exit and return its error (once)
}

// startStdioLines starts `vmcp run --config cfg` on stdio. At the end of
// the test its stdin is closed and it is waited for (killed after 15s).
func startStdioLines(t testing.TB, cfg string) *stdioLines {
	t.Helper()
	s := &stdioLines{answers: make(chan map[string]any, 16), stderr: &testenv.Buffer{}, exited: make(chan error, 1)}
	cmd := exec.Command(bins.vmcp, "run", "--config", cfg, "--log-level", "debug")
	cmd.Stderr = s.stderr
	var err error
	if s.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start vmcp: %v", err)
	}
	go func() {
		defer close(s.answers)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				s.answers <- m
			}
		}
	}()
	go func() { s.exited <- cmd.Wait() }()
	s.stop = sync.OnceValue(func() error {
		s.stdin.Close()
		var err error
		select {
		case err = <-s.exited:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			err = <-s.exited
			t.Errorf("vmcp run did not exit within 15s of its stdin closing")
		}
		if t.Failed() {
			t.Logf("vmcp stderr:\n%s", s.stderr.String())
		}
		return err
	})
	t.Cleanup(func() { s.stop() })
	return s
}

// send writes one JSON-RPC message.
func (s *stdioLines) send(t testing.TB, msg string) {
	t.Helper()
	if _, err := io.WriteString(s.stdin, msg+"\n"); err != nil {
		t.Fatalf("write to vmcp: %v", err)
	}
}

// answer waits for the answer to request id, skipping notifications. The
// deadline only keeps a broken vmcp from hanging the test.
func (s *stdioLines) answer(t testing.TB, id int) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for {
		select {
		case m, ok := <-s.answers:
			if !ok {
				t.Fatalf("vmcp closed stdout before answering request %d\nstderr:\n%s", id, s.stderr.String())
			}
			if got, _ := m["id"].(float64); int(got) == id && m["method"] == nil {
				return m
			}
		case <-ctx.Done():
			t.Fatalf("vmcp did not answer request %d\nstderr:\n%s", id, s.stderr.String())
		}
	}
}

const initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`

func toolsCallLine(id int, name string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, id, name)
}

// TestStdioAnswersWhileABackendStarts: with one backend that takes an hour
// to come up and that no workflow uses, initialize, tools/list and a call
// of a workflow on the other backend are all answered. vmcp used to wait
// for every backend before it read its stdin.
func TestStdioAnswersWhileABackendStarts(t *testing.T) {
	cfg := writeConfig(t, `
backends:
  tb: {command: "${TB}"}
  slow: {command: "${TB}", args: [-init-delay, 1h], startTimeout: 2h}
compositeTools:
  - name: echo_it
    description: Echo through tb
    steps:
      - {id: e, tool: tb.echo, arguments: {text: hi}}
`, "")
	s := startStdioLines(t, cfg)
	s.send(t, initializeLine)
	if res, _ := s.answer(t, 1)["result"].(map[string]any); res == nil || res["serverInfo"] == nil {
		t.Fatalf("initialize was not answered with a result")
	}
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	list, _ := s.answer(t, 2)["result"].(map[string]any)
	tools, _ := list["tools"].([]any)
	if len(tools) != 1 || tools[0].(map[string]any)["name"] != "echo_it" {
		t.Fatalf("tools/list = %v; want the one tool echo_it", list)
	}
	s.send(t, toolsCallLine(3, "echo_it"))
	res, _ := s.answer(t, 3)["result"].(map[string]any)
	if want := map[string]any{"text": "hi"}; res == nil || res["isError"] == true || fmt.Sprint(res["structuredContent"]) != fmt.Sprint(want) {
		t.Fatalf("echo_it = %v; want structuredContent %v", res, want)
	}
}

// TestStdioBackendThatNeverStarts: a workflow's backend that does not
// answer initialize within its startTimeout makes vmcp unable to start;
// initialize is still answered, and the requests that need the workflows
// get an error naming the backend and its startTimeout, instead of a pipe
// that closes with the reason only on vmcp's stderr.
func TestStdioBackendThatNeverStarts(t *testing.T) {
	cfg := writeConfig(t, `
backends:
  never: {command: "${TB}", args: [-init-delay, 1h], startTimeout: 1s}
compositeTools:
  - name: echo_it
    description: Echo through never
    steps:
      - {id: e, tool: never.echo, arguments: {text: hi}}
`, "")
	s := startStdioLines(t, cfg)
	s.send(t, initializeLine)
	if res, _ := s.answer(t, 1)["result"].(map[string]any); res == nil {
		t.Fatalf("initialize was not answered with a result")
	}
	s.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(t, toolsCallLine(2, "echo_it"))
	e, _ := s.answer(t, 2)["error"].(map[string]any)
	msg, _ := e["message"].(string)
	want := `vmcp could not start: backend "never": initialize: no answer within 1s (the backend's startTimeout)`
	if msg != want {
		t.Fatalf("tools/call of echo_it answered error %q; want %q", msg, want)
	}
	if err := s.stop(); err == nil || !strings.Contains(s.stderr.String(), `vmcp: backend "never": initialize`) {
		t.Errorf("vmcp run exited with %v; want exit status 1 with the reason on stderr:\n%s", err, s.stderr.String())
	}
}

// slowBackends is a config of five backends that each answer initialize a
// second late, s1 to s5, and workflows echo1 to echoN, echoI calling sI.
// With fastFirst, s1 answers at once.
func slowBackends(workflows int, fastFirst bool) string {
	var b strings.Builder
	b.WriteString("backends:\n")
	for i := 1; i <= 5; i++ {
		if i == 1 && fastFirst {
			b.WriteString("  s1: {command: \"${TB}\"}\n")
			continue
		}
		fmt.Fprintf(&b, "  s%d: {command: \"${TB}\", args: [-init-delay, 1s]}\n", i)
	}
	b.WriteString("compositeTools:\n")
	for i := 1; i <= workflows; i++ {
		fmt.Fprintf(&b, "  - name: echo%d\n    description: Echo through s%d\n    steps:\n      - {id: e, tool: s%d.echo, arguments: {text: hi}}\n", i, i, i)
	}
	return b.String()
}

// BenchmarkStdioFirstToolsList is the time from starting `vmcp run` on
// stdio to the answers to initialize and to the first tools/list, with
// five backends that each take a second to answer initialize: all five
// used by the workflows, or only one that answers at once (the other four
// unused).
func BenchmarkStdioFirstToolsList(b *testing.B) {
	for _, bc := range []struct {
		name string
		cfg  string
	}{
		{"5slow_used", slowBackends(5, false)},
		{"1fast_used_4slow_unused", slowBackends(1, true)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := writeConfig(b, bc.cfg, "")
			var initialize, list time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				s := startStdioLines(b, cfg)
				s.send(b, initializeLine)
				s.answer(b, 1)
				initialize += time.Since(start)
				s.send(b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				s.send(b, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
				s.answer(b, 2)
				list += time.Since(start)
				b.StopTimer()
				s.stop()
				b.StartTimer()
			}
			b.ReportMetric(float64(initialize.Milliseconds())/float64(b.N), "ms-to-initialize")
			b.ReportMetric(float64(list.Milliseconds())/float64(b.N), "ms-to-tools-list")
		})
	}
}
