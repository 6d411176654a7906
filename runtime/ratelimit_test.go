package runtime

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// stampBackend records when each call reached it.
type stampBackend struct {
	mu    sync.Mutex
	times []time.Time
}

func (s *stampBackend) CallTool(_ context.Context, call ToolCall) (*ToolResult, error) {
	s.mu.Lock()
	s.times = append(s.times, time.Now())
	s.mu.Unlock()
	return &ToolResult{}, nil
}

// TestRateLimitSpacesCallsAcrossCallers sends 12 calls at once from 12
// goroutines through a 40/s, burst 3 limit and checks the bucket's
// promise on the times the calls reached the backend: the k-th call (from
// 0) cannot arrive before (k+1-burst)/rate after the first. A slow machine
// only spreads the calls more, so the bound cannot fail for that reason.
func TestRateLimitSpacesCallsAcrossCallers(t *testing.T) {
	const perSecond, burst, calls = 40.0, 3, 12
	rec := &stampBackend{}
	b := LimitCalls(rec, CallLimits{Rates: map[string]RateLimit{"svc": {PerSecond: perSecond, Burst: burst}}})
	var wg sync.WaitGroup
	for i := 0; i < calls; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := b.CallTool(context.Background(), ToolCall{Backend: "svc", Tool: "x"}); err != nil {
				t.Errorf("CallTool = %v", err)
			}
		}()
	}
	// A backend without a rate limit is not held up.
	if _, err := b.CallTool(context.Background(), ToolCall{Backend: "other", Tool: "x"}); err != nil {
		t.Errorf("CallTool(other) = %v", err)
	}
	wg.Wait()
	times := rec.times
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	if len(times) != calls+1 {
		t.Fatalf("backend got %d calls; want %d", len(times), calls+1)
	}
	// The call to other may be anywhere; a bound on the svc calls alone
	// holds for all the calls with one more allowed.
	slack := 5 * time.Millisecond // the bucket's clock and ours differ a little
	for k := burst + 1; k < len(times); k++ {
		earliest := time.Duration(float64(k-burst) / perSecond * float64(time.Second))
		if got := times[k].Sub(times[0]); got < earliest-slack {
			t.Errorf("call %d reached the backend %s after the first; a %v/s burst-%d limit allows it no sooner than %s", k, got, perSecond, burst, earliest)
		}
	}
}

// TestRateLimitWaitEndsWithTheStep: a call whose turn comes after its
// context's deadline fails at once with an error naming the limit, and a
// cancelled call stops waiting.
func TestRateLimitWaitEndsWithTheStep(t *testing.T) {
	rec := &stampBackend{}
	b := LimitCalls(rec, CallLimits{Rates: map[string]RateLimit{"svc": {PerSecond: 0.5, Burst: 1}}})
	if _, err := b.CallTool(context.Background(), ToolCall{Backend: "svc", Tool: "x"}); err != nil {
		t.Fatalf("first call (the bucket's only token) = %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := b.CallTool(ctx, ToolCall{Backend: "svc", Tool: "x"})
	var rl *RateLimitError
	want := `waiting for backend "svc"'s rate limit (backends.svc.rateLimit: 0.5 per second, burst 1): the step's deadline would pass before its turn`
	if !errors.As(err, &rl) || !strings.Contains(err.Error(), want) {
		t.Errorf("second call with 200ms left, next token in 2s: error = %v; want %q", err, want)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := b.CallTool(cctx, ToolCall{Backend: "svc", Tool: "x"})
		done <- err
	}()
	ccancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call waiting for its turn: error = %v; want context.Canceled", err)
	}
	if len(rec.times) != 1 {
		t.Errorf("backend got %d calls; want 1 (the others never had their turn)", len(rec.times))
	}
}

// TestRateShareDividesTheLimits: a share of N processes gives each bucket
// PerSecond/N and ceil(Burst/N) (at least 1), for buckets made before and
// after the count changed; back to one process, the configured limit.
func TestRateShareDividesTheLimits(t *testing.T) {
	share := NewRateShare()
	lim := CallLimits{Rates: map[string]RateLimit{"a": {PerSecond: 10, Burst: 4}, "b": {PerSecond: 1, Burst: 1}}, Share: share}
	first := LimitCalls(&stampBackend{}, lim).(*limitedBackend)
	share.Set(3)
	later := LimitCalls(&stampBackend{}, lim).(*limitedBackend)
	for _, l := range []*limitedBackend{first, later} {
		if got := l.rates["a"].bkt; float64(got.Limit()) != 10.0/3 || got.Burst() != 2 {
			t.Errorf("a among 3: %v/s burst %d; want 3.33/s burst 2", got.Limit(), got.Burst())
		}
		if got := l.rates["b"].bkt; float64(got.Limit()) != 1.0/3 || got.Burst() != 1 {
			t.Errorf("b among 3: %v/s burst %d; want 0.33/s burst 1", got.Limit(), got.Burst())
		}
	}
	share.Set(0)
	if got := first.rates["a"].bkt; got.Limit() != 10 || got.Burst() != 4 || share.Processes() != 1 {
		t.Errorf("a alone: %v/s burst %d (processes %d); want 10/s burst 4", got.Limit(), got.Burst(), share.Processes())
	}
}
