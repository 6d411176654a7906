package testenv

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// InstallCommand installs the npm MCP peers that the tests run.
const InstallCommand = "npm install --no-audit --no-fund"

var (
	rootOnce sync.Once
	root     string
	rootErr  error
)

// RepoRoot returns the directory holding go.mod, found by walking up from
// the working directory (go test runs in the package's directory). It
// panics when there is none: tests cannot run outside the module.
func RepoRoot() string {
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			rootErr = err
			return
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				root = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				rootErr = fmt.Errorf("no go.mod above the working directory")
				return
			}
			dir = parent
		}
	})
	if rootErr != nil {
		panic("testenv.RepoRoot: " + rootErr.Error())
	}
	return root
}

// NodeBin returns the path of an npm-installed executable
// (<repo>/node_modules/.bin/name). When it is missing the test fails with
// the command that installs it.
func NodeBin(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(RepoRoot(), "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is not installed (%v); run `cd %s && %s` (package.json pins the versions)", name, err, RepoRoot(), InstallCommand)
	}
	// node itself comes from PATH; check it too, so the test fails here
	// and not with a confusing exec error later.
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not on PATH (%v); the npm MCP peers need Node.js 22.19 or later, which `%s` installs into node_modules/.bin (package.json pins it)", err, InstallCommand)
	}
	return p
}

var (
	portMu    sync.Mutex
	handedOut = map[int]bool{}
)

// FreePort returns a TCP port in [lo, hi] that nothing listens on (on any
// interface) and that this process has not handed out before. It starts at
// a random point of the range, so parallel test binaries sharing a range
// rarely collide. The test fails when the range is exhausted.
func FreePort(t testing.TB, lo, hi int) int {
	t.Helper()
	if lo <= 0 || hi < lo || hi > 65535 {
		t.Fatalf("FreePort(%d, %d): bad range", lo, hi)
	}
	portMu.Lock()
	defer portMu.Unlock()
	n := hi - lo + 1
	start := rand.IntN(n)
	for i := range n {
		p := lo + (start+i)%n
		if handedOut[p] {
			continue
		}
		l, err := net.Listen("tcp", fmt.Sprintf(":%d", p))
		if err != nil {
			continue
		}
		l.Close()
		handedOut[p] = true
		return p
	}
	t.Fatalf("FreePort: no free port in %d-%d", lo, hi)
	return 0
}

// releasePorts hands ports back to FreePort once nothing listens on them
// (a stopped server's), so a process that starts servers one after
// another does not run out of its range.
func releasePorts(ports ...int) {
	portMu.Lock()
	defer portMu.Unlock()
	for _, p := range ports {
		delete(handedOut, p)
	}
}

// Serve serves srv on a free loopback port in [lo, hi] until the test ends,
// then closes it and waits for Serve to return. It returns the base URL,
// http://127.0.0.1:PORT.
func Serve(t testing.TB, lo, hi int, srv *http.Server) string {
	t.Helper()
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", FreePort(t, lo, hi)))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(l) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return "http://" + l.Addr().String()
}

// Buffer is a bytes.Buffer safe for concurrent writes and reads: a child
// process's stderr, written by exec's copier and read in failure messages.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
