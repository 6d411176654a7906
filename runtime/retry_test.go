package runtime

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

// retryWith is onError retry with maxRetries 3, a 1ms delay and the given
// tuning.
func retryWith(f func(*ir.OnError)) func(*ir.Step) {
	return func(s *ir.Step) {
		s.OnError = ir.OnError{Action: ir.ActionRetry, MaxRetries: 3, RetryDelay: ir.Duration(time.Millisecond)}
		f(&s.OnError)
	}
}

func retryOn(kinds ...string) func(*ir.OnError) {
	return func(oe *ir.OnError) { oe.RetryOn = kinds }
}

func TestRetryOn(t *testing.T) {
	cases := []struct {
		name     string
		tool     *fakeTool
		tuning   func(*ir.OnError)
		status   RunStatus
		attempts int
		errHas   string
	}{
		{"isError not retried under [error]", &fakeTool{isError: true}, retryOn(ir.RetryOnError), RunFailed, 1, "quota exceeded (not retried: the failure kind is toolError, and retryOn is [error])"},
		{"isError retried under [toolError]", &fakeTool{isError: true}, retryOn(ir.RetryOnToolError), RunFailed, 4, "quota exceeded"},
		{"isError retried by default", &fakeTool{isError: true}, func(*ir.OnError) {}, RunFailed, 4, "quota exceeded"},
		{"backend failure not retried under [toolError]", &fakeTool{failFirst: 2}, retryOn(ir.RetryOnToolError), RunFailed, 1, "backend unavailable"},
		{"backend failure retried under [error]", &fakeTool{failFirst: 2}, retryOn(ir.RetryOnError), RunCompleted, 3, ""},
		{"backend failure not retried under [timeout]", &fakeTool{failFirst: 2}, retryOn(ir.RetryOnTimeout), RunFailed, 1, "backend unavailable (not retried: the failure kind is error, and retryOn is [timeout])"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc := runCase{
				wf:       build("r", tool("a", "svc.x", nil).with(retryWith(c.tuning))),
				tools:    map[string]*fakeTool{"svc.x": c.tool},
				status:   c.status,
				attempts: map[string]int{"a": c.attempts},
			}
			if c.errHas != "" {
				rc.errHas = []string{c.errHas}
			}
			rc.run(t)
		})
	}
}

// attemptTimeout bounds each attempt: a hanging first attempt is cut off
// and retried (kind timeout), the second answers.
func TestAttemptTimeout(t *testing.T) {
	attempt := func(oe *ir.OnError) { oe.AttemptTimeout = ir.Duration(20 * time.Millisecond) }
	runCase{
		wf:       build("at", tool("a", "svc.x", nil).with(retryWith(attempt)).with(timeout(time.Minute))),
		tools:    map[string]*fakeTool{"svc.x": {hangFirst: 1}},
		status:   RunCompleted,
		attempts: map[string]int{"a": 2},
		check: func(t *testing.T, run *Run, fb *fakeBackend) {
			if fb.sawCancel.Load() != 1 {
				t.Errorf("backend saw %d cancelled calls; want 1 (the first attempt)", fb.sawCancel.Load())
			}
		},
	}.run(t)

	// Under retryOn [error], an attempt timeout is not retried.
	runCase{
		wf: build("at", tool("a", "svc.x", nil).with(retryWith(func(oe *ir.OnError) {
			attempt(oe)
			oe.RetryOn = []string{ir.RetryOnError}
		})).with(timeout(time.Minute))),
		tools:    map[string]*fakeTool{"svc.x": {hang: true}},
		status:   RunFailed,
		attempts: map[string]int{"a": 1},
		errHas:   []string{`step "a"`, "the attempt timed out after 20ms (attemptTimeout)"},
	}.run(t)

	// Every attempt times out: the step fails after maxRetries+1 attempts,
	// well inside its own timeout.
	runCase{
		wf:       build("at", tool("a", "svc.x", nil).with(retryWith(attempt)).with(timeout(time.Minute))),
		tools:    map[string]*fakeTool{"svc.x": {hang: true}},
		status:   RunFailed,
		attempts: map[string]int{"a": 4},
		errHas:   []string{"the attempt timed out after 20ms"},
	}.run(t)
}

