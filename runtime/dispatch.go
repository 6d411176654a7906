package runtime

// When a step's start is stored: at its first dispatched backend call.
//
// Resume (restore.go) treats a step recorded running as one whose call
// may have reached its backend. The machine makes a step running when it
// starts it, but its backend call may then wait for a slot (LimitCalls:
// server.maxParallel, backends.NAME.maxParallel, shared by every run). A
// step that dies waiting never reached the backend, and must resume as a
// pending step does, not end the run interrupted.
//
// So with a store other than MemoryStore (one that outlives the process)
// the driver does not write the start record when the machine asks for
// it (ActionRecord of step_started). It hands the record to the step, in
// its context (a deferredStart), and the step's first backend call writes
// it once the call has its slots and before it is sent: limitedBackend
// calls back between taking its slots and calling its backend
// (dispatchingBackend), and any other backend is called right after the
// write. A non-idempotent step waits for that write (as it waited before,
// at its start), an idempotent one queues it. So the number of store
// writes per step is unchanged; the durable one just moved from the
// machine's lock to the step's goroutine. A step that never calls its
// backend (it fails on its arguments, its loop has no items, it was
// cancelled while waiting for a slot) is stored only with its end.
//
// The step's event (step_started) still goes out when the machine starts
// it: events say what the machine decided, the store what a crash leaves.
//
// Only steps whose every call is a backend call of this run are deferred:
// a tool step, a loop of them. A workflow step (or a loop with one) runs a
// child run whose calls are its own, so its start is stored at once, as
// before. MemoryStore dies with the process: its records are written as
// the machine asks.

import (
	"context"
	"sync"

	"github.com/vmcp-dev/vmcp/ir"
)

// deferredStart is a step's start record, written by its first
// dispatched backend call.
type deferredStart struct {
	once    sync.Once
	r       *runState
	index   int
	state   StepState // the record as of the start
	durable bool      // wait for the write (the step is not idempotent)
}

// deferredStartKey is the context key of a step's deferredStart.
type deferredStartKey struct{}

// write stores the start once; concurrent calls of the same step (a
// loop's iterations) wait until it is written.
func (d *deferredStart) write() {
	d.once.Do(func() {
		if d.durable {
			d.r.writeStep(d.index, d.state) // returns once committed
			return
		}
		d.r.updates <- stepUpdate{index: d.index, state: d.state}
	})
}

// defersStart reports whether the start of step sp is written by its
// first backend call: every call the step makes is a backend call of this
// run. Only asked with a store other than MemoryStore (r.updates is set).
func (r *runState) defersStart(sp *stepPlan) bool {
	direct := true
	sp.eachStep(func(s *stepPlan) {
		if s.kind == ir.StepWorkflow {
			direct = false
		}
	})
	return direct
}

// deferStart hands step i's start record to its context.
func (r *runState) deferStart(ctx context.Context, i int, durable bool) context.Context {
	d := &deferredStart{r: r, index: i, state: r.run.Steps[i], durable: durable}
	return context.WithValue(ctx, deferredStartKey{}, d)
}

// dispatchingBackend is a Backend that may hold a call back before it
// sends it (limitedBackend, waiting for a slot): it calls dispatched,
// when not nil, once the call goes ahead and before it reaches the
// backend.
type dispatchingBackend interface {
	callDispatched(ctx context.Context, call ToolCall, dispatched func()) (*ToolResult, error)
}

// callStoring makes one backend call of a step, with a store other than
// MemoryStore: it writes the step's deferred start record first (see the
// top of the file).
func (r *runState) callStoring(ctx context.Context, call ToolCall) (*ToolResult, error) {
	if d, _ := ctx.Value(deferredStartKey{}).(*deferredStart); d != nil {
		if b, ok := r.env.Backend.(dispatchingBackend); ok {
			return b.callDispatched(ctx, call, d.write)
		}
		d.write()
	}
	return r.env.Backend.CallTool(ctx, call)
}
