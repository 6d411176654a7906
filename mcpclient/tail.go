package mcpclient

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
)

// tailSize bounds the stderr kept per stdio backend process; error
// messages quote the last tailLines lines of it.
const (
	tailSize  = 16 << 10
	tailLines = 10
)

// stderrTail keeps the last tailSize bytes a backend process wrote to
// stderr and logs each complete line at debug level.
type stderrTail struct {
	log     *slog.Logger
	backend string

	mu      sync.Mutex
	buf     []byte
	partial []byte // an unfinished line, for logging
}

func newStderrTail(log *slog.Logger, backend string) *stderrTail {
	return &stderrTail{log: log, backend: backend}
}

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailSize {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-tailSize:]...)
	}
	t.partial = append(t.partial, p...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimRight(string(t.partial[:i]), "\r"); line != "" {
			t.log.Debug("backend stderr", "backend", t.backend, "line", line)
		}
		t.partial = t.partial[i+1:]
	}
	if len(t.partial) > tailSize {
		t.partial = t.partial[len(t.partial)-tailSize:]
	}
	return len(p), nil
}

// String returns the last tailLines non-empty lines, or "".
func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimRight(string(t.buf), "\r\n"), "\n")
	var keep []string
	for i := len(lines) - 1; i >= 0 && len(keep) < tailLines; i-- {
		if l := strings.TrimRight(lines[i], "\r"); strings.TrimSpace(l) != "" {
			keep = append(keep, l)
		}
	}
	for i, j := 0, len(keep)-1; i < j; i, j = i+1, j-1 {
		keep[i], keep[j] = keep[j], keep[i]
	}
	return strings.Join(keep, "\n")
}
