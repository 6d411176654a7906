package storetest

// The suite is a list of named checks; Run opens a fresh store for each one
// so that they cannot see each other's runs. Values written in the suite are
// JSON-shaped (float64 numbers, map[string]any, []any) because a persistent
// store keeps outputs as JSON, and times carry nanoseconds and are compared
// with Equal, because a store may keep them in another location (UTC).

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Opener returns a new, empty store. It should register any cleanup with t.
type Opener func(t *testing.T) runtime.Store

// Run runs every conformance check as a subtest of t.
func Run(t *testing.T, open Opener) {
	checks := []struct {
		name string
		fn   func(t *testing.T, s runtime.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"FinallyFrom", testFinallyFrom},
		{"FinishWithError", testFinishWithError},
		{"FinishWritesSteps", testFinishWritesSteps},
		{"NotFound", testNotFound},
		{"DuplicateCreate", testDuplicateCreate},
		{"BadStepIndex", testBadStepIndex},
		{"CopiesNotAliases", testCopies},
		{"ListNewestFirst", testListNewestFirst},
		{"ListFilters", testListFilters},
		{"ListSeesUpdates", testListSeesUpdates},
		{"ListSummary", testListSummary},
		{"ConcurrentRuns", testConcurrentRuns},
		{"ConcurrentStepsOfOneRun", testConcurrentStepsOfOneRun},
		{"ParentLink", testParentLink},
		{"Trigger", testTrigger},
		{"Trace", testTrace},
		{"Search", testSearch},
		{"Pages", testPages},
		{"ResumeRecord", testResumeRecord},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			c.fn(t, open(t))
		})
	}
}

// base is a fixed instant with nanoseconds, so a store that rounds times
// fails the round trip.
var base = time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)

var equateTimes = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

func newRun(id, workflow string, started time.Time, steps ...string) *runtime.Run {
	r := &runtime.Run{ID: id, Workflow: workflow, Status: runtime.RunRunning, StartedAt: started}
	for _, s := range steps {
		r.Steps = append(r.Steps, runtime.StepState{ID: s, Status: runtime.StepPending})
	}
	return r
}

func mustCreate(t *testing.T, s runtime.Store, r *runtime.Run) {
	t.Helper()
	if err := s.CreateRun(context.Background(), r); err != nil {
		t.Fatalf("CreateRun(%s) = %v; want nil", r.ID, err)
	}
}

func mustGet(t *testing.T, s runtime.Store, id string) *runtime.Run {
	t.Helper()
	r, err := s.GetRun(context.Background(), id)
	if err != nil {
		t.Fatalf("GetRun(%s) = %v; want the run", id, err)
	}
	return r
}

func mustList(t *testing.T, s runtime.Store, f runtime.RunFilter) []*runtime.Run {
	t.Helper()
	runs, err := s.ListRuns(context.Background(), f)
	if err != nil {
		t.Fatalf("ListRuns(%+v) = %v; want runs", f, err)
	}
	return runs
}

func ids(runs []*runtime.Run) []string {
	out := make([]string, 0, len(runs))
	for _, r := range runs {
		out = append(out, r.ID)
	}
	return out
}

