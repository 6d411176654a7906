package runtime

// Retention of finished runs (state.retention: {finished, maxRuns}).
//
// Every store prunes in the background on the same schedule
// (StartRetention): every Interval (a quarter of Finished, from 10ms
// to 10 minutes; a minute when only MaxRuns is set). A prune deletes the
// finished runs (any final status) that ended more than Finished ago, then
// the oldest finished runs, by start time, while more than MaxRuns runs
// are kept. A run still pending or running is never pruned, whatever its
// age and however many runs there are; its steps, content and outputs go
// with the run.

import (
	"sync"
	"time"
)

// Retention says which finished runs a store keeps. The zero value keeps
// them all.
type Retention struct {
	// Finished is how long a finished run is kept after it ended; 0 keeps
	// it for ever.
	Finished time.Duration
	// MaxRuns is how many runs are kept at most; 0 means no cap.
	MaxRuns int
	// Every is how often the store prunes; 0 takes Interval's default.
	Every time.Duration
}

// Enabled reports whether r prunes anything.
func (r Retention) Enabled() bool { return r.Finished > 0 || r.MaxRuns > 0 }

// Interval is how often a store prunes by r: Every when set, else a
// quarter of Finished (from 10ms to 10 minutes), or a minute without
// Finished.
func (r Retention) Interval() time.Duration {
	if r.Every > 0 {
		return r.Every
	}
	if r.Finished <= 0 {
		return time.Minute
	}
	return min(max(r.Finished/4, 10*time.Millisecond), 10*time.Minute)
}

// StartRetention calls prune every r.Interval() on its own
// goroutine, until the returned stop is called (stop waits for a prune in
// progress and may be called more than once). With r not Enabled it does
// nothing.
func StartRetention(r Retention, prune func()) (stop func()) {
	if !r.Enabled() {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(r.Interval())
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				prune()
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		<-done
	}
}

// Prune deletes the finished runs that ended before cutoff (none when
// cutoff is zero) and returns how many it deleted; the MemoryStore's
// maxRuns cap applies on every write. Running and pending runs stay.
func (s *MemoryStore) Prune(cutoff time.Time) int {
	if cutoff.IsZero() {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := s.order[:0]
	n := 0
	for _, id := range s.order {
		r, ok := s.runs[id]
		if !ok {
			continue
		}
		if s.live[id] == nil && r.Status.Finished() && !r.EndedAt.IsZero() && r.EndedAt.Before(cutoff) {
			delete(s.runs, id)
			n++
			continue
		}
		kept = append(kept, id)
	}
	clear(s.order[len(kept):])
	s.order = kept
	return n
}

// Retain prunes s by r in the background (StartRetention): finished runs
// older than r.Finished are deleted; r.MaxRuns is the store's cap, given
// to NewMemoryStore. now is time.Now outside tests.
func (s *MemoryStore) Retain(r Retention, now func() time.Time) (stop func()) {
	if r.Finished <= 0 {
		return func() {}
	}
	return StartRetention(r, func() { s.Prune(now().Add(-r.Finished)) })
}
