package cmdb

// The ideal makespan: how long a run of a compiled plan takes on an
// engine that costs nothing, when every backend call takes exactly its
// backend's known latency, under the same parallelism limits as vmcp.
//
// The plan becomes a tree of tasks (FromRun): a tool step is a call; a
// forEach step is a loop of its iterations (a call each, or nothing for an
// iteration that its condition skipped), at most the loop's maxParallel at
// once; the workflow is a DAG of its steps, at most its maxParallel
// running at once. How many iterations a loop has depends on data, so it
// is read from a recorded run of the same plan (its step outputs'
// iterations), which makes the ideal exact for that run.
//
// Simulate then runs the tree as a discrete-event simulation: time only
// moves when a call ends. A call waits for a slot of its backend, then of
// the whole server (vmcp's runtime.LimitCalls, first come first served),
// and ends exactly its latency later. A DAG starts its ready nodes by the
// longest remaining path in time (each node's uncontended duration plus
// its longest chain of dependents), the rule vmcp's ready queue follows. A
// loop starts its iterations in order as slots free. Every decision is
// made at the earliest moment it can be, so the result is the makespan of
// a zero-overhead list schedule: the critical path under the parallelism
// limits. LowerBound is the plain bound max(critical path, work per slot),
// which no schedule can beat; the list schedule is at most a few call
// latencies above it here.

