package mcpclient

// A stdio backend's process and its two pipes.
//
// mcp-go's stdio transport spawns the process itself and writes each
// message to the child's stdin with a plain blocking write under a mutex,
// ignoring the caller's context. A backend that stops reading its stdin
// fills the pipe (about 64 KB); from then on every write blocks, every
// other caller queues on the mutex, and nothing times out. It also reads
// stdout with an unbounded ReadString, so one huge line is read whole into
// memory.
//
// So vmcp spawns the process here and hands mcp-go both pipes through
// transport.NewIO, which speaks JSON-RPC over streams it is given:
//
//   - stdin is a stdinWriter: every write has a deadline (stdinStallTimeout).
//     A write that misses it means the backend stopped reading; the writer
//     records that (it is the error of every call on the session and what
//     Ready reports), kills the process group and closes the pipe, so the
//     write in progress and every write queued behind it fail at once. The
//     next call starts a fresh process. While a write is blocked, Ready
//     already says so.
//   - stdout is a lineLimiter: a line (one JSON-RPC message) longer than
//     limits.maxResultBytes is cut at the limit, its rest is discarded as it
//     arrives, and an error response for its id takes its place, so the call
//     fails with a clear error, memory stays bounded and the session lives on.
//
// Calls do not wait for the transport to notice a dead backend: CallRaw
// returns as soon as the call's context ends, whatever mcp-go is doing.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
)

// stdinStallTimeout is how long one write to a stdio backend's stdin may
// block before the backend counts as stuck and is killed. A backend that
// reads its input drains a full pipe in microseconds; a busy one that
// applies back-pressure for seconds is indistinguishable from a wedged one,
// and the call slots it holds are worth more.
const stdinStallTimeout = 5 * time.Second

// stdinBlockedReport is how long a write must have been blocked before
// Ready reports the backend as not reading, ahead of the kill.
const stdinBlockedReport = time.Second

