package mcpclient

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"regexp"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/internal/testservers"
)

// chunkReader hands out its input in small pieces, so lines cross reads.
type chunkReader struct {
	s string
	n int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	k := min(len(p), r.n, len(r.s))
	copy(p, r.s[:k])
	r.s = r.s[k:]
	return k, nil
}

func TestLineLimiterReplacesLinesOverTheLimit(t *testing.T) {
	huge := strings.Repeat("x", 5000)
	tooLarge := func(id string, line string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32000,"message":"vmcp: answer over limits.maxResultBytes: ` +
			strconv.Itoa(len(line)) + `"}}`
	}
	idFirst := `{"jsonrpc":"2.0","id":7,"result":{"text":"` + huge + `"}}`
	idLast := `{"result":{"content":[{"type":"text","text":"` + huge + `\"}\\"}]},"jsonrpc":"2.0","id":"abc"}`
	nested := `{"result":{"id":99,"x":"` + huge + `"},"id":3}`
	tests := []struct {
		name, in string
		want     []string // the lines mcp-go reads
	}{
		{"short lines pass", `{"id":1,"result":{}}` + "\n" + `{"id":2}` + "\n",
			[]string{`{"id":1,"result":{}}`, `{"id":2}`}},
		{"id first", idFirst + "\n" + `{"id":8}` + "\n", []string{"<fragment>", tooLarge("7", idFirst), `{"id":8}`}},
		{"id last, as the TypeScript SDK writes it", idLast + "\n", []string{"<fragment>", tooLarge(`"abc"`, idLast)}},
		{"nested ids do not count", nested + "\n", []string{"<fragment>", tooLarge("3", nested)}},
		{"a notification over the limit is dropped", `{"method":"notifications/message","params":{"x":"` + huge + `"}}` + "\n" + `{"id":4}` + "\n",
			[]string{"<fragment>", `{"id":4}`}},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 7, 4096} {
			l := &lineLimiter{r: &chunkReader{s: tt.in, n: chunk}, limit: 1000, log: slog.New(slog.DiscardHandler), backend: "b"}
			br := bufio.NewReader(l)
			var got []string
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					break
				}
				line = strings.TrimSuffix(line, "\n")
				if len(line) > 1000 {
					t.Errorf("%s (reads of %d): a line of %d bytes passed a limit of 1000", tt.name, chunk, len(line))
				}
				if strings.HasPrefix(line, `{"jsonrpc":"2.0","id":7,"result"`) || strings.HasPrefix(line, `{"result":`) || strings.HasPrefix(line, `{"method"`) {
					line = "<fragment>"
				}
				got = append(got, line)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("%s (reads of %d): lines =\n%q\nwant\n%q", tt.name, chunk, got, tt.want)
			}
		}
	}
}

