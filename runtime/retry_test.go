package runtime

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
)

var retryingInRE = regexp.MustCompile(`retrying in ([0-9.]+m?s)`)

// maxDelay caps every interval: with multiplier 10 from 1ms, the waits
// would be 1ms, 10ms, 100ms, 1s; under maxDelay 4ms none is over 6ms
// (4ms plus the 50% randomisation).
func TestMaxDelayCapsRetryInterval(t *testing.T) {
	w := build("md", tool("a", "svc.x", nil).With(func(s *ir.Step) {
		s.OnError = ir.OnError{Action: ir.ActionRetry, MaxRetries: 5, RetryDelay: ir.Duration(time.Millisecond),
			Multiplier: 10, MaxDelay: ir.Duration(4 * time.Millisecond)}
	}))
	fb := newFake(map[string]*fakeTool{"svc.x": {FailFirst: 5}})
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
