package runtime

// The retry policy of a step (onError with action retry). Attempts are
// spaced by cenkalti/backoff/v5's exponential backoff: the first interval
// is retryDelay, each next one is multiplied by multiplier (default 1.5)
// and randomised by +/-50%, and no interval exceeds maxDelay (default
// 60s). Each attempt may have its own deadline, attemptTimeout; all of
// them together stay inside the step timeout.
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

// retryKinds is a set of failure kinds.
type retryKinds uint8

const (
	retryOnError retryKinds = 1 << iota
	retryOnTimeout
	retryOnToolError
	retryOnAll = retryOnError | retryOnTimeout | retryOnToolError
)

var retryKindOf = map[string]retryKinds{
	ir.RetryOnError:     retryOnError,
	ir.RetryOnTimeout:   retryOnTimeout,
	ir.RetryOnToolError: retryOnToolError,
}

// retryTuning is what onError adds to maxRetries and retryDelay.
type retryTuning struct {
	maxDelay       time.Duration
	multiplier     float64
	attemptTimeout time.Duration
	retryOn        retryKinds
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
		retryOn:        retryOnAll,
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

// backOff returns a fresh backoff for one step run, starting at delay.
func (t retryTuning) backOff(delay time.Duration) *backoff.ExponentialBackOff {
	return &backoff.ExponentialBackOff{
		InitialInterval:     delay,
		RandomizationFactor: 0.5,
		Multiplier:          t.multiplier,
		MaxInterval:         t.maxDelay,
	}
}

// attemptContext bounds one attempt by attemptTimeout, when set.
func (t retryTuning) attemptContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if t.attemptTimeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, t.attemptTimeout)
}

// retries reports whether a failure of kind k is retried.
func (t retryTuning) retries(k retryKinds) bool { return t.retryOn&k != 0 }

// notRetried explains why a failure of kind k ended the step without
// the retries that were left.
func (t retryTuning) notRetried(k retryKinds) string {
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
