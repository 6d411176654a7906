package runtime

// MemoryStore is the default Store: runs live in a map guarded by one
// RWMutex. UpdateStep is a map lookup and a struct assignment; the engine
// skips even that for a new run, whose record is the engine's own
// (createShared), written under the run's own lock, and skips the lookup
// for a resumed one (record). FinishRun overwrites the record made by CreateRun
// in place. Every other value handed in or out is copied (the
// Steps slice; outputs are shared, as the engine never changes an output
// after recording it), so callers never alias the store's state. The
// oldest finished runs are dropped once more than MaxRuns are kept.

import (
	"context"
	"fmt"
	"sort"
	"sync"
)

// DefaultMaxRuns is how many runs a MemoryStore keeps by default.
const DefaultMaxRuns = 1000

// MemoryStore keeps runs in memory. The zero value is not usable; call
// NewMemoryStore.
type MemoryStore struct {
	mu   sync.RWMutex
	runs map[string]*Run
	// live holds the lock of each record that a running run writes
	// itself (createShared) until the run finishes: such a record is read
	// only under its lock, and without mu held.
	live    map[string]sync.Locker
	order   []string // creation order, oldest first
	maxRuns int
}

// NewMemoryStore returns an empty store that keeps up to maxRuns runs
// (DefaultMaxRuns when maxRuns <= 0), dropping the oldest finished ones.
func NewMemoryStore(maxRuns int) *MemoryStore {
	if maxRuns <= 0 {
		maxRuns = DefaultMaxRuns
	}
	return &MemoryStore{runs: make(map[string]*Run), live: make(map[string]sync.Locker), maxRuns: maxRuns}
}

func copyRun(r *Run) *Run {
	c := *r
	c.Steps = append([]StepState(nil), r.Steps...)
	if r.Error != nil {
		e := *r.Error
		c.Error = &e
	}
	return &c
}

// CreateRun records a new run; the id must be new.
func (s *MemoryStore) CreateRun(_ context.Context, run *Run) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.runs[run.ID]; ok {
		return fmt.Errorf("run %q already exists", run.ID)
	}
	s.runs[run.ID] = copyRun(run)
	s.order = append(s.order, run.ID)
	s.evict()
	return nil
}

// evict drops the oldest finished runs beyond maxRuns. Runs are in
// creation order, so the oldest finished run is almost always first and
// eviction costs O(1). Called with mu held.
func (s *MemoryStore) evict() {
	for len(s.runs) > s.maxRuns {
		idx := -1
		for i, id := range s.order {
			if r, ok := s.runs[id]; !ok || s.live[id] == nil && r.Status.Finished() {
				idx = i
				break
			}
		}
		if idx < 0 {
			return
		}
		delete(s.runs, s.order[idx])
		if idx == 0 {
			s.order = s.order[1:]
		} else {
			s.order = append(s.order[:idx], s.order[idx+1:]...)
		}
	}
}

// UpdateStep replaces one step's record.
func (s *MemoryStore) UpdateStep(_ context.Context, runID string, index int, step StepState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.runs[runID]
	if !ok {
		return ErrRunNotFound
	}
	if index < 0 || index >= len(r.Steps) {
		return fmt.Errorf("run %q has no step %d", runID, index)
	}
	r.Steps[index] = step
	if r.Status == RunPending {
		r.Status = RunRunning
	}
	return nil
}

// createShared is CreateRun for the engine's own run record: the stored
// record is run itself. The engine's machine writes it only while guard
// (the run's scheduler lock) is held: each step in run.Steps, and the
// outcome once, when the run ends (Machine.finish); FinishRun then has
// nothing to copy. That saves a copy of the record and of every step
// state per run, and a step's write takes no lock that other runs share.
// Readers copy the record under guard until FinishRun, so the sharing is
// invisible to them.
func (s *MemoryStore) createShared(run *Run, guard sync.Locker) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.runs[run.ID]; ok {
		return fmt.Errorf("run %q already exists", run.ID)
	}
	s.runs[run.ID] = run
	s.live[run.ID] = guard
	s.order = append(s.order, run.ID)
	s.evict()
	return nil
}

// record is the store's own record of run id, for the engine's step
// writes: it assigns Steps[i] under mu, which saves a map lookup per
// write. Records of running runs are never evicted.
func (s *MemoryStore) record(id string) (*Run, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.runs[id]
	if !ok {
		return nil, ErrRunNotFound
	}
	return r, nil
}

// FinishRun records the final state of a run made by CreateRun.
func (s *MemoryStore) FinishRun(_ context.Context, run *Run) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.runs[run.ID]
	if !ok {
		return ErrRunNotFound
	}
	if cur == run { // the engine's own record (createShared), written in place
		delete(s.live, run.ID) // written for the last time
		s.evict()
		return nil
	}
	// The stored record is the store's own copy, never handed out (GetRun
	// and ListRuns copy it), so it is overwritten in place: no new Steps
	// slice when the step count is unchanged.
	steps, owner := cur.Steps, cur.Owner
	*cur = *run
	cur.Owner = owner // set by CreateRun for good
	if len(steps) == len(run.Steps) {
		copy(steps, run.Steps)
		cur.Steps = steps
	} else {
		cur.Steps = append([]StepState(nil), run.Steps...)
	}
	if run.Error != nil {
		e := *run.Error
		cur.Error = &e
	}
	s.evict()
	return nil
}

// GetRun returns a copy of a run.
func (s *MemoryStore) GetRun(_ context.Context, id string) (*Run, error) {
	s.mu.RLock()
	r, ok := s.runs[id]
	guard := s.live[id]
	if !ok || guard == nil {
		defer s.mu.RUnlock()
		if !ok {
			return nil, ErrRunNotFound
		}
		return copyRun(r), nil
	}
	s.mu.RUnlock()
	return copyLive(r, guard), nil
}

// copyLive copies a record that its run writes itself, under the run's
// lock. The caller does not hold mu: the run may hold its lock while it
// waits for mu. Once the run has finished, its record no longer changes
// and its lock, the run's alone, is free.
func copyLive(r *Run, guard sync.Locker) *Run {
	guard.Lock()
	defer guard.Unlock()
	return copyRun(r)
}

// ListRuns returns matching runs, newest first. Records of running runs
// are copied under their own locks first, then the others under mu; a run
// that finished in between is listed once, as copied first.
func (s *MemoryStore) ListRuns(_ context.Context, f RunFilter) ([]*Run, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	type liveRecord struct {
		run   *Run
		guard sync.Locker
	}
	s.mu.RLock()
	live := make([]liveRecord, 0, len(s.live))
	for id, g := range s.live {
		live = append(live, liveRecord{s.runs[id], g})
	}
	s.mu.RUnlock()
	var out []*Run
	seen := make(map[string]bool, len(live))
	for _, l := range live {
		if c := copyLive(l.run, l.guard); f.Match(c) {
			out = append(out, c)
		}
		seen[l.run.ID] = true
	}

	s.mu.RLock()
	defer s.mu.RUnlock()
	for id, r := range s.runs {
		if !seen[id] && s.live[id] == nil && f.Match(r) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].StartedAt.Equal(out[j].StartedAt) {
			return out[i].StartedAt.After(out[j].StartedAt)
		}
		return out[i].ID > out[j].ID
	})
	if len(out) > limit {
		out = out[:limit]
	}
	for i, r := range out {
		if s.runs[r.ID] == r { // the store's own record, not a copy made above
			out[i] = copyRun(r)
		}
	}
	return out, nil
}
