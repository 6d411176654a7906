package schedule

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

func TestEveryTicksOnTheEpochGrid(t *testing.T) {
	e := every(10 * time.Second)
	cases := []struct{ at, want int64 }{{0, 10}, {1, 10}, {9, 10}, {10, 20}, {-1, 0}, {-10, 0}, {-11, -10}}
	for _, c := range cases {
		if got := e.next(time.Unix(c.at, 0)); got.Unix() != c.want {
			t.Errorf("every(10s).next(%d) = %d; want %d", c.at, got.Unix(), c.want)
		}
	}
}

func TestCronTicksInItsTimezone(t *testing.T) {
	tm, err := timesOf(&config.Schedule{Name: "s", Cron: "30 9 * * 1-5", Timezone: "America/New_York"})
	if err != nil {
		t.Fatal(err)
	}
	// Saturday 2026-12-05 12:00 UTC: the next weekday 09:30 in New York
	// is Monday 2026-12-07 14:30 UTC (EST, UTC-5).
	got := tm.next(time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)).UTC()
	if want := time.Date(2026, 12, 7, 14, 30, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("next = %v; want %v", got, want)
	}
	utc, _ := timesOf(&config.Schedule{Name: "u", Cron: "*/15 * * * *"})
	if got := utc.next(time.Date(2026, 12, 5, 12, 7, 0, 0, time.UTC)); !got.Equal(time.Date(2026, 12, 5, 12, 15, 0, 0, time.UTC)) {
		t.Errorf("*/15 next = %v; want 12:15 UTC", got)
	}
}

func TestCheck(t *testing.T) {
	pos := func(line int) ir.Pos { return ir.Pos{File: "vmcp.yaml", Line: line, Col: 5} }
	scheds := []*config.Schedule{
		{Name: "ok", Workflow: "sync", Arguments: map[string]any{"n": 1}, WorkflowPos: pos(1), ArgumentsPos: pos(2)},
		{Name: "typo", Workflow: "synk", WorkflowPos: pos(3), ArgumentsPos: pos(4)},
		{Name: "args", Workflow: "sync", Arguments: map[string]any{"m": 1}, WorkflowPos: pos(5), ArgumentsPos: pos(6)},
	}
	validate := func(wf string, params map[string]any) error {
		if _, ok := params["n"]; !ok {
			return &runtime.InputError{Workflow: wf, Problems: []string{`unknown parameter "m"`}}
		}
		return nil
	}
	got := Check(scheds, []string{"sync", "report"}, validate)
	var lines []string
	for _, d := range got {
		lines = append(lines, d.String()+" ["+d.Code+"]")
	}
	want := []string{
		`vmcp.yaml:3:5: error: schedule "typo" runs workflow "synk", which is not served; did you mean sync? [unknown_workflow]`,
		`vmcp.yaml:6:5: error: schedule "args": the arguments do not match the parameters of workflow "sync": unknown parameter "m" [bad_arguments]`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("Check =\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// storeRunner records each run in a real memory store, as the engine
// would, and blocks until release is closed (nil: returns at once).
type storeRunner struct {
	store   *runtime.MemoryStore
	release chan struct{}
	started chan *runtime.Run
}

func (r *storeRunner) Run(ctx context.Context, workflow string, params map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
	run := &runtime.Run{ID: opts.RunID, Workflow: workflow, Owner: opts.Owner, Trigger: opts.Trigger, Status: runtime.RunRunning, StartedAt: time.Now(), Params: params}
	if err := r.store.CreateRun(ctx, run); err != nil {
		return nil, err
	}
	r.started <- run
	if r.release != nil {
		<-r.release
	}
	run.Status, run.EndedAt = runtime.RunCompleted, time.Now()
	return run, r.store.FinishRun(ctx, run)
}

// logBuffer is a slog handler's output that tests wait on.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	ch  chan struct{}
}

func newLog() (*logBuffer, *slog.Logger) {
	b := &logBuffer{ch: make(chan struct{}, 1000)}
	return b, slog.New(slog.NewTextHandler(b, nil))
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ch <- struct{}{}
	return b.buf.Write(p)
}

// waitFor waits until the log has a line containing s.
func (b *logBuffer) waitFor(t *testing.T, s string) string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		b.mu.Lock()
		text := b.buf.String()
		b.mu.Unlock()
		for _, line := range strings.Split(text, "\n") {
			if strings.Contains(line, s) {
				return line
			}
		}
		select {
		case <-b.ch:
		case <-timeout:
			t.Fatalf("no log line with %q in:\n%s", s, text)
		}
	}
}