var retryingInRE = regexp.MustCompile(`retrying in ([0-9.]+m?s)`)

// maxDelay caps every interval: with multiplier 10 from 1ms, the waits
// would be 1ms, 10ms, 100ms, 1s; under maxDelay 4ms none is over 6ms
// (4ms plus the 50% randomisation).
func TestMaxDelayCapsRetryInterval(t *testing.T) {
	w := build("md", tool("a", "svc.x", nil).with(func(s *ir.Step) {
		s.OnError = ir.OnError{Action: ir.ActionRetry, MaxRetries: 5, RetryDelay: ir.Duration(time.Millisecond),
			Multiplier: 10, MaxDelay: ir.Duration(4 * time.Millisecond)}
	}))
	fb := newFake(map[string]*fakeTool{"svc.x": {failFirst: 5}})
	e := mustEngine(t, plan(w), Options{Backend: fb})
	var log eventLog
	run, err := e.Run(context.Background(), "md", nil, RunOptions{OnEvent: log.add})
	if err != nil || run.Status != RunCompleted {
		t.Fatalf("Run = %v, %v; want completed", run, err)
	}
	var waits []time.Duration
	log.mu.Lock()
	for _, ev := range log.events {
		if ev.Kind != EventStepRetrying {
			continue
		}
		m := retryingInRE.FindStringSubmatch(ev.Err)
		if m == nil {
			t.Fatalf("retry event %q names no interval", ev.Err)
		}
		d, err := time.ParseDuration(m[1])
		if err != nil {
			t.Fatal(err)
		}
		waits = append(waits, d)
	}
	log.mu.Unlock()
	if len(waits) != 5 {
		t.Fatalf("%d retry notices; want 5", len(waits))
	}
	for i, d := range waits {
		if d > 6*time.Millisecond {
			t.Errorf("retry %d waits %s; want at most 6ms (maxDelay 4ms + 50%%)", i+1, d)
		}
	}
}

// The policy's defaults: multiplier 1.5 and maxDelay 60s when the plan
// leaves them at zero, every failure kind retried.
func TestRetryTuningDefaults(t *testing.T) {
	got := newRetryTuning(ir.OnError{Action: ir.ActionRetry, MaxRetries: 2})
	want := retryTuning{maxDelay: time.Minute, multiplier: 1.5, retryOn: failureAll}
	if got != want {
		t.Errorf("newRetryTuning(zero) = %+v; want %+v", got, want)
	}
	p := RetryPolicy{MaxAttempts: 3, Initial: time.Second, Multiplier: got.multiplier, MaxDelay: got.maxDelay, RetryOn: got.retryOn}
	for _, c := range []struct {
		n      int
		jitter float64
		want   time.Duration
	}{
		{1, 0.5, time.Second},             // no jitter: the initial interval
		{2, 0.5, 1500 * time.Millisecond}, // times the multiplier
		{3, 0.5, 2250 * time.Millisecond}, // and again
		{1, 0, 500 * time.Millisecond},    // -50%
		{2, 1, 2250 * time.Millisecond},   // +50% of 1.5s (jitter < 1 in practice)
		{30, 0.5, time.Minute},            // capped at maxDelay
		{30, 0, 30 * time.Second},         // the cap is randomised too
	} {
		if d := p.Delay(c.n, c.jitter); d != c.want {
			t.Errorf("Delay(%d, %v) = %s; want %s", c.n, c.jitter, d, c.want)
		}
	}
	if k := newRetryTuning(ir.OnError{Action: ir.ActionRetry, RetryOn: []string{"toolError", "timeout"}}).retryOn; k != FailureToolError|FailureTimeout {
		t.Errorf("retryOn [toolError, timeout] = %b", k)
	}
	// Tuning belongs to action retry; under another action it is ignored.
	other := ir.OnError{Action: ir.ActionContinue, AttemptTimeout: ir.Duration(time.Second), RetryOn: []string{"error"}, Multiplier: 3}
	if got := newRetryTuning(other); got != want {
		t.Errorf("newRetryTuning(continue with tuning) = %+v; want the defaults %+v", got, want)
	}
}
