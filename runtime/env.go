package runtime

// The outside world of the step executors. A step executor (step.go,
// foreach.go, body.go, subworkflow.go) reaches it only through a StepEnv:
// the backend for tool calls, the elicitor for questions, and a Clock for
// the time, the retry delays and their jitter. The local driver hands
// its executors the engine's backend, the run's elicitor and the system
// clock (or Options.Clock); another driver supplies its own.

import (
	"context"
	"math/rand/v2"
	"time"
)

// StepEnv is what a step executor may use of the outside world.
type StepEnv struct {
	Backend Backend
	// Elicitor answers elicitation steps; nil makes them take their
	// onCancel action with a clear reason.
	Elicitor Elicitor
	Clock    Clock
}

// Clock is time as a driver supplies it: the current time, a sleep that
// ends early when ctx does, and the jitter of retry delays.
type Clock interface {
	Now() time.Time
	// Sleep waits for d, or until ctx ends (then it returns ctx's error).
	Sleep(ctx context.Context, d time.Duration) error
	// Jitter returns a number in [0, 1) that randomises a retry delay
	// (RetryPolicy.Delay).
	Jitter() float64
}

// SystemClock is the Clock of the local driver: the system's time and
// timers, and math/rand for the jitter.
type SystemClock struct{}

func (SystemClock) Now() time.Time { return time.Now() }

func (SystemClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (SystemClock) Jitter() float64 { return rand.Float64() }
