package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/compiler"
)

// bigLoopShape is a workflow in which a big loop on the critical path
// competes with many small independent steps for a tight workflow
// maxParallel of 2: chains independent chains of three calls (c<k>_1 ->
// c<k>_2 -> c<k>_3), then prep, one call, and loop, a forEach after prep
// over the items parameter, 10 iterations at once. Every call takes the
// same time, one round trip.
//
// In steps, a chain's head has 3 steps left and prep 2, so a queue that
// counts steps starts every head (and every middle step, which comes
// first in plan order) before prep, and the loop's waves come last. The
// loop over n items takes ceil(n/10) round trips, so prep has 1 +
// ceil(n/10) left, the most of all.
func bigLoopShape(chains int) string {
	var b strings.Builder
	b.WriteString(`compositeTools:
  - name: big_loop
    description: a big loop on the critical path beside many small steps
    maxParallel: 2
    parameters:
      items: {type: array}
    steps:
`)
	for k := 1; k <= chains; k++ {
		fmt.Fprintf(&b, "      - {id: c%d_1, tool: svc.small}\n", k)
		fmt.Fprintf(&b, "      - {id: c%d_2, tool: svc.small, dependsOn: [c%d_1]}\n", k, k)
		fmt.Fprintf(&b, "      - {id: c%d_3, tool: svc.small, dependsOn: [c%d_2]}\n", k, k)
	}
	b.WriteString(`      - {id: prep, tool: svc.small}
      - id: loop
        type: forEach
        dependsOn: [prep]
        collection: "{{.params.items}}"
        itemVar: n
        maxParallel: 10
        maxIterations: 500
        step: {tool: svc.small, arguments: {n: "{{.forEach.n}}"}}
`)
	return b.String()
}

func numbers(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

// startLog records the order in which steps start and end, from the
// run's events (emitted under the scheduler's lock, so in order).
type startLog struct {
	mu     sync.Mutex
	starts []string
	events []string // "start <id>" and "end <id>"
}

func (l *startLog) onEvent(ev Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch ev.Kind {
	case EventStepStarted:
		l.starts = append(l.starts, ev.StepID)
		l.events = append(l.events, "start "+ev.StepID)
	case EventStepCompleted, EventStepFailed, EventStepSkipped:
		l.events = append(l.events, "end "+ev.StepID)
	}
}

// after returns the event that follows want in the log, or "".
func (l *startLog) after(want string) string {
	i := slices.Index(l.events, want)
	if i < 0 || i+1 >= len(l.events) {
		return ""
	}
	return l.events[i+1]
}

func TestReadyQueueStartsTheBigLoopsPathFirst(t *testing.T) {
	p := compileYAML(t, bigLoopShape(8))
	fb := newFake(map[string]*fakeTool{"svc.small": {Latency: 2 * time.Millisecond}})
	e := mustEngine(t, p, Options{Backend: fb})
	var log startLog
	run, err := e.Run(context.Background(), "big_loop", M{"items": numbers(240)}, RunOptions{OnEvent: log.onEvent})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v", run, err)
	}
	// prep leads to 24 waves of the loop: it goes before every chain head,
	// and the loop takes the slot prep frees.
	if log.starts[0] != "prep" {
		t.Errorf("first step started = %q; want prep (order %v)", log.starts[0], log.starts)
	}
	if got := log.after("end prep"); got != "start loop" {
		t.Errorf("event after prep ended = %q; want start loop (events %v)", got, log.events)
	}
	if got := len(fb.CallsTo("loop")); got != 240 {
		t.Errorf("loop made %d calls; want 240", got)
	}
}

// A collection read from a step is weighed when that step ends, and the
// loop's other pending dependency rises above the small steps.
func TestReadyQueueWeighsALoopWhenTheStepsItReadsEnd(t *testing.T) {
	const src = `compositeTools:
  - name: listed_loop
    description: the loop's collection comes from list; it also waits for prep
    maxParallel: 1
    steps:
      - {id: list, tool: svc.list}
      - {id: a_1, tool: svc.small}
      - {id: a_2, tool: svc.small, dependsOn: [a_1]}
      - {id: b_1, tool: svc.small}
      - {id: b_2, tool: svc.small, dependsOn: [b_1]}
      - {id: c_1, tool: svc.small}
      - {id: c_2, tool: svc.small, dependsOn: [c_1]}
      - {id: prep, tool: svc.small}
      - id: loop
        type: forEach
        dependsOn: [list, prep]
        collection: "{{.steps.list.output.items}}"
        itemVar: n
        maxParallel: 10
        maxIterations: 500
        step: {tool: svc.small, arguments: {n: "{{.forEach.n}}"}}
`
	log := runListedLoop(t, src, "listed_loop", 100)
	// list, prep and the chain heads all have 2 steps left; list comes
	// first in plan order. Once it has ended, the loop weighs 10 waves, so
	// prep (11) goes before the heads (2), and the loop right after prep.
	want := []string{"list", "prep", "loop"}
	if got := log.starts[:3]; !slices.Equal(got, want) {
		t.Errorf("first starts = %v; want %v (order %v)", got, want, log.starts)
	}
}

