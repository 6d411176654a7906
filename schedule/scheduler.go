package schedule

// The scheduler: one goroutine per schedule that waits for the next tick
// and fires it (doc.go has the rules: times, the last fire, catch-up,
// overlap, run ids).

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/runtime"
)

// TriggerPrefix starts the Trigger, and the Owner, of a scheduled run
// (config.ScheduleTriggerPrefix).
const TriggerPrefix = config.ScheduleTriggerPrefix

// Trigger is the trigger and the owner of schedule name's runs.
func Trigger(name string) string { return config.ScheduleTrigger(name) }

// Runner starts a run and returns once it has ended (vmcp run's runner,
// which counts and tracks it).
type Runner interface {
	Run(ctx context.Context, workflow string, params map[string]any, opts runtime.RunOptions) (*runtime.Run, error)
}

// Options configure a Scheduler.
type Options struct {
	Runner Runner
	// Store is where the last fire of each schedule is read (the newest
	// run with its trigger) and where a running run is looked for before
	// an overlap: skip tick.
	Store  runtime.Store
	Logger *slog.Logger
}

// Scheduler fires the ticks of a set of schedules.
type Scheduler struct {
	opts  Options
	items []*item
	stop  context.CancelFunc
	wg    sync.WaitGroup
}

// item is one schedule and what the scheduler knows of it.
type item struct {
	cfg   *config.Schedule
	times times
	// active counts this process's runs of the schedule that have not
	// ended, for overlap: skip.
	mu     sync.Mutex
	active int
}

// runNamespace is the UUID namespace of tick run ids.
var runNamespace = uuid.MustParse("5b0f6f63-8a51-4f0e-9a3c-6d2f1c0e7a11")

// RunID is the id of schedule name's run for the tick at t: the same in
// every process, so that one tick makes one run in a shared store.
func RunID(name string, t time.Time) string {
	return uuid.NewSHA1(runNamespace, []byte(name+"\x00"+t.UTC().Format(time.RFC3339Nano))).String()
}

// New parses the schedules' times. Nothing runs until Start.
func New(schedules []*config.Schedule, opts Options) (*Scheduler, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Scheduler{opts: opts}
	for _, c := range schedules {
		t, err := timesOf(c)
		if err != nil {
			return nil, err
		}
		s.items = append(s.items, &item{cfg: c, times: t})
	}
	return s, nil
}

// Start runs the catch-up of each schedule, then fires its ticks, until
// ticks (the context) ends or Stop is called. Runs start under runs, the
// context they go on in (the server's), which may outlast ticks.
func (s *Scheduler) Start(ticks, runs context.Context) {
	ticks, s.stop = context.WithCancel(ticks)
	for _, it := range s.items {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.loop(ticks, runs, it)
		}()
	}
}

// Stop stops the ticks and waits for the schedule goroutines to return.
// Runs already started go on: they belong to the runner.
func (s *Scheduler) Stop() {
	if s.stop != nil {
		s.stop()
	}
	s.wg.Wait()
}

// loop is one schedule's life.
func (s *Scheduler) loop(ticks, runs context.Context, it *item) {
	log := s.opts.Logger.With("schedule", it.cfg.Name)
	now := time.Now()
	cursor := now
	last, err := s.lastRun(ticks, it)
	if err != nil {
		log.Error("schedule cannot read its last run; it fires from the next tick on, without catching up", "err", err)
	}
	if last != nil {
		if last.StartedAt.After(cursor) {
			cursor = last.StartedAt // a clock that went back
		}
		if missed := it.times.next(last.StartedAt); !missed.After(now) {
			// The newest tick missed is the last one at or before now.
			newest := missed
			for n := it.times.next(newest); !n.After(now); n = it.times.next(n) {
				newest = n
			}
			if it.cfg.CatchUp {
				log.Info("schedule catching up a tick missed while vmcp was down", "tick", newest, "lastRun", last.ID)
				s.fire(ticks, runs, it, newest, log)
			} else {
				log.Info("schedule missed ticks while vmcp was down; not caught up (catchUp: false)", "from", missed, "to", newest)
			}
		}
	}
	for {
		t := it.times.next(cursor)
		timer := time.NewTimer(time.Until(t))
		select {
		case <-ticks.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		if ticks.Err() != nil {
			return // stopped as the timer fired: the tick is missed, not run
		}
		s.fire(ticks, runs, it, t, log)
		cursor = t
	}
}

// lastRun is the newest run the schedule started, or nil.
func (s *Scheduler) lastRun(ctx context.Context, it *item) (*runtime.Run, error) {
	runs, err := s.opts.Store.ListRuns(ctx, runtime.RunFilter{Trigger: Trigger(it.cfg.Name), Limit: 1, Summary: true})
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	return runs[0], nil
}

// fire starts the run of tick t, unless overlap: skip and the previous
// run has not finished.
func (s *Scheduler) fire(ticks, runs context.Context, it *item, t time.Time, log *slog.Logger) {
	id := RunID(it.cfg.Name, t)
	if it.cfg.Overlap != config.OverlapAllow {
		it.mu.Lock()
		busy := it.active > 0
		it.mu.Unlock()
		if busy {
			log.Info("schedule tick skipped: the previous run is still running (overlap: skip)", "tick", t)
			return
		}
		if last, err := s.lastRun(ticks, it); err == nil && last != nil && !last.Status.Finished() {
			log.Info("schedule tick skipped: the previous run is still running (overlap: skip)", "tick", t, "running", last.ID)
			return
		}
	}
	it.mu.Lock()
	it.active++
	it.mu.Unlock()
	log.Info("schedule fired", "tick", t, "run", id, "workflow", it.cfg.Workflow)
	go func() {
		defer func() {
			it.mu.Lock()
			it.active--
			it.mu.Unlock()
		}()
		run, err := s.opts.Runner.Run(runs, it.cfg.Workflow, copyArgs(it.cfg.Arguments), runtime.RunOptions{
			RunID:   id,
			Owner:   Trigger(it.cfg.Name),
			Trigger: Trigger(it.cfg.Name),
		})
		switch {
		case run == nil && err != nil:
			// Refused (the shutdown began, a run limit, the id taken by
			// another process): the tick made no run.
			log.Warn("schedule's run did not start", "tick", t, "run", id, "err", err)
		case err != nil && !errors.Is(err, context.Canceled):
			log.Info("schedule's run ended", "run", id, "status", run.Status, "err", err)
		case run != nil:
			log.Info("schedule's run ended", "run", id, "status", run.Status)
		}
	}()
}

// copyArgs gives each run its own top-level map of the arguments.
func copyArgs(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