func TestCatchUpRunsTheNewestMissedTickOnce(t *testing.T) {
	store := runtime.NewMemoryStore(0)
	// The schedule last fired two hours and a bit ago: two ticks of
	// every: 1h were missed.
	lastTick := every(time.Hour).next(time.Now().Add(-3 * time.Hour))
	prev := &runtime.Run{ID: "prev", Workflow: "sync", Trigger: Trigger("hourly"), Status: runtime.RunCompleted, StartedAt: lastTick, EndedAt: lastTick.Add(time.Second)}
	if err := store.CreateRun(context.Background(), prev); err != nil {
		t.Fatal(err)
	}
	runner := &storeRunner{store: store, started: make(chan *runtime.Run, 10)}
	logs, log := newLog()
	s, err := New([]*config.Schedule{{Name: "hourly", Workflow: "sync", Every: time.Hour, CatchUp: true, Arguments: map[string]any{"n": 1}}},
		Options{Runner: runner, Store: store, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	s.Start(context.Background(), context.Background())
	defer s.Stop()
	run := <-runner.started
	newest := every(time.Hour).next(lastTick)
	for n := every(time.Hour).next(newest); !n.After(time.Now()); n = every(time.Hour).next(n) {
		newest = n
	}
	if run.ID != RunID("hourly", newest) || run.Owner != "schedule:hourly" || run.Trigger != "schedule:hourly" || run.Params["n"] != 1 {
		t.Errorf("catch-up run = %+v; want id %s (the newest missed tick, %v), owner and trigger schedule:hourly, n=1", run, RunID("hourly", newest), newest)
	}
	logs.waitFor(t, "schedule catching up")
}

func TestNoCatchUpLogsTheMissedTicks(t *testing.T) {
	store := runtime.NewMemoryStore(0)
	lastTick := every(time.Hour).next(time.Now().Add(-3 * time.Hour))
	if err := store.CreateRun(context.Background(), &runtime.Run{ID: "prev", Workflow: "sync", Trigger: Trigger("hourly"), Status: runtime.RunCompleted, StartedAt: lastTick}); err != nil {
		t.Fatal(err)
	}
	runner := &storeRunner{store: store, started: make(chan *runtime.Run, 10)}
	logs, log := newLog()
	s, _ := New([]*config.Schedule{{Name: "hourly", Workflow: "sync", Every: time.Hour}}, Options{Runner: runner, Store: store, Logger: log})
	s.Start(context.Background(), context.Background())
	logs.waitFor(t, "not caught up (catchUp: false)")
	s.Stop() // the loop now waits for the next hour: nothing ran
	if n := len(runner.started); n != 0 {
		t.Errorf("%d runs started without catchUp; want 0", n)
	}
}

func TestOverlapSkipSkipsWhileTheRunRuns(t *testing.T) {
	store := runtime.NewMemoryStore(0)
	runner := &storeRunner{store: store, release: make(chan struct{}), started: make(chan *runtime.Run, 10)}
	logs, log := newLog()
	s, _ := New([]*config.Schedule{{Name: "fast", Workflow: "sync", Every: time.Second, Overlap: config.OverlapSkip}}, Options{Runner: runner, Store: store, Logger: log})
	s.Start(context.Background(), context.Background())
	first := <-runner.started
	logs.waitFor(t, "schedule tick skipped")
	close(runner.release)
	second := <-runner.started // the tick after the run ended fires
	s.Stop()
	if first.ID == second.ID {
		t.Errorf("two ticks made one run id %s", first.ID)
	}
	runs, _ := store.ListRuns(context.Background(), runtime.RunFilter{Trigger: Trigger("fast")})
	if len(runs) < 2 {
		t.Errorf("store has %d runs of schedule fast; want at least 2", len(runs))
	}
}

func TestOneTickOneRunInASharedStore(t *testing.T) {
	// Two schedulers (two replicas) on one store fire the same ticks: each
	// tick's run id is the same, so the second CreateRun is refused.
	store := runtime.NewMemoryStore(0)
	tick := time.Date(2026, 12, 2, 20, 0, 0, 0, time.UTC)
	a := &runtime.Run{ID: RunID("s", tick), Trigger: Trigger("s"), StartedAt: tick}
	b := &runtime.Run{ID: RunID("s", tick), Trigger: Trigger("s"), StartedAt: tick}
	if err := store.CreateRun(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if err := store.CreateRun(context.Background(), b); err == nil || errors.Is(err, context.Canceled) {
		t.Errorf("the second replica's CreateRun of tick %v = %v; want it refused", tick, err)
	}
	if RunID("s", tick) == RunID("s", tick.Add(time.Second)) || RunID("s", tick) == RunID("t", tick) {
		t.Error("run ids of different ticks or schedules are equal")
	}
}