func testRoundTrip(t *testing.T, s runtime.Store) {
	ctx := context.Background()
	want := newRun("run-1", "incident", base, "fetch", "analyse", "report")
	mustCreate(t, s, want)
	if diff := cmp.Diff(want, mustGet(t, s, "run-1"), equateTimes); diff != "" {
		t.Fatalf("GetRun after CreateRun differs (-want +got):\n%s", diff)
	}

	running := runtime.StepState{ID: "analyse", Status: runtime.StepRunning, Attempts: 1, StartedAt: base.Add(time.Second)}
	if err := s.UpdateStep(ctx, "run-1", 1, running); err != nil {
		t.Fatalf("UpdateStep(running) = %v; want nil", err)
	}
	want.Steps[1] = running
	if diff := cmp.Diff(want, mustGet(t, s, "run-1"), equateTimes); diff != "" {
		t.Fatalf("GetRun after UpdateStep(running) differs (-want +got):\n%s", diff)
	}

	done := running
	done.Status = runtime.StepCompleted
	done.Attempts = 2
	done.EndedAt = base.Add(3 * time.Second)
	done.Output = map[string]any{"total": 3.5, "items": []any{"a", map[string]any{"b": true}}, "none": nil}
	if err := s.UpdateStep(ctx, "run-1", 1, done); err != nil {
		t.Fatalf("UpdateStep(completed) = %v; want nil", err)
	}
	failed := runtime.StepState{ID: "report", Status: runtime.StepFailed, Attempts: 1,
		StartedAt: base.Add(3 * time.Second), EndedAt: base.Add(4 * time.Second), Error: "backend said no"}
	if err := s.UpdateStep(ctx, "run-1", 2, failed); err != nil {
		t.Fatalf("UpdateStep(failed) = %v; want nil", err)
	}
	want.Steps[1], want.Steps[2] = done, failed

	fin := mustGet(t, s, "run-1")
	fin.Status = runtime.RunCompleted
	fin.EndedAt = base.Add(5 * time.Second)
	fin.Output = map[string]any{"summary": "ok", "count": 2.0}
	if err := s.FinishRun(ctx, fin); err != nil {
		t.Fatalf("FinishRun = %v; want nil", err)
	}
	want.Status, want.EndedAt, want.Output = fin.Status, fin.EndedAt, fin.Output
	if diff := cmp.Diff(want, mustGet(t, s, "run-1"), equateTimes); diff != "" {
		t.Fatalf("GetRun after FinishRun differs (-want +got):\n%s", diff)
	}
}

func testFinishWithError(t *testing.T, s runtime.Store) {
	r := newRun("run-err", "wf", base, "a")
	mustCreate(t, s, r)
	r.Status = runtime.RunFailed
	r.EndedAt = base.Add(time.Minute)
	r.Error = &runtime.StepError{Step: "a", Pos: ir.Pos{File: "wf.yaml", Line: 12, Col: 7}, Msg: "tool failed"}
	r.Steps[0] = runtime.StepState{ID: "a", Status: runtime.StepFailed, Attempts: 3, StartedAt: base, EndedAt: r.EndedAt, Error: "tool failed"}
	if err := s.FinishRun(context.Background(), r); err != nil {
		t.Fatalf("FinishRun = %v; want nil", err)
	}
	if diff := cmp.Diff(r, mustGet(t, s, "run-err"), equateTimes); diff != "" {
		t.Fatalf("GetRun of a failed run differs (-want +got):\n%s", diff)
	}
}

// testFinishWritesSteps checks that FinishRun records the final step states
// it is given, even those that never went through UpdateStep (for example
// steps marked skipped by skip_remaining).
func testFinishWritesSteps(t *testing.T, s runtime.Store) {
	r := newRun("run-skip", "wf", base, "a", "b")
	mustCreate(t, s, r)
	r.Status = runtime.RunCompleted
	r.EndedAt = base.Add(time.Second)
	r.Steps[0] = runtime.StepState{ID: "a", Status: runtime.StepCompleted, Attempts: 1, StartedAt: base, EndedAt: r.EndedAt, Output: map[string]any{"x": 1.0}}
	r.Steps[1] = runtime.StepState{ID: "b", Status: runtime.StepSkipped}
	if err := s.FinishRun(context.Background(), r); err != nil {
		t.Fatalf("FinishRun = %v; want nil", err)
	}
	if diff := cmp.Diff(r.Steps, mustGet(t, s, "run-skip").Steps, equateTimes); diff != "" {
		t.Fatalf("steps after FinishRun differ (-want +got):\n%s", diff)
	}
}

func testNotFound(t *testing.T, s runtime.Store) {
	ctx := context.Background()
	mustCreate(t, s, newRun("known", "wf", base, "a"))
	if _, err := s.GetRun(ctx, "missing"); !errors.Is(err, runtime.ErrRunNotFound) {
		t.Errorf("GetRun(missing) = %v; want ErrRunNotFound", err)
	}
	if err := s.UpdateStep(ctx, "missing", 0, runtime.StepState{ID: "a", Status: runtime.StepRunning}); !errors.Is(err, runtime.ErrRunNotFound) {
		t.Errorf("UpdateStep(missing) = %v; want ErrRunNotFound", err)
	}
	fin := newRun("missing", "wf", base, "a")
	fin.Status = runtime.RunCompleted
	if err := s.FinishRun(ctx, fin); !errors.Is(err, runtime.ErrRunNotFound) {
		t.Errorf("FinishRun(missing) = %v; want ErrRunNotFound", err)
	}
	if _, err := s.GetRun(ctx, "missing"); !errors.Is(err, runtime.ErrRunNotFound) {
		t.Errorf("GetRun(missing) after failed writes = %v; want ErrRunNotFound (writes must not create runs)", err)
	}
}

