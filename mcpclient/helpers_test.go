package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// startNodeServer runs an npm MCP server in HTTP mode on a free port and
// returns the port once it accepts connections. The process is bounded by
// a deadline and killed (and waited for) when the test ends.
func startNodeServer(t *testing.T, bin string, args []string, env ...string) int {
	t.Helper()
	port := testenv.FreePort(t, portLo, portHi)
	t.Cleanup(startNodeServerOn(t, port, bin, args, env...))
	return port
}

// startNodeServerOn is startNodeServer on a given port; the returned stop
// kills the server and waits for it.
func startNodeServerOn(t *testing.T, port int, bin string, args []string, env ...string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := exec.CommandContext(ctx, testenv.NodeBin(t, bin), args...)
	cmd.Env = append(cmd.Environ(), append(env, fmt.Sprintf("PORT=%d", port))...)
	stderr := &testenv.Buffer{}
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting %s: %v", bin, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			stop()
			t.Fatalf("%s %v exited before listening: %v; stderr:\n%s", bin, args, err, stderr.String())
		default:
		}
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return stop
		}
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	t.Fatalf("%s %v did not listen on port %d within 30s; stderr:\n%s", bin, args, port, stderr.String())
	return nil
}

// eventually polls cond every 20ms until it holds or timeout passes.
func eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processGone reports whether no process has the pid (a zombie counts as
// alive: someone failed to wait for it).
func processGone(pid int) bool {
	err := syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH)
}

// checkNoGoroutineLeak fails when, after the test's cleanups, the number of
// goroutines does not come back to what it was at the start.
func checkNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		var now int
		if !eventually(10*time.Second, func() bool { now = runtime.NumGoroutine(); return now <= before }) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Errorf("goroutines: %d before, %d after Close; stacks:\n%s", before, now, buf[:n])
		}
	})
}

// pidOf returns the process id of a connected stdio backend.
func pidOf(t *testing.T, m *Manager, backend string) int {
	t.Helper()
	c := m.conns[backend]
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess == nil || c.sess.cmd == nil || c.sess.cmd.Process == nil {
		t.Fatalf("backend %q has no running process", backend)
	}
	return c.sess.cmd.Process.Pid
}