import (
	"container/heap"
	"fmt"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Limits are the parallelism limits of a run: the server's calls in
// flight (Total) and each backend's (PerBackend); 0 is unlimited. The
// workflow's and loops' own maxParallel are in the plan.
type Limits struct {
	Total      int
	PerBackend map[string]int
}

// Task is a unit of a run: a Call, a Loop of tasks, or a DAG of tasks.
type Task struct {
	Backend string // a call to this backend, when Loop and DAG are nil

	// Loop: Items run at most Parallel at once.
	Loop     bool
	Parallel int
	Items    []*Task

	// DAG: Nodes with Deps (indexes into Nodes), at most Parallel of them
	// running at once (when Loop is false and Nodes is not nil).
	Nodes []*Task
	Deps  [][]int
}

// Empty is a task that ends as soon as it starts (a skipped iteration).
func Empty() *Task { return &Task{Loop: true} }

// Call is a task that calls backend once.
func Call(backend string) *Task { return &Task{Backend: backend} }

func (t *Task) isCall() bool { return !t.Loop && t.Nodes == nil }

// FromRun builds the task tree of workflow wf as run ran it. It refuses a
// step it cannot model (elicitation, workflow steps), since an ideal that
// leaves work out would flatter the engine.
func FromRun(wf *ir.Workflow, run *runtime.Run) (*Task, error) {
	if len(run.Steps) < len(wf.Steps) {
		return nil, fmt.Errorf("run %s has %d steps; the workflow has %d", run.ID, len(run.Steps), len(wf.Steps))
	}
	return graphTask(wf.Steps, orDefault(wf.MaxParallel, 10), func(i int) (string, any) {
		return string(run.Steps[i].Status), run.Steps[i].Output
	})
}

// graphTask is the DAG of steps, parallel at once, where record gives
// each step's recorded status and output.
func graphTask(steps []*ir.Step, parallel int, record func(i int) (status string, output any)) (*Task, error) {
	dag := &Task{Parallel: parallel, Nodes: []*Task{}}
	for i, st := range steps {
		status, output := record(i)
		var t *Task
		var err error
		switch {
		case status == string(runtime.StepSkipped):
			t = Empty()
		case st.Type == ir.StepTool:
			t = Call(st.Tool.Backend)
		case st.Type == ir.StepForEach:
			t, err = loopTask(st, output)
		default:
			err = fmt.Errorf("step %q: a %s step has no model in the ideal makespan", st.ID, st.Type)
		}
		if err != nil {
			return nil, err
		}
		dag.Nodes = append(dag.Nodes, t)
		dag.Deps = append(dag.Deps, st.Deps)
	}
	return dag, nil
}

// loopTask is forEach step st as its recorded output says it ran: one
// task per iteration, nothing for an iteration that its condition
// skipped, a call for an inner tool step, and for a body the DAG of its
// steps as the iteration's "steps" records say they ran (a body has no
// slot limit of its own).
func loopTask(st *ir.Step, output any) (*Task, error) {
	out, _ := output.(map[string]any)
	iters, ok := out["iterations"].([]any)
	if !ok {
		return nil, fmt.Errorf("step %q: its recorded output has no iterations", st.ID)
	}
	fe := st.ForEach
	loop := &Task{Loop: true, Parallel: min(orDefault(fe.MaxParallel, 10), 50)}
	for _, it := range iters {
		m, _ := it.(map[string]any)
		var t *Task
		switch {
		case m["status"] == string(runtime.StepSkipped):
			t = Empty()
		case fe.Step != nil && fe.Step.Type == ir.StepTool:
			t = Call(fe.Step.Tool.Backend)
		case fe.Steps != nil:
			recs, _ := m["steps"].(map[string]any)
			var err error
			t, err = graphTask(fe.Steps, 0, func(i int) (string, any) {
				rec, _ := recs[fe.Steps[i].ID].(map[string]any)
				status, _ := rec["status"].(string)
				return status, rec["output"]
			})
			if err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("step %q: a loop over a %s step has no model in the ideal makespan", st.ID, fe.Step.Type)
		}
		loop.Items = append(loop.Items, t)
	}
	return loop, nil
}

func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// Calls counts the backend calls of t.
func (t *Task) Calls() int {
	if t.isCall() {
		return 1
	}
	n := 0
	for _, c := range append(t.Items, t.Nodes...) {
		n += c.Calls()
	}
	return n
}

// duration is t's makespan with no limit but its own Parallel: the
// critical path.
func (t *Task) duration(lat map[string]time.Duration) time.Duration {
	switch {
	case t.isCall():
		return lat[t.Backend]
	case t.Loop:
		// Items start in order as slots free: simulate the waves of a
		// loop on its own.
		return (&sim{lat: lat}).run(&Task{Loop: true, Parallel: t.Parallel, Items: t.Items})
	default:
		d, _ := t.remaining(lat)
		var longest time.Duration
		for _, r := range d {
			longest = max(longest, r)
		}
		return longest
	}
}

// remaining gives, for each node of a DAG, its duration plus the longest
// chain of dependents after it (the priority of the ready queue), and the
// dependents of each node.
func (t *Task) remaining(lat map[string]time.Duration) ([]time.Duration, [][]int) {
	n := len(t.Nodes)
	dependents := make([][]int, n)
	for i, deps := range t.Deps {
		for _, d := range deps {
			dependents[d] = append(dependents[d], i)
		}
	}
	rem := make([]time.Duration, n)
	// Deps point backwards in plan order (the plan is topologically
	// sorted), so one backward pass sees every dependent first.
	for i := n - 1; i >= 0; i-- {
		var after time.Duration
		for _, d := range dependents[i] {
			after = max(after, rem[d])
		}
		rem[i] = t.Nodes[i].duration(lat) + after
	}
	return rem, dependents
}

// LowerBound is max(the critical path with each loop's own Parallel, the
// calls to each backend divided by its slots, all calls divided by the
// total slots), each call costing its latency.
func LowerBound(t *Task, lat map[string]time.Duration, lim Limits) time.Duration {
	bound := t.duration(lat)
	work, all := t.Work(lat)
	for b, w := range work {
		if n := lim.PerBackend[b]; n > 0 {
			bound = max(bound, w/time.Duration(n))
		}
	}
	if lim.Total > 0 {
		bound = max(bound, all/time.Duration(lim.Total))
	}
	return bound
}

// Work is the time t's calls take, each costing its latency: per backend
// and in all. All divided by a run's wall time is the mean number of
// calls in flight.
func (t *Task) Work(lat map[string]time.Duration) (perBackend map[string]time.Duration, all time.Duration) {
	perBackend = map[string]time.Duration{}
	var walk func(*Task)
	walk = func(t *Task) {
		if t.isCall() {
			perBackend[t.Backend] += lat[t.Backend]
			all += lat[t.Backend]
			return
		}
		for _, c := range append(t.Items, t.Nodes...) {
			walk(c)
		}
	}
	walk(t)
	return perBackend, all
}

// Simulate returns t's ideal makespan under lim (see the top of the file).
func Simulate(t *Task, lat map[string]time.Duration, lim Limits) time.Duration {
	return (&sim{lat: lat, lim: lim, perBackend: map[string]int{}}).run(t)
}

type sim struct {
	lat        map[string]time.Duration
	lim        Limits
	now        time.Duration
	events     eventHeap
	seq        int
	inFlight   int
	perBackend map[string]int
	waiting    []waitingCall
}

type waitingCall struct {
	backend string
	done    func()
}

type event struct {
	at  time.Duration
	seq int // ties end in the order the calls started: deterministic
	fn  func()
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func (s *sim) run(t *Task) time.Duration {
	if s.perBackend == nil {
		s.perBackend = map[string]int{}
	}
	finished := false
	s.start(t, func() { finished = true })
	for s.events.Len() > 0 {
		e := heap.Pop(&s.events).(event)
		s.now = e.at
		e.fn()
	}
	if !finished {
		panic("cmdb.Simulate: the task never finished (a dependency cycle?)")
	}
	return s.now
}

// start begins t now and calls done when it has ended.
func (s *sim) start(t *Task, done func()) {
	switch {
	case t.isCall():
		s.waiting = append(s.waiting, waitingCall{t.Backend, done})
		s.dispatch()
	case t.Loop:
		s.startLoop(t, done)
	default:
		s.startDAG(t, done)
	}
}

// dispatch starts every waiting call that has slots, in arrival order.
func (s *sim) dispatch() {
	kept := s.waiting[:0]
	for _, w := range s.waiting {
		own := s.lim.PerBackend[w.backend]
		if (own > 0 && s.perBackend[w.backend] >= own) || (s.lim.Total > 0 && s.inFlight >= s.lim.Total) {
			kept = append(kept, w)
			continue
		}
		s.inFlight++
		s.perBackend[w.backend]++
		s.seq++
		heap.Push(&s.events, event{at: s.now + s.lat[w.backend], seq: s.seq, fn: func() {
			s.inFlight--
			s.perBackend[w.backend]--
			w.done()
			s.dispatch()
		}})
	}
	s.waiting = kept
}

func (s *sim) startLoop(t *Task, done func()) {
	n := len(t.Items)
	if n == 0 {
		done()
		return
	}
	next, ended := 0, 0
	var startOne func()
	startOne = func() {
		i := next
		next++
		s.start(t.Items[i], func() {
			ended++
			if next < n {
				startOne()
			}
			if ended == n {
				done()
			}
		})
	}
	for range min(orDefault(t.Parallel, n), n) {
		if next < n {
			startOne()
		}
	}
}

func (s *sim) startDAG(t *Task, done func()) {
	n := len(t.Nodes)
	if n == 0 {
		done()
		return
	}
	rem, dependents := t.remaining(s.lat)
	waitingOn := make([]int, n)
	var ready []int
	for i, deps := range t.Deps {
		waitingOn[i] = len(deps)
		if len(deps) == 0 {
			ready = append(ready, i)
		}
	}
	running, ended := 0, 0
	var fill func()
	fill = func() {
		for running < orDefault(t.Parallel, n) && len(ready) > 0 {
			// The ready node with the longest remaining path; ties by
			// plan order.
			best := 0
			for j := range ready {
				if rem[ready[j]] > rem[ready[best]] || (rem[ready[j]] == rem[ready[best]] && ready[j] < ready[best]) {
					best = j
				}
			}
			i := ready[best]
			ready = append(ready[:best], ready[best+1:]...)
			running++
			s.start(t.Nodes[i], func() {
				running--
				ended++
				for _, d := range dependents[i] {
					if waitingOn[d]--; waitingOn[d] == 0 {
						ready = append(ready, d)
					}
				}
				if ended == n {
					done()
					return
				}
				fill()
			})
		}
	}
	fill()
}
