package runtime

// Rate limits on backend calls (backends.<name>.rateLimit).
//
// Each rate-limited backend has one token bucket (golang.org/x/time/rate)
// shared by every run of the process: a call takes a token before it
// takes any call slot (LimitCalls), so a call waiting for its turn holds
// no slot that another backend's call could use. Tokens refill at
// PerSecond a second up to Burst, so by any time t after the bucket was
// full, at most Burst + PerSecond*t calls have reached the backend.
//
// The wait is part of the call: it counts against the step's timeout, and
// a cancelled run stops waiting. rate.Limiter.Wait refuses at once a wait
// that would outlast the context's deadline, so a step whose deadline
// passes while it waits fails then, with an error naming the limit.
//
// Several processes share a limit through a RateShare: with N of them
// (the live replicas on one Postgres database, which vmcp run counts),
// each bucket refills at PerSecond/N up to ceil(Burst/N), so together
// they allow about the configured rate: exactly once the count is
// right, up to N-1 calls more in a burst, and for a moment after a
// replica starts or stops, until the others count again (every third of
// the lease), the rate of the old count.

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"golang.org/x/time/rate"
)

// RateLimit bounds how often a backend is called: PerSecond calls a second
// on average, at most Burst at once.
type RateLimit struct {
	PerSecond float64
	Burst     int
}

// String prints the limit as it is configured.
func (r RateLimit) String() string {
	return fmt.Sprintf("%s per second, burst %d", strconv.FormatFloat(r.PerSecond, 'f', -1, 64), r.Burst)
}

// rateLimiters are the token buckets of the rate-limited backends.
type rateLimiters map[string]*rateLimiter

type rateLimiter struct {
	limit RateLimit
	bkt   *rate.Limiter
}

// share sets the bucket to its part of the limit among n processes.
func (l *rateLimiter) share(n int) {
	l.bkt.SetLimit(rate.Limit(l.limit.PerSecond / float64(n)))
	l.bkt.SetBurst(max((l.limit.Burst+n-1)/n, 1))
}

// RateShare divides the rate limits of the backends it is given to
// (CallLimits.Share) among the processes that share them (see the top
// of the file). Its zero value is not ready; use NewRateShare.
type RateShare struct {
	mu       sync.Mutex
	n        int
	limiters []*rateLimiter
}

// NewRateShare returns a share for one process.
func NewRateShare() *RateShare { return &RateShare{n: 1} }

// Set divides the limits among n processes (at least 1).
func (s *RateShare) Set(n int) {
	n = max(n, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if n == s.n {
		return
	}
	s.n = n
	for _, l := range s.limiters {
		l.share(n)
	}
}

// Processes is the count the limits are divided by.
func (s *RateShare) Processes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *RateShare) add(rl rateLimiters) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range rl {
		s.limiters = append(s.limiters, l)
		if s.n > 1 {
			l.share(s.n)
		}
	}
}

// newRateLimiters makes a bucket, full, for each backend with a positive
// rate.
func newRateLimiters(limits map[string]RateLimit) rateLimiters {
	out := rateLimiters{}
	for name, r := range limits {
		if r.PerSecond > 0 {
			out[name] = &rateLimiter{limit: r, bkt: rate.NewLimiter(rate.Limit(r.PerSecond), max(r.Burst, 1))}
		}
	}
	return out
}

// wait blocks until backend may be called, or ctx ends (or would end
// before then).
func (rl rateLimiters) wait(ctx context.Context, backend string) error {
	l := rl[backend]
	if l == nil {
		return nil
	}
	if err := l.bkt.Wait(ctx); err != nil {
		why := "the step's deadline would pass before its turn"
		if ctx.Err() != nil {
			why = context.Cause(ctx).Error()
		}
		return &RateLimitError{Backend: backend, Limit: l.limit, Why: why, err: context.Cause(ctx)}
	}
	return nil
}

// RateLimitError is a call that never started because its backend's rate
// limit would not let it start before the step's deadline (or the run
// was cancelled while it waited).
type RateLimitError struct {
	Backend string
	Limit   RateLimit
	Why     string
	err     error
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("waiting for backend %q's rate limit (backends.%s.rateLimit: %s): %s; raise the step's timeout or the backend's rateLimit",
		e.Backend, e.Backend, e.Limit, e.Why)
}

// Unwrap returns the context's cause once it ended, else nil.
func (e *RateLimitError) Unwrap() error { return e.err }