// TestStuckStdinWriteReturnsAndRestarts: the fake server stops reading its
// stdin and a request bigger than the pipe is sent. Ready reports the
// backend as not reading; the call returns when its context ends, and so do
// calls queued behind it; vmcp kills the backend, Ready says so, no call
// goroutine is left, and the next call starts a fresh process.
func TestStuckStdinWriteReturnsAndRestarts(t *testing.T) {
	m := connect(t, map[string]*config.Backend{"fake": fakeBackend(map[string]string{testservers.EnvFaults: "1"})})
	pid := pidOf(t, m, "fake")
	goroutines := goruntime.NumGoroutine()
	if _, err := call(m, context.Background(), "stop_reading", nil); err != nil {
		t.Fatalf("stop_reading: %v", err)
	}
	big := map[string]any{"message": strings.Repeat("m", 256<<10)}
	firstCtx, cancelFirst := context.WithCancel(context.Background())
	defer cancelFirst()
	first := make(chan error, 1)
	go func() {
		_, err := call(m, firstCtx, "echo", big)
		first <- err
	}()
	var ready error
	var stuck *StuckError
	if !eventually(10*time.Second, func() bool { ready = m.Ready()["fake"]; return ready != nil }) {
		t.Fatal("Ready()[fake] stayed nil while a write to it was blocked")
	}
	if !errors.As(ready, &stuck) || stuck.Killed || !strings.Contains(ready.Error(), `backend "fake" is not reading its stdin: a write has been blocked for`) {
		t.Errorf("Ready()[fake] while blocked = %v; want a StuckError saying it is not reading", ready)
	}
	// Calls queued behind the blocked write end with their deadlines.
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, errs[i] = call(m, ctx, "echo", map[string]any{"message": "queued"})
		}()
	}
	cancelFirst()
	returned := make(chan struct{})
	go func() { wg.Wait(); close(returned) }()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("calls queued behind a blocked write did not return 10s after their 300ms deadline")
	}
	for i, err := range errs {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("queued call %d: error = %v; want its deadline", i, err)
		}
	}
	select {
	case err := <-first:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the blocked call after its cancel: error = %v; want cancelled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call whose write is blocked did not return 10s after its cancel")
	}
	if !eventually(15*time.Second, func() bool { ready = m.Ready()["fake"]; return errors.As(ready, &stuck) && stuck.Killed }) {
		t.Fatalf("Ready()[fake] = %v; want the backend killed for not reading", ready)
	}
	if want := `backend "fake" stopped reading its stdin: a write was blocked for 5s, so vmcp killed it; the next call starts it again`; ready.Error() != want {
		t.Errorf("Ready()[fake] after the kill = %q; want %q", ready, want)
	}
	if !eventually(10*time.Second, func() bool { return processGone(pid) }) {
		t.Errorf("the stuck backend (pid %d) is still running", pid)
	}
	r, err := call(m, context.Background(), "echo", map[string]any{"message": "fresh"})
	if err != nil || r.Content[0].Text != "fresh" {
		t.Fatalf("call after the kill = %+v, %v; want a restarted backend to answer", r, err)
	}
	if m.Ready()["fake"] != nil {
		t.Errorf("Ready()[fake] after the restart = %v; want nil", m.Ready()["fake"])
	}
	// The abandoned calls ended with the kill: the goroutines are those of
	// one session again.
	var now int
	if !eventually(10*time.Second, func() bool { now = goruntime.NumGoroutine(); return now <= goroutines }) {
		buf := make([]byte, 1<<20)
		n := goruntime.Stack(buf, true)
		t.Errorf("goroutines: %d before the stall, %d after the restart; stacks:\n%s", goroutines, now, buf[:n])
	}
}

// TestResultOverLimitFailsTheCallOnly: an answer over MaxResultBytes fails
// its call with a ResultTooLargeError, and the same process goes on serving.
func TestResultOverLimitFailsTheCallOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m, err := Connect(ctx, map[string]*config.Backend{"fake": fakeBackend(map[string]string{testservers.EnvFaults: "1"})},
		Options{Logger: testLogger(t), MaxResultBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	pid := pidOf(t, m, "fake")
	_, err = call(m, context.Background(), "big", map[string]any{"bytes": 1 << 20})
	var tooLarge *ResultTooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Size <= 1<<20 {
		t.Fatalf("a 1 MiB answer with a 64 KiB limit: error = %v; want a ResultTooLargeError with its size", err)
	}
	if want := `backend "fake": tool "big" returned an answer (` + strconv.Itoa(tooLarge.Size) + ` bytes) over limits.maxResultBytes (65536 bytes); raise the limit in vmcp.yaml or make the tool return less`; err.Error() != want {
		t.Errorf("error = %q; want %q", err, want)
	}
	r, err := call(m, context.Background(), "big", map[string]any{"bytes": 1000})
	if err != nil || len(r.Content[0].Text) != 1000 {
		t.Errorf("a 1000-byte answer after the big one: %v; want it", err)
	}
	if got := pidOf(t, m, "fake"); got != pid {
		t.Errorf("backend pid went from %d to %d; want the same process to go on", pid, got)
	}
}

// TestToolListOverLimitFailsTheStart: a tools/list answer over the limit
// fails the start with an error naming the stage and the limit.
func TestToolListOverLimitFailsTheStart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := Connect(ctx, map[string]*config.Backend{"fake": fakeBackend(map[string]string{testservers.EnvExtraTools: "40"})},
		Options{Logger: testLogger(t), MaxResultBytes: 1024})
	want := regexp.MustCompile(`^backend "fake": tools/list: the answer \(\d+ bytes\) is over limits.maxResultBytes \(1024 bytes\)$`)
	if err == nil || !want.MatchString(err.Error()) {
		t.Errorf("Connect with a tool list over the limit: error = %v; want it to match %s", err, want)
	}
}