func testDuplicateCreate(t *testing.T, s runtime.Store) {
	mustCreate(t, s, newRun("dup", "wf", base, "a"))
	second := newRun("dup", "other", base.Add(time.Hour), "z")
	if err := s.CreateRun(context.Background(), second); err == nil {
		t.Fatalf("CreateRun of an existing id = nil; want an error")
	}
	if got := mustGet(t, s, "dup"); got.Workflow != "wf" {
		t.Errorf("after a duplicate CreateRun, workflow = %q; want the first run's %q", got.Workflow, "wf")
	}
}

func testBadStepIndex(t *testing.T, s runtime.Store) {
	mustCreate(t, s, newRun("r", "wf", base, "a", "b"))
	for _, idx := range []int{-1, 2, 100} {
		err := s.UpdateStep(context.Background(), "r", idx, runtime.StepState{ID: "x", Status: runtime.StepRunning})
		if err == nil {
			t.Errorf("UpdateStep(r, %d) with 2 steps = nil; want an error", idx)
		}
	}
	if got := mustGet(t, s, "r"); len(got.Steps) != 2 {
		t.Errorf("after bad UpdateStep calls, run has %d steps; want 2", len(got.Steps))
	}
}

func testCopies(t *testing.T, s runtime.Store) {
	ctx := context.Background()
	in := newRun("c", "wf", base, "a", "b")
	mustCreate(t, s, in)
	// The caller keeps mutating its own record after handing it over.
	in.Status = runtime.RunFailed
	in.Steps[0].Status = runtime.StepFailed
	in.Workflow = "changed"

	got := mustGet(t, s, "c")
	if got.Status != runtime.RunRunning || got.Workflow != "wf" || got.Steps[0].Status != runtime.StepPending {
		t.Fatalf("store aliases the run passed to CreateRun: got status %s, workflow %s, step0 %s; want running, wf, pending",
			got.Status, got.Workflow, got.Steps[0].Status)
	}
	// A reader mutates what it was given.
	got.Status = runtime.RunCancelled
	got.Steps[1].Status = runtime.StepSkipped
	got.Steps = append(got.Steps, runtime.StepState{ID: "extra"})
	listed := mustList(t, s, runtime.RunFilter{})
	listed[0].Steps[0].Error = "scribbled"

	again := mustGet(t, s, "c")
	if again.Status != runtime.RunRunning || len(again.Steps) != 2 || again.Steps[1].Status != runtime.StepPending || again.Steps[0].Error != "" {
		t.Fatalf("store aliases runs it returned: got status %s, %d steps, step1 %s, step0 error %q; want running, 2, pending, empty",
			again.Status, len(again.Steps), again.Steps[1].Status, again.Steps[0].Error)
	}
	// FinishRun must not keep the caller's slice either.
	fin := mustGet(t, s, "c")
	fin.Status = runtime.RunCompleted
	fin.EndedAt = base.Add(time.Second)
	if err := s.FinishRun(ctx, fin); err != nil {
		t.Fatalf("FinishRun = %v", err)
	}
	fin.Steps[0].Status = runtime.StepFailed
	if got := mustGet(t, s, "c"); got.Steps[0].Status != runtime.StepPending {
		t.Fatalf("store aliases the run passed to FinishRun: step0 = %s; want pending", got.Steps[0].Status)
	}
}

