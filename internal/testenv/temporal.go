package testenv

// A Temporal dev server for tests: `temporal server start-dev` from the
// Temporal CLI, in memory, headless, on loopback ports of the test's range.
// The CLI is a Go program built from the module proxy (TemporalInstall);
// it is looked up on PATH, then in the CI cache directory
// ($HOME/.cache/vmcp/bin, where .ci/run installs it), then in GOBIN/GOPATH's
// bin. A missing CLI fails the test with the install command; it never
// skips it.
//
// Readiness is asked of the server itself: `temporal operator namespace
// describe default` succeeds only once the frontend serves and the dev
// server has created its default namespace.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TemporalInstall installs the Temporal CLI that runs the dev server
// (v1.9.1 cannot be installed this way: its go.mod has a local replace).
const TemporalInstall = "go install github.com/temporalio/cli/cmd/temporal@v1.5.1"

// TemporalServer is a running dev server.
type TemporalServer struct {
	// Address is the frontend's host:port; Namespace is "default".
	Address, Namespace string
	// Bin is the CLI that runs it (also useful for `temporal workflow ...`
	// in tests).
	Bin   string
	ports []int // the frontend's and the metrics', released by Stop
	cmd   *exec.Cmd
	log   *Buffer
	done  chan struct{}
}

// TemporalBin returns the Temporal CLI's path, or fails the test naming the
// install command.
func TemporalBin(t testing.TB) string {
	t.Helper()
	p, err := findTemporal(exec.LookPath, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// findTemporal looks for the CLI on PATH, in the CI cache and in Go's bin
// directories.
func findTemporal(lookPath func(string) (string, error), getenv func(string) string) (string, error) {
	if p, err := lookPath("temporal"); err == nil {
		return p, nil
	}
	var dirs []string
	if home := getenv("HOME"); home != "" {
		dirs = append(dirs, filepath.Join(home, ".cache", "vmcp", "bin"))
	}
	if gobin := getenv("GOBIN"); gobin != "" {
		dirs = append(dirs, gobin)
	}
	if gopath := getenv("GOPATH"); gopath != "" {
		dirs = append(dirs, filepath.Join(filepath.SplitList(gopath)[0], "bin"))
	} else if home := getenv("HOME"); home != "" {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, "temporal")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("the Temporal CLI is not installed (not on PATH, nor in %v); install it with `%s` (about 2 minutes), or run .ci/run, which caches it in $HOME/.cache/vmcp/bin", dirs, TemporalInstall)
}

// StartTemporal starts a dev server on free ports in [lo, hi] (two of
// them: the frontend and its metrics), waits until it serves the default
// namespace (at most 60s), and stops it when the test ends.
func StartTemporal(t testing.TB, lo, hi int) *TemporalServer {
	t.Helper()
	bin := TemporalBin(t)
	port := FreePort(t, lo, hi)
	metrics := FreePort(t, lo, hi)
	s := &TemporalServer{
		Address:   "127.0.0.1:" + strconv.Itoa(port),
		Namespace: "default",
		Bin:       bin,
		ports:     []int{port, metrics},
		log:       &Buffer{},
		done:      make(chan struct{}),
	}
	s.cmd = exec.Command(bin, "server", "start-dev", "--headless",
		"--ip", "127.0.0.1", "--port", strconv.Itoa(port), "--metrics-port", strconv.Itoa(metrics),
		"--db-filename", "", "--log-level", "warn")
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting %s server start-dev: %v", bin, err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	t.Cleanup(s.Stop)
	if err := s.waitReady(60 * time.Second); err != nil {
		t.Fatalf("Temporal dev server on %s: %v\nserver log:\n%s", s.Address, err, s.log.String())
	}
	return s
}

// waitReady polls the server until the default namespace is described.
func (s *TemporalServer) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last []byte
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return errors.New("the server exited before it was ready")
		default:
		}
		cmd := exec.Command(s.Bin, "operator", "namespace", "describe", s.Namespace,
			"--address", s.Address, "--command-timeout", "2s")
		out, err := cmd.CombinedOutput()
		if err == nil {
			return nil
		}
		last = out
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("not ready after %v; last answer: %s", limit, last)
}

// Stop ends the server (SIGTERM to its process group, SIGKILL after 10s),
// waits for it, and hands its ports back to FreePort. It is safe to call
// twice.
func (s *TemporalServer) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	releasePorts(s.ports...)
}

// Log is what the server printed so far.
func (s *TemporalServer) Log() string { return s.log.String() }

// CPUTime is the CPU time the server's process has used so far (user and
// system, from /proc/PID/stat, in the kernel's USER_HZ ticks of 10ms), for
// benchmarks that say how busy the server was.
func (s *TemporalServer) CPUTime() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// the fields counted here start after its closing one.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields after the command", s.cmd.Process.Pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}
