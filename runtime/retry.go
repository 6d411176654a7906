package runtime

// The retry policy of a step (onError with action retry). Attempts are
// spaced by cenkalti/backoff/v5's exponential backoff: the first interval
// is retryDelay, each next one is multiplied by multiplier (default 1.5),
// and no interval exceeds maxDelay (default 60s). Each interval is then
// randomised by +/-50% with a jitter the driver draws (StepEnv.Jitter):
// backoff's own randomisation reads math/rand, and the run core takes no
// randomness of its own, so a replayed or Temporal run waits the same.
// RetryPolicy.Delay is that rule as a pure function. Each attempt may
// have its own deadline, attemptTimeout; all of them together stay inside
// the step timeout.
//
// A failed attempt is one of three kinds, and retryOn says which are
// retried (all by default):
//
//	error      the call failed: transport, or the backend process
//	timeout    the attempt hit attemptTimeout
//	toolError  the tool answered with isError: true
//
// A failure of a kind not listed ends the step at once.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/vmcp-dev/vmcp/ir"
)

// FailureKinds is a set of failure kinds of one attempt (retryOn).
type FailureKinds uint8

const (
	// FailureError: the call failed (transport, or the backend process).
	FailureError FailureKinds = 1 << iota
	// FailureTimeout: the attempt hit attemptTimeout.
	FailureTimeout
	// FailureToolError: the tool answered with isError: true.
	FailureToolError
	failureAll = FailureError | FailureTimeout | FailureToolError
)

var retryKindOf = map[string]FailureKinds{
	ir.RetryOnError:     FailureError,
	ir.RetryOnTimeout:   FailureTimeout,
	ir.RetryOnToolError: FailureToolError,
}

// retryTuning is what onError adds to maxRetries and retryDelay.
type retryTuning struct {
	maxDelay       time.Duration
	multiplier     float64
	attemptTimeout time.Duration
	retryOn        FailureKinds
}

// newRetryTuning reads the tuning of oe, with the defaults for the fields
// a plan leaves at zero. The tuning belongs to action retry: under any
// other action a plan's tuning fields are ignored (the checker warns about
// them). An unknown retryOn kind (a hand-edited plan) selects nothing, so
// the step is not retried on it.
func newRetryTuning(oe ir.OnError) retryTuning {
	if oe.Action != ir.ActionRetry {
		oe = ir.OnError{}
	}
	t := retryTuning{
		maxDelay:       oe.MaxDelay.D(),
		multiplier:     oe.Multiplier,
		attemptTimeout: oe.AttemptTimeout.D(),
		retryOn:        failureAll,
	}
	if t.maxDelay <= 0 {
		t.maxDelay = ir.DefaultMaxDelay.D()
	}
	if t.multiplier < 1 {
		t.multiplier = ir.DefaultMultiplier
	}
	if len(oe.RetryOn) > 0 {
		t.retryOn = 0
		for _, k := range oe.RetryOn {
			t.retryOn |= retryKindOf[k]
		}
	}
	return t
}

// RetryPolicy is a step's retry rule as a pure function, for drivers
// that run the retry loop themselves (the local driver's is withRetries).
type RetryPolicy struct {
	// MaxAttempts is 1 plus maxRetries (1: no retry).
	MaxAttempts int
	// Initial is retryDelay; Multiplier and MaxDelay shape the growth.
	Initial    time.Duration
	Multiplier float64
	MaxDelay   time.Duration
	// AttemptTimeout bounds one attempt; 0 means only the step's timeout.
	AttemptTimeout time.Duration
	// RetryOn is the set of failure kinds that are retried.
	RetryOn FailureKinds
}

// retryPolicy is sp's retry rule.
func (sp *stepPlan) retryPolicy() RetryPolicy {
	return RetryPolicy{
		MaxAttempts:    sp.maxRetries + 1,
		Initial:        sp.retryDelay,
		Multiplier:     sp.tuning.multiplier,
		MaxDelay:       sp.tuning.maxDelay,
		AttemptTimeout: sp.tuning.attemptTimeout,
		RetryOn:        sp.tuning.retryOn,
	}
}

// randomization is the spread of a retry interval: +/-50%.
const randomization = 0.5

// Delay is the wait after failed attempt n (1-based) before the next: the
// n-th interval of the exponential backoff, randomised by jitter, a
// number in [0, 1) that the driver draws (0.5 leaves it unchanged).
func (p RetryPolicy) Delay(n int, jitter float64) time.Duration {
	b := &backoff.ExponentialBackOff{InitialInterval: p.Initial, RandomizationFactor: 0, Multiplier: p.Multiplier, MaxInterval: p.MaxDelay}
	b.Reset()
	base := b.NextBackOff()
	for k := 1; k < n; k++ {
		base = b.NextBackOff()
	}
	base = min(base, p.MaxDelay)
	return time.Duration(float64(base) * (1 + randomization*(2*jitter-1)))
}

// Retries reports whether a failure of kind k is retried.
func (p RetryPolicy) Retries(k FailureKinds) bool { return p.RetryOn&k != 0 }

// attemptContext bounds one attempt by attemptTimeout, when set.
func (t retryTuning) attemptContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if t.attemptTimeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, t.attemptTimeout)
}

// retries reports whether a failure of kind k is retried.
func (t retryTuning) retries(k FailureKinds) bool { return t.retryOn&k != 0 }

// notRetried explains why a failure of kind k ended the step without
// the retries that were left.
func (t retryTuning) notRetried(k FailureKinds) string {
	var listed []string
	name := ""
	for _, n := range ir.RetryOnKinds {
		if t.retryOn&retryKindOf[n] != 0 {
			listed = append(listed, n)
		}
		if retryKindOf[n] == k {
			name = n
		}
	}
	return fmt.Sprintf("not retried: the failure kind is %s, and retryOn is [%s]", name, strings.Join(listed, ", "))
}