func testListNewestFirst(t *testing.T, s runtime.Store) {
	// Created out of order, so a store that lists in insertion order fails.
	for _, i := range []int{2, 0, 4, 1, 3} {
		mustCreate(t, s, newRun(fmt.Sprintf("r%d", i), "wf", base.Add(time.Duration(i)*time.Second), "a"))
	}
	want := []string{"r4", "r3", "r2", "r1", "r0"}
	if diff := cmp.Diff(want, ids(mustList(t, s, runtime.RunFilter{}))); diff != "" {
		t.Errorf("ListRuns({}) order differs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[:2], ids(mustList(t, s, runtime.RunFilter{Limit: 2}))); diff != "" {
		t.Errorf("ListRuns({Limit: 2}) differs (-want +got):\n%s", diff)
	}
	full := mustList(t, s, runtime.RunFilter{Limit: 1})
	if len(full) == 1 && len(full[0].Steps) != 1 {
		t.Errorf("ListRuns returned run %s with %d steps; want the full record with 1 step", full[0].ID, len(full[0].Steps))
	}
}

func testListFilters(t *testing.T, s runtime.Store) {
	ctx := context.Background()
	type spec struct {
		id, wf string
		status runtime.RunStatus
	}
	specs := []spec{
		{"a1", "alpha", runtime.RunCompleted},
		{"b1", "beta", runtime.RunFailed},
		{"a2", "alpha", runtime.RunFailed},
		{"b2", "beta", runtime.RunRunning},
		{"a3", "alpha", runtime.RunRunning},
		{"a4", "alpha", runtime.RunCompleted},
	}
	for i, sp := range specs {
		r := newRun(sp.id, sp.wf, base.Add(time.Duration(i)*time.Minute), "s")
		mustCreate(t, s, r)
		if sp.status != runtime.RunRunning {
			r.Status = sp.status
			r.EndedAt = r.StartedAt.Add(time.Second)
			if err := s.FinishRun(ctx, r); err != nil {
				t.Fatalf("FinishRun(%s) = %v", sp.id, err)
			}
		}
	}
	tests := []struct {
		filter runtime.RunFilter
		want   []string
	}{
		{runtime.RunFilter{}, []string{"a4", "a3", "b2", "a2", "b1", "a1"}},
		{runtime.RunFilter{Workflow: "alpha"}, []string{"a4", "a3", "a2", "a1"}},
		{runtime.RunFilter{Status: runtime.RunFailed}, []string{"a2", "b1"}},
		{runtime.RunFilter{Workflow: "beta", Status: runtime.RunRunning}, []string{"b2"}},
		{runtime.RunFilter{Workflow: "alpha", Status: runtime.RunCompleted, Limit: 1}, []string{"a4"}},
		{runtime.RunFilter{Workflow: "alpha", Limit: 3}, []string{"a4", "a3", "a2"}},
		{runtime.RunFilter{Workflow: "gamma"}, []string{}},
		{runtime.RunFilter{Status: runtime.RunCancelled}, []string{}},
	}
	for _, tt := range tests {
		got := ids(mustList(t, s, tt.filter))
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ListRuns(%+v) differs (-want +got):\n%s", tt.filter, diff)
		}
	}
}

func testListSeesUpdates(t *testing.T, s runtime.Store) {
	ctx := context.Background()
	r := newRun("u", "wf", base, "a")
	mustCreate(t, s, r)
	if err := s.UpdateStep(ctx, "u", 0, runtime.StepState{ID: "a", Status: runtime.StepCompleted, Attempts: 1, StartedAt: base, EndedAt: base.Add(time.Second)}); err != nil {
		t.Fatalf("UpdateStep = %v", err)
	}
	listed := mustList(t, s, runtime.RunFilter{Status: runtime.RunRunning})
	if len(listed) != 1 || listed[0].Steps[0].Status != runtime.StepCompleted {
		t.Fatalf("ListRuns(running) = %v; want run u with step a completed", ids(listed))
	}
	r.Status = runtime.RunCancelled
	r.EndedAt = base.Add(2 * time.Second)
	r.Steps[0] = listed[0].Steps[0]
	if err := s.FinishRun(ctx, r); err != nil {
		t.Fatalf("FinishRun = %v", err)
	}
	if got := ids(mustList(t, s, runtime.RunFilter{Status: runtime.RunRunning})); len(got) != 0 {
		t.Errorf("ListRuns(running) after FinishRun = %v; want none", got)
	}
	if got := ids(mustList(t, s, runtime.RunFilter{Status: runtime.RunCancelled})); !cmp.Equal(got, []string{"u"}) {
		t.Errorf("ListRuns(cancelled) after FinishRun = %v; want [u]", got)
	}
}

