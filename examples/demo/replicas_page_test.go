package demo

// TestReplicasPage runs docs/replicas.md's two-replica demo as written:
// in a fresh clone with the tour's files (README.md's saved blocks) and
// binaries, the block's lines are typed one by one into one bash (so its
// exports and background jobs stay), as a person would in a terminal.
// What the page takes as done beforehand stands in as the test's setup:
// a PostgreSQL server with a database vmcp (a throwaway cluster on a free
// port of 17776-17779, which PGHOST, PGPORT and PGUSER point
// postgres:///vmcp at) and `npm install` (the clone's node_modules links
// the repository's). 127.0.0.1:8081 and 8082 are replaced by free ports of
// the same range. After a line that starts a replica in the background,
// the test waits for its /healthz, as the reader waits for its "serving"
// line. The last line's list must show the two runs the block made, one
// on each replica, both completed.

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

const replicasPage = "docs/replicas.md"

// Ports of this test: examples/demo's other tests take 17600-17649, and
// bench/load's replica load 17770-17775.
const replicasPageLo, replicasPageHi = 17776, 17779

func TestReplicasPage(t *testing.T) {
	root := testenv.RepoRoot()
	block := onlyBlock(t, replicasPage, readPage(t, root, replicasPage), "sh", "bin/vmcp run --transport http --listen 127.0.0.1:8081 &")
	clone := tourClone(t, root)
	pg := testenv.StartPostgres(t, replicasPageLo, replicasPageHi, testenv.PostgresOptions{})
	if err := pg.Exec("CREATE DATABASE vmcp"); err != nil {
		t.Fatal(err)
	}
	ports := strings.NewReplacer(
		"127.0.0.1:8081", fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, replicasPageLo, replicasPageHi)),
		"127.0.0.1:8082", fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, replicasPageLo, replicasPageHi)))

	sh := startShell(t, clone, "PGHOST=127.0.0.1", fmt.Sprintf("PGPORT=%d", pg.Port), "PGUSER=postgres", "PGSSLMODE=disable")
	listen := regexp.MustCompile(`--listen (\S+)`)
	var last string
	for i, line := range block.body {
		if strings.TrimSpace(line) == "" {
			continue
		}
		at := fmt.Sprintf("%s:%d", replicasPage, block.line+i)
		out, code := sh.do(t, ports.Replace(line))
		if code != 0 {
			t.Fatalf("%s: %s exited %d:\n%s\nshell's stderr:\n%s", at, line, code, out, sh.stderr())
		}
		last = out
		if m := listen.FindStringSubmatch(ports.Replace(line)); m != nil && strings.HasSuffix(strings.TrimSpace(line), "&") {
			waitServing(t, at, "http://"+m[1], sh)
		}
	}
	// The list: two investigate_incident runs, completed.
	runs := 0
	for _, l := range strings.Split(last, "\n") {
		if strings.Contains(l, "investigate_incident") {
			runs++
			if !strings.Contains(l, "completed") {
				t.Errorf("%s: a run in the list is not completed: %s", replicasPage, l)
			}
		}
	}
	if runs != 2 {
		t.Errorf("%s: the last line listed %d investigate_incident runs; want 2, one made on each replica:\n%s", replicasPage, runs, last)
	}
}

// shell is one bash that reads its commands from a pipe, as a terminal's
// shell reads what is typed.
type shell struct {
	in   io.Writer
	out  *bufio.Reader
	mu   sync.Mutex
	errs strings.Builder
}

func (s *shell) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.errs.Len() < 1<<20 {
		s.errs.Write(p)
	}
	return len(p), nil
}

func (s *shell) stderr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errs.String()
}

// startShell starts bash in dir with env added to the test's; it and
// everything it started are stopped (SIGTERM, then SIGKILL) when the test
// ends.
func startShell(t *testing.T, dir string, env ...string) *shell {
	t.Helper()
	s := &shell{}
	cmd := exec.Command("bash", "--noprofile", "--norc")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = s
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.in, s.out = in, bufio.NewReader(out)
	t.Cleanup(func() {
		in.Close()
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { io.Copy(io.Discard, out); cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	return s
}

const shellMark = "@@replicas-page-done"

// do types line, then reads its stdout up to the exit status (2 minutes at
// most).
func (s *shell) do(t *testing.T, line string) (string, int) {
	t.Helper()
	if _, err := fmt.Fprintf(s.in, "%s\necho %s $?\n", line, shellMark); err != nil {
		t.Fatalf("typing %q: %v", line, err)
	}
	type reply struct {
		out  string
		code int
		err  error
	}
	got := make(chan reply, 1)
	go func() {
		var out strings.Builder
		for {
			l, err := s.out.ReadString('\n')
			if err != nil {
				got <- reply{out.String(), -1, err}
				return
			}
			if rest, ok := strings.CutPrefix(l, shellMark+" "); ok {
				var code int
				fmt.Sscan(rest, &code)
				got <- reply{out.String(), code, nil}
				return
			}
			out.WriteString(l)
		}
	}()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("%s: the shell's stdout ended: %v\n%s\nstderr:\n%s", line, r.err, r.out, s.stderr())
		}
		return r.out, r.code
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s: still running after 2 minutes\nstderr:\n%s", line, s.stderr())
		return "", 0
	}
}

// waitServing waits (60 s at most) until base answers GET /healthz with 200.
func waitServing(t *testing.T, at, base string, sh *shell) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if res, err := http.Get(base + "/healthz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s/healthz did not answer 200 within 60s\nshell's stderr:\n%s", at, base, sh.stderr())
		}
	}
}
