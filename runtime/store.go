package runtime

// MemoryStore is the default Store: runs live in a map guarded by one
// RWMutex. UpdateStep is a map lookup and a struct assignment; the engine
// skips even that for a new run, whose record is the engine's own
// (createShared), written under the lock, and skips the lookup for a
// resumed one (record). FinishRun overwrites the record made by CreateRun
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
	mu      sync.RWMutex
	runs    map[string]*Run
	order   []string // creation order, oldest first
	maxRuns int
}

// NewMemoryStore returns an empty store that keeps up to maxRuns runs
// (DefaultMaxRuns when maxRuns <= 0), dropping the oldest finished ones.
func NewMemoryStore(maxRuns int) *MemoryStore {
	if maxRuns <= 0 {
		maxRuns = DefaultMaxRuns
	}
	return &MemoryStore{runs: make(map[string]*Run), maxRuns: maxRuns}
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
			if r, ok := s.runs[id]; !ok || r.Status.Finished() {
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
// record is run itself. The engine's machine writes it only under mu (its
// RecordGuard): each step by assigning run.Steps[i], and the outcome once,
// when the run ends (Machine.finish); FinishRun then has nothing to copy.
// That saves a copy of the record and of every step state per run.
// Readers still get copies, so the sharing is invisible to them.
func (s *MemoryStore) createShared(run *Run) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.runs[run.ID]; ok {
		return fmt.Errorf("run %q already exists", run.ID)
	}
	s.runs[run.ID] = run
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
	defer s.mu.RUnlock()
	r, ok := s.runs[id]
	if !ok {
		return nil, ErrRunNotFound
	}
	return copyRun(r), nil
}

// ListRuns returns matching runs, newest first.
func (s *MemoryStore) ListRuns(_ context.Context, f RunFilter) ([]*Run, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	var out []*Run
	for _, r := range s.runs {
		if f.Match(r) {
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
		out[i] = copyRun(r)
	}
	return out, nil
}