// testListSummary: a summary list has what a list of runs shows (the
// run's status, times, error and version, its steps' ids and statuses),
// whatever else a store leaves out.
func testListSummary(t *testing.T, s runtime.Store) {
	ctx := context.Background()
	r := newRun("sum", "wf", base, "a", "b")
	r.WorkflowVersion = "3"
	mustCreate(t, s, r)
	r.Steps[0] = runtime.StepState{ID: "a", Status: runtime.StepCompleted, Attempts: 2, StartedAt: base, EndedAt: base.Add(time.Second), Output: map[string]any{"big": "x"}}
	r.Steps[1] = runtime.StepState{ID: "b", Status: runtime.StepFailed, Attempts: 1, StartedAt: base, EndedAt: base.Add(time.Second), Error: "boom"}
	r.Status, r.EndedAt = runtime.RunFailed, base.Add(2*time.Second)
	r.Error = &runtime.StepError{Step: "b", Msg: "boom"}
	if err := s.FinishRun(ctx, r); err != nil {
		t.Fatalf("FinishRun = %v", err)
	}
	listed := mustList(t, s, runtime.RunFilter{Summary: true})
	if len(listed) != 1 {
		t.Fatalf("ListRuns(summary) = %v; want [sum]", ids(listed))
	}
	got := listed[0]
	if got.ID != "sum" || got.Workflow != "wf" || got.Status != runtime.RunFailed || got.WorkflowVersion != "3" ||
		!got.StartedAt.Equal(r.StartedAt) || !got.EndedAt.Equal(r.EndedAt) || got.Error == nil || got.Error.Msg != "boom" {
		t.Errorf("ListRuns(summary) run = %+v; want the run's id, workflow, status, version, times and error", got)
	}
	var steps []string
	for _, st := range got.Steps {
		steps = append(steps, st.ID+"="+string(st.Status))
	}
	if want := []string{"a=completed", "b=failed"}; !cmp.Equal(steps, want) {
		t.Errorf("ListRuns(summary) steps = %v; want %v", steps, want)
	}
}