// A literal collection's length is known when the plan is prepared.
func TestReadyQueueWeighsALiteralCollection(t *testing.T) {
	items := make([]string, 30)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	src := `compositeTools:
  - name: literal_loop
    description: a literal 30-item loop after prep, beside two-step chains
    maxParallel: 1
    steps:
      - {id: a_1, tool: svc.small}
      - {id: a_2, tool: svc.small, dependsOn: [a_1]}
      - {id: b_1, tool: svc.small}
      - {id: b_2, tool: svc.small, dependsOn: [b_1]}
      - {id: prep, tool: svc.small}
      - id: loop
        type: forEach
        dependsOn: [prep]
        collection: [` + strings.Join(items, ", ") + `]
        itemVar: n
        maxParallel: 10
        step: {tool: svc.small, arguments: {n: "{{.forEach.n}}"}}
`
	p := compileYAML(t, src)
	fb := newFake(map[string]*fakeTool{"svc.small": {Latency: time.Millisecond}})
	e := mustEngine(t, p, Options{Backend: fb})
	var log startLog
	run, err := e.Run(context.Background(), "literal_loop", nil, RunOptions{OnEvent: log.onEvent})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v", run, err)
	}
	want := []string{"prep", "loop"}
	if got := log.starts[:2]; !slices.Equal(got, want) {
		t.Errorf("first starts = %v; want %v (order %v)", got, want, log.starts)
	}
}

// BenchmarkBigLoopMakespan runs bigLoopShape(8) over 240 items with every
// call taking 2ms and reports the makespan against the ideal: the
// critical path under the parallelism limits, in round trips, times the
// latency. The loop takes 24 waves after prep, 25 round trips; the other
// 24 calls fit beside it in the second slot, so the ideal is 50ms. A
// queue that counts steps starts the loop after the chains' first two
// rounds of steps and prep, about 33 round trips in. loop-start-ms is
// when the loop started and loop-ms how long its 24 waves took (48ms at
// the backend's latency alone): what is left of makespan/ideal once the
// loop starts first is the loop's own overhead per wave.
func BenchmarkBigLoopMakespan(b *testing.B) {
	const (
		latency = 2 * time.Millisecond
		chains  = 8
		items   = 240
	)
	p, diags := compiler.Compile([]compiler.Source{{Name: "wf.yaml", Src: []byte(bigLoopShape(chains))}}, compiler.Options{})
	if diags.HasErrors() {
		b.Fatalf("compile: %v", diags)
	}
	fb := newFake(map[string]*fakeTool{"svc.small": {Latency: latency}})
	e := mustEngine(b, p, Options{Backend: fb})
	params := M{"items": numbers(items)}
	loopWaves := (items + 9) / 10
	ideal := time.Duration(max(1+loopWaves, (3*chains+1+loopWaves+1)/2)) * latency
	var makespan, loopStart, loopTime time.Duration
	for i := 0; i < b.N; i++ {
		run, err := e.Run(context.Background(), "big_loop", params, RunOptions{})
		if err != nil || run.Status != RunCompleted {
			b.Fatalf("Run = %v, %v", run, err)
		}
		makespan += run.EndedAt.Sub(run.StartedAt)
		for _, s := range run.Steps {
			if s.ID == "loop" {
				loopStart += s.StartedAt.Sub(run.StartedAt)
				loopTime += s.EndedAt.Sub(s.StartedAt)
			}
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(makespan)/n/float64(ideal), "makespan/ideal")
	b.ReportMetric(float64(makespan)/n/float64(time.Millisecond), "makespan-ms")
	b.ReportMetric(float64(loopStart)/n/float64(time.Millisecond), "loop-start-ms")
	b.ReportMetric(float64(loopTime)/n/float64(time.Millisecond), "loop-ms")
}

// A loop that becomes ready together with small steps goes first: its
// collection is weighed as the step it reads ends, before anything else
// starts.
func TestReadyQueueStartsAReadyBigLoopFirst(t *testing.T) {
	const src = `compositeTools:
  - name: ready_loop
    description: the loop becomes ready when list ends, beside two-step chains
    maxParallel: 1
    steps:
      - {id: list, tool: svc.list}
      - {id: a_1, tool: svc.small}
      - {id: a_2, tool: svc.small, dependsOn: [a_1]}
      - {id: b_1, tool: svc.small}
      - {id: b_2, tool: svc.small, dependsOn: [b_1]}
      - id: loop
        type: forEach
        dependsOn: [list]
        collection: "{{.steps.list.output.items}}"
        itemVar: n
        maxParallel: 5
        step: {tool: svc.small, arguments: {n: "{{.forEach.n}}"}}
`
	log := runListedLoop(t, src, "ready_loop", 20)
	// list and the heads have 2 steps left, list first in plan order;
	// then the loop weighs 4 waves against the heads' 2.
	want := []string{"list", "loop", "a_1", "b_1", "a_2", "b_2"}
	if !slices.Equal(log.starts, want) {
		t.Errorf("starts = %v; want %v", log.starts, want)
	}
}

// runListedLoop runs workflow name of src, whose svc.list answers items
// 0..n-1, with 1 ms per call, and returns the order of step starts.
func runListedLoop(t *testing.T, src, name string, n int) *startLog {
	t.Helper()
	items := numbers(n)
	fb := newFake(map[string]*fakeTool{
		"svc.list":  {Latency: time.Millisecond, Result: func(map[string]any) any { return M{"items": items} }},
		"svc.small": {Latency: time.Millisecond},
	})
	e := mustEngine(t, compileYAML(t, src), Options{Backend: fb})
	log := &startLog{}
	run, err := e.Run(context.Background(), name, nil, RunOptions{OnEvent: log.onEvent})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v", run, err)
	}
	return log
}
