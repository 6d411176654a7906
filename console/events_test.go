package console

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/runtime"
)

// stream opens the console's event stream and returns its "event:" and
// "data:" lines, one per message, as "name data".
func stream(t *testing.T, srv *httptest.Server, query string) <-chan string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/ui/events"+query, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("GET /ui/events = %d %s", res.StatusCode, ct)
	}
	out := make(chan string, 100)
	go func() {
		defer close(out)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		name := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				out <- name + " " + strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return out
}

func next(t *testing.T, ch <-chan string, want string) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case msg, ok := <-ch:
			if !ok {
				t.Fatalf("the stream ended before %q", want)
			}
			if strings.Contains(msg, want) {
				return msg
			}
		case <-deadline:
			t.Fatalf("no event with %q within 10s", want)
		}
	}
}

func TestEventsFollowARun(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(f.c)
	t.Cleanup(srv.Close) // before the streams' cleanups, so after them
	all := stream(t, srv, "")
	one := stream(t, srv, "?run=blocked-only")
	time.Sleep(50 * time.Millisecond) // both subscribed
	quick := f.run(t, "quick", nil)
	next(t, all, `"run":"`+quick.ID+`","workflow":"quick","kind":"run_started"`)
	next(t, all, `"run":"`+quick.ID+`","workflow":"quick","kind":"run_finished"`)
	done := make(chan *runtime.Run, 1)
	go func() {
		run, _ := f.engine.Run(context.Background(), "blocked", nil, runtime.RunOptions{RunID: "blocked-only", OnEvent: f.c.Observe})
		done <- run
	}()
	<-f.backend.started
	if msg := next(t, one, `"kind":"step_started"`); !strings.HasPrefix(msg, `run {"run":"blocked-only"`) {
		t.Errorf("?run= stream got %s", msg)
	}
	close(f.backend.release)
	next(t, one, `"kind":"run_finished"`)
	<-done
	// The ?run= stream never carried the quick run.
	f.c.Close()
	for msg := range one {
		if strings.Contains(msg, quick.ID) {
			t.Errorf("the stream of one run got another's event: %s", msg)
		}
	}
}

func TestCloseEndsEveryStream(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(f.c)
	t.Cleanup(srv.Close) // before the streams' cleanups, so after them
	ch := stream(t, srv, "")
	time.Sleep(20 * time.Millisecond)
	f.c.Close()
	select {
	case _, ok := <-ch:
		for ok {
			_, ok = <-ch
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream is still open 5s after Close")
	}
	if res := f.get(t, "/ui/events"); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a stream after Close = %d; want 503", res.StatusCode)
	}
}

func TestSlowPageGetsResyncNotAStalledRun(t *testing.T) {
	h := newHub(Limits{}.withDefaults())
	s, _ := h.subscribe("", "x", httpsafe.LocalOperator)
	for i := range subscriberBuffer * 3 { // nobody reads: publish must not block
		h.publish(runtime.Event{Kind: runtime.EventStepStarted, RunID: "r", StepID: string(rune('a' + i%26))})
	}
	for range subscriberBuffer {
		<-s.ch
	}
	h.publish(runtime.Event{Kind: runtime.EventRunFinished, RunID: "r"})
	if e := <-s.ch; e.Kind != "resync" {
		t.Errorf("after falling behind the first event is %q; want resync", e.Kind)
	}
	if e := <-s.ch; e.Kind != string(runtime.EventRunFinished) {
		t.Errorf("after the resync comes %q; want the new event", e.Kind)
	}
}

func TestStreamReplaysWhatChangedSinceThePageWasRendered(t *testing.T) {
	f := newFixture(t)
	srv := httptest.NewServer(f.c)
	t.Cleanup(srv.Close) // before the streams' cleanups, so after them
	old := f.run(t, "quick", nil)
	time.Sleep(5 * time.Millisecond) // ?since= counts milliseconds
	rendered := time.Now()
	time.Sleep(5 * time.Millisecond)
	missed := f.run(t, "quick", nil) // between the render and the subscribe
	ch := stream(t, srv, "?since="+strconv.FormatInt(rendered.UnixMilli(), 10))
	if msg := next(t, ch, `"kind":"snapshot"`); !strings.Contains(msg, missed.ID) {
		t.Errorf("the first snapshot is %s; want the run %s that the page missed", msg, missed.ID)
	}
	f.run(t, "quick", nil)
	if msg := next(t, ch, `"kind"`); strings.Contains(msg, old.ID) {
		t.Errorf("the stream replayed a run from before the render: %s", msg)
	}
}
