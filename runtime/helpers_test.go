package runtime

import (
	"sync"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/fakebackend"
	"github.com/vmcp-dev/vmcp/internal/irbuild"
	"github.com/vmcp-dev/vmcp/ir"
)

// --- fake backend ---

// The fake backend lives in internal/fakebackend, shared with the
// semantics suite; these names keep the cases short.
type (
	fakeTool    = fakebackend.Tool
	fakeBackend = fakebackend.Backend
)

var newFake = fakebackend.New

// --- plan builders ---

// The plan builders live in internal/irbuild; these names keep the
// cases short.
type (
	M         = irbuild.M
	A         = irbuild.A
	step      = irbuild.Step
	schemaMap = irbuild.SchemaMap
)

var (
	at       = irbuild.At
	tpl      = irbuild.Tpl
	val      = irbuild.Val
	tool     = irbuild.Tool
	when     = irbuild.When
	defaults = irbuild.Defaults
	onError  = irbuild.OnError
	timeout  = irbuild.Timeout
	forEach  = irbuild.ForEach
	elicit   = irbuild.Elicit
	build    = irbuild.Build
	plan     = irbuild.Plan
)

// mustEngine makes an engine. Without a store of the test's own, its runs
// go to a replayStore: every finished run of every test is replayed.
func mustEngine(t testing.TB, p *ir.Plan, opts Options) *Engine {
	t.Helper()
	var rs *replayStore
	if opts.Store == nil {
		rs = &replayStore{MemoryStore: NewMemoryStore(0), t: t}
		opts.Store = rs
	}
	e, err := New(p, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if rs != nil {
		rs.e = e
	}
	return e
}

func stepStatuses(run *Run) map[string]StepStatus {
	out := map[string]StepStatus{}
	for _, s := range run.Steps {
		out[s.ID] = s.Status
	}
	return out
}

// eventLog collects events safely.
type eventLog struct {
	mu     sync.Mutex
	events []Event
}

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *eventLog) find(kind EventKind, stepID string) (Event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		if e.Kind == kind && e.StepID == stepID {
			return e, true
		}
	}
	return Event{}, false
}

// probeShape is the scheduling probe of TestSchedulingProbe and
// BenchmarkSchedulingProbe: slow (50ms) and fast (5ms) without
// dependencies, after_fast (5ms) after fast, join (5ms) after slow and
// after_fast.
func probeShape() (*ir.Workflow, *fakeBackend) {
	wf := build("probe",
		tool("slow", "svc.slow", nil),
		tool("fast", "svc.fast", nil),
		tool("after_fast", "svc.fast", nil, "fast"),
		tool("join", "svc.fast", nil, "slow", "after_fast"),
	)
	return wf, newFake(map[string]*fakeTool{"svc.slow": {Latency: 50 * time.Millisecond}, "svc.fast": {Latency: 5 * time.Millisecond}})
}