// testConcurrentRuns plays many engines at once: each writer owns runs and
// drives them through every state while readers list and get.
func testConcurrentRuns(t *testing.T, s runtime.Store) {
	const writers, runsEach, steps = 8, 6, 5
	ctx := context.Background()
	var wg sync.WaitGroup
	errc := make(chan error, writers*runsEach*steps*2+64)
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for r := 0; r < 3; r++ {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
				}
				runs, err := s.ListRuns(ctx, runtime.RunFilter{Limit: 10})
				if err != nil {
					errc <- fmt.Errorf("ListRuns: %w", err)
					return
				}
				for _, run := range runs {
					if _, err := s.GetRun(ctx, run.ID); err != nil {
						errc <- fmt.Errorf("GetRun(%s) of a listed run: %w", run.ID, err)
						return
					}
				}
			}
		}()
	}
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < runsEach; i++ {
				id := fmt.Sprintf("w%d-r%d", w, i)
				names := make([]string, steps)
				for k := range names {
					names[k] = fmt.Sprintf("s%d", k)
				}
				run := newRun(id, fmt.Sprintf("wf%d", w%2), base.Add(time.Duration(w*runsEach+i)*time.Millisecond), names...)
				if err := s.CreateRun(ctx, run); err != nil {
					errc <- fmt.Errorf("CreateRun(%s): %w", id, err)
					return
				}
				for k := 0; k < steps; k++ {
					st := runtime.StepState{ID: names[k], Status: runtime.StepRunning, Attempts: 1, StartedAt: base}
					if err := s.UpdateStep(ctx, id, k, st); err != nil {
						errc <- fmt.Errorf("UpdateStep(%s, %d): %w", id, k, err)
						return
					}
					st.Status, st.EndedAt, st.Output = runtime.StepCompleted, base.Add(time.Second), map[string]any{"k": float64(k)}
					if err := s.UpdateStep(ctx, id, k, st); err != nil {
						errc <- fmt.Errorf("UpdateStep(%s, %d): %w", id, k, err)
						return
					}
					run.Steps[k] = st
				}
				run.Status, run.EndedAt = runtime.RunCompleted, base.Add(time.Minute)
				if err := s.FinishRun(ctx, run); err != nil {
					errc <- fmt.Errorf("FinishRun(%s): %w", id, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	for w := 0; w < writers; w++ {
		for i := 0; i < runsEach; i++ {
			id := fmt.Sprintf("w%d-r%d", w, i)
			got := mustGet(t, s, id)
			if got.Status != runtime.RunCompleted {
				t.Errorf("run %s status = %s; want completed", id, got.Status)
			}
			for k, st := range got.Steps {
				if st.Status != runtime.StepCompleted || !cmp.Equal(st.Output, map[string]any{"k": float64(k)}) {
					t.Errorf("run %s step %d = %s %v; want completed {k: %d}", id, k, st.Status, st.Output, k)
				}
			}
		}
	}
	if n := len(mustList(t, s, runtime.RunFilter{Workflow: "wf0", Limit: 1000})); n != writers/2*runsEach {
		t.Errorf("ListRuns(wf0) has %d runs; want %d", n, writers/2*runsEach)
	}
}

// testConcurrentStepsOfOneRun updates every step of one run from its own
// goroutine, as the engine does for parallel steps; a store that rewrites
// the whole run from a stale copy loses some of these updates.
func testConcurrentStepsOfOneRun(t *testing.T, s runtime.Store) {
	const steps = 24
	names := make([]string, steps)
	for i := range names {
		names[i] = fmt.Sprintf("p%02d", i)
	}
	mustCreate(t, s, newRun("par", "wf", base, names...))
	var wg sync.WaitGroup
	errs := make([]error, steps)
	for i := 0; i < steps; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for attempt := 1; attempt <= 3; attempt++ {
				st := runtime.StepState{ID: names[i], Status: runtime.StepRunning, Attempts: attempt, StartedAt: base}
				if attempt == 3 {
					st.Status, st.EndedAt, st.Output = runtime.StepCompleted, base.Add(time.Second), map[string]any{"i": float64(i)}
				}
				if err := s.UpdateStep(context.Background(), "par", i, st); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("UpdateStep(par, %d) = %v", i, err)
		}
	}
	got := mustGet(t, s, "par")
	for i, st := range got.Steps {
		want := runtime.StepState{ID: names[i], Status: runtime.StepCompleted, Attempts: 3, StartedAt: base, EndedAt: base.Add(time.Second), Output: map[string]any{"i": float64(i)}}
		if diff := cmp.Diff(want, st, equateTimes); diff != "" {
			t.Errorf("step %d after concurrent updates differs (-want +got):\n%s", i, diff)
		}
	}
}

// testFinallyFrom: the index of the first finally step is kept from
// CreateRun and through FinishRun, in GetRun and ListRuns.
func testFinallyFrom(t *testing.T, s runtime.Store) {
	ctx := context.Background()
	r := newRun("run-f", "deploy", base, "deploy", "release", "report")
	r.FinallyFrom = 1
	mustCreate(t, s, r)
	if got := mustGet(t, s, "run-f").FinallyFrom; got != 1 {
		t.Errorf("FinallyFrom after CreateRun = %d; want 1", got)
	}
	r.Status, r.EndedAt = runtime.RunCompleted, base.Add(time.Second)
	r.Steps[2] = runtime.StepState{ID: "report", Status: runtime.StepFailed, Attempts: 1, Error: "chat is down"}
	if err := s.FinishRun(ctx, r); err != nil {
		t.Fatalf("FinishRun = %v", err)
	}
	got := mustGet(t, s, "run-f")
	if got.FinallyFrom != 1 || cmp.Diff([]string{"report"}, got.FailedFinally()) != "" {
		t.Errorf("after FinishRun: FinallyFrom %d, FailedFinally %v; want 1 and [report]", got.FinallyFrom, got.FailedFinally())
	}
	if runs := mustList(t, s, runtime.RunFilter{Workflow: "deploy"}); len(runs) != 1 || runs[0].FinallyFrom != 1 {
		t.Errorf("ListRuns = %v; want run-f with FinallyFrom 1", ids(runs))
	}
}

// testParentLink checks that a child run (a workflow step's) keeps its
// parent run and step through create, finish and list, and that
// RunFilter.Parent lists exactly a run's children, newest first, combined
// with the other filters.
func testParentLink(t *testing.T, s runtime.Store) {
	ctx := context.Background()
	parent := newRun("parent", "outer", base, "sub", "each")
	mustCreate(t, s, parent)
	var kids []*runtime.Run
	for i, step := range []string{"sub", "each", "each"} {
		k := newRun(fmt.Sprintf("child-%d", i), "inner", base.Add(time.Duration(i+1)*time.Second), "a")
		k.ParentID, k.ParentStep = "parent", step
		mustCreate(t, s, k)
		kids = append(kids, k)
	}
	mustCreate(t, s, newRun("unrelated", "inner", base.Add(10*time.Second), "a"))

	if diff := cmp.Diff(kids[0], mustGet(t, s, "child-0"), equateTimes); diff != "" {
		t.Fatalf("GetRun of a child run differs (-want +got):\n%s", diff)
	}
	kids[1].Status, kids[1].EndedAt = runtime.RunFailed, base.Add(time.Minute)
	kids[1].Error = &runtime.StepError{Step: "a", Msg: "no"}
	if err := s.FinishRun(ctx, kids[1]); err != nil {
		t.Fatalf("FinishRun(child-1) = %v; want nil", err)
	}
	got := mustGet(t, s, "child-1")
	if got.ParentID != "parent" || got.ParentStep != "each" {
		t.Errorf("child-1 after FinishRun has parent %q step %q; want parent, each", got.ParentID, got.ParentStep)
	}
	if p := mustGet(t, s, "parent"); p.ParentID != "" || p.ParentStep != "" {
		t.Errorf("the parent run has parent %q step %q; want none", p.ParentID, p.ParentStep)
	}
	if diff := cmp.Diff([]string{"child-2", "child-1", "child-0"}, ids(mustList(t, s, runtime.RunFilter{Parent: "parent"}))); diff != "" {
		t.Errorf("ListRuns(Parent: parent) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"child-1"}, ids(mustList(t, s, runtime.RunFilter{Parent: "parent", Status: runtime.RunFailed}))); diff != "" {
		t.Errorf("ListRuns(Parent: parent, Status: failed) (-want +got):\n%s", diff)
	}
	if got := mustList(t, s, runtime.RunFilter{Parent: "child-0"}); len(got) != 0 {
		t.Errorf("ListRuns(Parent: child-0) = %v; want none", ids(got))
	}
}

// testResumeRecord: what a run resumed after a crash reads back (its
// params and plan digest, each step's content map, attempts and start
// time, the step left running) survives CreateRun, UpdateStep and
// FinishRun, in GetRun and ListRuns alike.
func testResumeRecord(t *testing.T, s runtime.Store) {
	ctx := context.Background()
	r := newRun("run-r", "resumable", base, "fetch", "write", "notify")
	r.Params = map[string]any{"q": "incident 7", "limit": 3.0, "opts": map[string]any{"deep": []any{true, nil}}}
	r.PlanDigest = "6f1c0ffee"
	mustCreate(t, s, r)
	if diff := cmp.Diff(r, mustGet(t, s, "run-r"), equateTimes); diff != "" {
		t.Fatalf("GetRun after CreateRun differs (-want +got):\n%s", diff)
	}

	fetched := runtime.StepState{ID: "fetch", Status: runtime.StepCompleted, Attempts: 2, StartedAt: base, EndedAt: base.Add(time.Second),
		Output:  map[string]any{"rows": []any{1.0, 2.0}},
		Content: map[string]any{"text": "two rows", "image_0": "aGk="}}
	inFlight := runtime.StepState{ID: "write", Status: runtime.StepRunning, Attempts: 1, StartedAt: base.Add(2 * time.Second)}
	for i, st := range []runtime.StepState{fetched, inFlight} {
		if err := s.UpdateStep(ctx, "run-r", i, st); err != nil {
			t.Fatalf("UpdateStep(%s) = %v; want nil", st.ID, err)
		}
	}
	r.Status = runtime.RunRunning
	r.Steps[0], r.Steps[1] = fetched, inFlight
	if diff := cmp.Diff(r, mustGet(t, s, "run-r"), equateTimes); diff != "" {
		t.Fatalf("GetRun of the run left running differs (-want +got):\n%s", diff)
	}
	if runs := mustList(t, s, runtime.RunFilter{Status: runtime.RunRunning}); len(runs) != 1 {
		t.Fatalf("ListRuns(running) = %v; want run-r", ids(runs))
	} else if diff := cmp.Diff(r, runs[0], equateTimes); diff != "" {
		t.Fatalf("ListRuns of the run left running differs (-want +got):\n%s", diff)
	}

	// The resumed run finishes under the same id.
	r.Steps[1] = runtime.StepState{ID: "write", Status: runtime.StepCompleted, Attempts: 2, StartedAt: base.Add(time.Minute), EndedAt: base.Add(61 * time.Second),
		Output: map[string]any{"ok": true}, Content: map[string]any{"text": "written"}}
	r.Steps[2] = runtime.StepState{ID: "notify", Status: runtime.StepSkipped}
	r.Status, r.EndedAt, r.Output = runtime.RunCompleted, base.Add(62*time.Second), map[string]any{"ok": true}
	if err := s.FinishRun(ctx, r); err != nil {
		t.Fatalf("FinishRun = %v; want nil", err)
	}
	if diff := cmp.Diff(r, mustGet(t, s, "run-r"), equateTimes); diff != "" {
		t.Fatalf("GetRun after FinishRun differs (-want +got):\n%s", diff)
	}
}

// testTrigger: a run's Trigger (rerun:ID) survives creation, finishing
// and listing, summaries included.
func testTrigger(t *testing.T, s runtime.Store) {
	r := newRun("again", "wf", base, "a")
	r.Trigger = runtime.TriggerRerun + "first"
	mustCreate(t, s, r)
	r.Status, r.EndedAt = runtime.RunCompleted, base.Add(time.Second)
	if err := s.FinishRun(context.Background(), r); err != nil {
		t.Fatalf("FinishRun = %v", err)
	}
	if got := mustGet(t, s, "again").Trigger; got != "rerun:first" {
		t.Errorf("GetRun(again).Trigger = %q; want rerun:first", got)
	}
	for _, summary := range []bool{false, true} {
		runs := mustList(t, s, runtime.RunFilter{Summary: summary})
		if len(runs) != 1 || runs[0].Trigger != "rerun:first" {
			t.Errorf("ListRuns(Summary: %v) = %v; want the run with trigger rerun:first", summary, runs)
		}
	}
	// The filter by trigger (a schedule's last run is found this way).
	mustCreate(t, s, newRun("plain", "wf", base.Add(2*time.Second), "a"))
	sched := newRun("tick", "wf", base.Add(3*time.Second), "a")
	sched.Trigger = "schedule:nightly"
	mustCreate(t, s, sched)
	for trigger, want := range map[string]string{"schedule:nightly": "tick", "rerun:first": "again"} {
		runs := mustList(t, s, runtime.RunFilter{Trigger: trigger, Summary: true})
		if len(runs) != 1 || runs[0].ID != want {
			t.Errorf("ListRuns(Trigger: %s) = %v; want only run %s", trigger, runs, want)
		}
	}
}

// testTrace: a run's trace id and span id (what a resumed run's span
// continues) come back from GetRun and ListRuns, also after FinishRun;
// an untraced run has neither.
func testTrace(t *testing.T, s runtime.Store) {
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	r := newRun("traced", "wf", base, "a")
	r.TraceID, r.SpanID = traceID, spanID
	mustCreate(t, s, r)
	mustCreate(t, s, newRun("untraced", "wf", base.Add(time.Second), "a"))
	if got := mustGet(t, s, "traced"); got.TraceID != traceID || got.SpanID != spanID {
		t.Errorf("GetRun(traced) trace %q span %q; want %s %s", got.TraceID, got.SpanID, traceID, spanID)
	}
	r.Status, r.EndedAt = runtime.RunCompleted, base.Add(time.Second)
	if err := s.FinishRun(context.Background(), r); err != nil {
		t.Fatalf("FinishRun = %v", err)
	}
	for _, summary := range []bool{false, true} {
		for _, run := range mustList(t, s, runtime.RunFilter{Summary: summary}) {
			want := map[string][2]string{"traced": {traceID, spanID}, "untraced": {}}[run.ID]
			if run.TraceID != want[0] || run.SpanID != want[1] {
				t.Errorf("ListRuns(Summary: %v): run %s trace %q span %q; want %q %q", summary, run.ID, run.TraceID, run.SpanID, want[0], want[1])
			}
		}
	}
}