// newStdio prepares a stdio session: the command (not yet started), its
// pipes and an mcp-go client over them. startProcess starts it.
func (c *conn) newStdio(s *session) error {
	s.stderr = newStderrTail(c.m.log, c.cfg.Name)
	env := make([]string, 0, len(c.cfg.Env))
	for k, v := range c.cfg.Env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	cmd := exec.CommandContext(c.m.ctx, c.cfg.Command, c.cfg.Args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = backendProcAttr()
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 2 * time.Second
	var pipes [3][2]*os.File // stdin, stdout, stderr: {read end, write end}
	for i := range pipes {
		r, w, err := os.Pipe()
		if err != nil {
			for _, p := range pipes[:i] {
				p[0].Close()
				p[1].Close()
			}
			return fmt.Errorf("pipe: %w", err)
		}
		pipes[i] = [2]*os.File{r, w}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pipes[0][0], pipes[1][1], pipes[2][1]
	s.cmd = cmd
	s.childEnds = []*os.File{pipes[0][0], pipes[1][1], pipes[2][1]}
	s.stdin = &stdinWriter{f: pipes[0][1], backend: c.cfg.Name, onStall: s.stall}
	s.stdout = pipes[1][0]
	s.stderrR, s.exited = pipes[2][0], make(chan struct{})
	lines := &lineLimiter{r: s.stdout, limit: c.m.opts.MaxResultBytes, log: c.m.log, backend: c.cfg.Name}
	t := &stdioRelay{Stdio: transport.NewIO(lines, s.stdin, nil), backend: c.cfg.Name}
	s.client = client.NewClient(t, client.WithElicitationHandler(relay{c}))
	return nil
}

// startProcess starts a prepared stdio session's process and closes vmcp's
// copies of the child's pipe ends (ours would hide the end of file).
func (s *session) startProcess() error {
	err := s.cmd.Start()
	for _, f := range s.childEnds {
		f.Close()
	}
	s.childEnds = nil
	if err != nil {
		s.stdin.f.Close()
		s.stdout.Close()
		return err
	}
	return nil
}

// closeStdio ends a stdio session: it closes stdin (the backend's cue to
// exit), gives the process closeGrace to exit, then kills its process group
// and reaps it. It returns the process's exit error (nil for status 0).
func (s *session) closeStdio() error {
	_ = s.client.Close() // closes stdin; the process is ours to wait for
	if s.cmd.Process == nil {
		return nil
	}
	waited := make(chan error, 1)
	go func() { waited <- s.cmd.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-time.After(closeGrace):
		s.killGroup()
		err = <-waited
	}
	// Stragglers in the process group (a wrapper script's children) go
	// too, and a grandchild holding stdout open cannot keep mcp-go's
	// reader alive.
	s.killGroup()
	s.stdout.Close()
	return err
}

// stall is called by the stdin writer when a write missed its deadline:
// the backend is stuck. It kills the process; the transport then fails
// every call on the session, and fail describes them with stalled.
func (s *session) stall(err *StuckError) {
	s.stalledOnce.Do(func() {
		s.stalled.Store(err)
		s.killGroup()
	})
}

// stuckError returns why the session counts as stuck, if it does.
func (s *session) stuckError() *StuckError {
	if s.stdin == nil {
		return nil
	}
	if err, _ := s.stalled.Load().(*StuckError); err != nil {
		return err
	}
	return nil
}

// StuckError is the failure of the calls on a stdio backend that stopped
// reading its stdin.
type StuckError struct {
	Backend string
	// Blocked is how long the write had been blocked when vmcp gave up.
	Blocked time.Duration
	// Killed is set once vmcp killed the process for it.
	Killed bool
}

func (e *StuckError) Error() string {
	if !e.Killed {
		return fmt.Sprintf("backend %q is not reading its stdin: a write has been blocked for %s (vmcp kills it after %s)",
			e.Backend, e.Blocked.Round(100*time.Millisecond), stdinStallTimeout)
	}
	return fmt.Sprintf("backend %q stopped reading its stdin: a write was blocked for %s, so vmcp killed it; the next call starts it again",
		e.Backend, e.Blocked.Round(100*time.Millisecond))
}

// stdinWriter is a stdio backend's stdin. Every write must finish within
// stdinStallTimeout; one that does not calls onStall and closes the pipe, so
// that writes queued behind it fail at once too.
type stdinWriter struct {
	f       *os.File
	backend string
	onStall func(*StuckError)

	mu sync.Mutex // one write at a time (mcp-go serialises them too)
	// since is when the write in progress began (zero when none is).
	sinceMu sync.Mutex
	since   time.Time
}

func (w *stdinWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	start := time.Now()
	if err := w.f.SetWriteDeadline(start.Add(stdinStallTimeout)); err != nil {
		return 0, err
	}
	w.setSince(start)
	n, err := w.f.Write(p)
	w.setSince(time.Time{})
	if errors.Is(err, os.ErrDeadlineExceeded) {
		stuck := &StuckError{Backend: w.backend, Blocked: time.Since(start), Killed: true}
		w.onStall(stuck)
		w.f.Close()
		return n, stuck
	}
	return n, err
}

func (w *stdinWriter) Close() error { return w.f.Close() }

func (w *stdinWriter) setSince(t time.Time) {
	w.sinceMu.Lock()
	w.since = t
	w.sinceMu.Unlock()
}

// blocked returns how long the write in progress has taken so far (0 when
// none is in progress).
func (w *stdinWriter) blocked() time.Duration {
	w.sinceMu.Lock()
	defer w.sinceMu.Unlock()
	if w.since.IsZero() {
		return 0
	}
	return time.Since(w.since)
}

// lineLimiter reads a stdio backend's stdout for mcp-go, which reads it a
// line (one JSON-RPC message) at a time into memory. A line longer than
// limit is cut there: lineLimiter ends it with a newline (mcp-go drops the
// unparsable fragment), discards the rest as it arrives while finding the
// message's id, and then supplies a JSON-RPC error response for that id in
// its place. So memory holds at most about one limit's worth of a line, and
// the call gets an error naming the limit. limit <= 0 means no limit.
type lineLimiter struct {
	r       io.Reader
	limit   int
	log     *slog.Logger
	backend string

	size    int       // bytes of the current line so far
	cut     bool      // the current line is over the limit: discarding it
	id      idScanner // the current line's top-level "id"
	pending []byte    // bytes to hand out before reading more
	back    []byte    // pending's backing array, reused
	buf     []byte
}

func (l *lineLimiter) Read(p []byte) (int, error) {
	if l.limit <= 0 {
		return l.r.Read(p)
	}
	for len(l.pending) == 0 {
		if l.buf == nil {
			l.buf = make([]byte, 32<<10)
		}
		n, err := l.r.Read(l.buf)
		l.pending = l.back[:0]
		l.filter(l.buf[:n])
		l.back = l.pending[:0]
		if err != nil && len(l.pending) == 0 {
			return 0, err
		}
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	if len(l.pending) == 0 && cap(l.back) > 64<<10 {
		l.back = nil // do not pin a large backing array
	}
	return n, nil
}

// filter appends to pending what of chunk mcp-go should see.
func (l *lineLimiter) filter(chunk []byte) {
	for len(chunk) > 0 {
		nl := bytes.IndexByte(chunk, '\n')
		part := chunk
		if nl >= 0 {
			part = chunk[:nl]
		}
		l.id.feed(part)
		if !l.cut {
			if room := l.limit - l.size; len(part) <= room {
				l.pending = append(l.pending, part...)
			} else {
				l.pending = append(l.pending, part[:room]...)
				l.pending = append(l.pending, '\n') // mcp-go drops the fragment
				l.cut = true
			}
		}
		l.size += len(part)
		if nl < 0 {
			return
		}
		if l.cut {
			l.pending = append(l.pending, l.tooLarge()...)
		} else {
			l.pending = append(l.pending, '\n')
		}
		l.size, l.cut, l.id = 0, false, idScanner{}
		chunk = chunk[nl+1:]
	}
}

// tooLarge is the error response that replaces a cut line, or nothing when
// the line had no id (a notification or garbage: it is just dropped).
func (l *lineLimiter) tooLarge() []byte {
	id := l.id.result()
	if id == nil {
		l.log.Warn("dropped a backend message over limits.maxResultBytes that answers no request",
			"backend", l.backend, "bytes", l.size)
		return nil
	}
	msg := resultTooLargeMark + strconv.Itoa(l.size)
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32000,"message":"` + msg + "\"}}\n")
}

// resultTooLargeMark, followed by the answer's size in bytes, is the
// message of the error response that stands in for an answer over the
// limit; CallRaw turns it into a *ResultTooLargeError.
const resultTooLargeMark = "vmcp: answer over limits.maxResultBytes: "

// idScanner finds the top-level "id" member of a JSON object read in
// pieces, tracking only nesting depth, strings and escapes. JSON-RPC ids are
// numbers or strings; the id is kept as its JSON text when it is one of
// those and at most maxIDLen bytes long.
type idScanner struct {
	depth     int
	inString  bool
	escaped   bool
	key       []byte // the depth-1 string read last (a key when ':' follows)
	keyLong   bool
	wantValue bool // after "id": at depth 1, before the value
	inValue   bool
	value     []byte
	done      bool
}

const maxIDLen = 64

// result returns the id's JSON text, or nil when the line had no usable id.
func (s *idScanner) result() []byte {
	if !s.done {
		return nil
	}
	return s.value
}

func (s *idScanner) feed(b []byte) {
	for i := 0; i < len(b) && !s.done; i++ {
		c := b[i]
		switch {
		case s.inValue:
			s.valueByte(c)
		case s.inString:
			if s.depth != 1 && !s.escaped {
				// Skip to the next quote or backslash: most of a big
				// answer is the inside of strings.
				j := bytes.IndexAny(b[i:], `"\\`)
				if j < 0 {
					return
				}
				i += j
				c = b[i]
			}
			switch {
			case s.escaped:
				s.escaped = false
			case c == '\\':
				s.escaped = true
			case c == '"':
				s.inString = false
				continue
			}
			if s.depth == 1 {
				if len(s.key) < len("id") {
					s.key = append(s.key, c)
				} else {
					s.keyLong = true
				}
			}
		case s.wantValue:
			if c == ' ' || c == '\t' || c == '\r' {
				continue
			}
			s.wantValue = false
			if c == '"' || c == '-' || c >= '0' && c <= '9' {
				s.inValue, s.value = true, append(s.value[:0], c)
			} else {
				s.value, s.done = nil, true // null or worse: no usable id
			}
		default:
			switch c {
			case '"':
				s.inString, s.key, s.keyLong = true, s.key[:0], false
			case '{', '[':
				s.depth++
			case '}', ']':
				s.depth--
			case ':':
				if s.depth == 1 && !s.keyLong && string(s.key) == "id" {
					s.wantValue = true
				}
			}
		}
	}
}

// valueByte reads one byte of the id's value.
func (s *idScanner) valueByte(c byte) {
	if s.value[0] == '"' {
		s.value = append(s.value, c)
		switch {
		case s.escaped:
			s.escaped = false
		case c == '\\':
			s.escaped = true
		case c == '"':
			s.done = true
		}
	} else if c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' || c >= '0' && c <= '9' {
		s.value = append(s.value, c)
	} else {
		s.done = true // the number ended
	}
	if len(s.value) > maxIDLen {
		s.value, s.done = nil, true
	}
}
