package semantictest

// Retries: retryOn kinds and attemptTimeout.

import (
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
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

func retryOnCases() []Case {
	var cases []Case
	for _, c := range []struct {
		name     string
		tool     *fakeTool
		tuning   func(*ir.OnError)
		status   runtime.RunStatus
		attempts int
		errHas   string
	}{
		{"isError not retried under [error]", &fakeTool{IsError: true}, retryOn(ir.RetryOnError), runtime.RunFailed, 1, "quota exceeded (not retried: the failure kind is toolError, and retryOn is [error])"},
		{"isError retried under [toolError]", &fakeTool{IsError: true}, retryOn(ir.RetryOnToolError), runtime.RunFailed, 4, "quota exceeded"},
		{"isError retried by default", &fakeTool{IsError: true}, func(*ir.OnError) {}, runtime.RunFailed, 4, "quota exceeded"},
		{"backend failure not retried under [toolError]", &fakeTool{FailFirst: 2}, retryOn(ir.RetryOnToolError), runtime.RunFailed, 1, "backend unavailable"},
		{"backend failure retried under [error]", &fakeTool{FailFirst: 2}, retryOn(ir.RetryOnError), runtime.RunCompleted, 3, ""},
		{"backend failure not retried under [timeout]", &fakeTool{FailFirst: 2}, retryOn(ir.RetryOnTimeout), runtime.RunFailed, 1, "backend unavailable (not retried: the failure kind is error, and retryOn is [timeout])"},
	} {
		rc := Case{
			name:     "retryOn: " + c.name,
			wf:       build("r", tool("a", "svc.x", nil).With(retryWith(c.tuning))),
			tools:    map[string]*fakeTool{"svc.x": c.tool},
			status:   c.status,
			attempts: map[string]int{"a": c.attempts},
		}
		if c.errHas != "" {
			rc.errHas = []string{c.errHas}
		}
		cases = append(cases, rc)
	}
	// attemptTimeout bounds each attempt: a hanging first attempt is cut
	// off and retried (kind timeout), the second answers.
	attempt := func(oe *ir.OnError) { oe.AttemptTimeout = ir.Duration(20 * time.Millisecond) }
	return append(cases,
		Case{
			name:     "attemptTimeout: a hanging attempt is cut off and retried",
			wf:       build("at", tool("a", "svc.x", nil).With(retryWith(attempt)).With(timeout(time.Minute))),
			tools:    map[string]*fakeTool{"svc.x": {HangFirst: 1}},
			status:   runtime.RunCompleted,
			attempts: map[string]int{"a": 2},
			check: func(t *testing.T, run *runtime.Run, fb *fakeBackend) {
				if fb.SawCancel.Load() != 1 {
					t.Errorf("backend saw %d cancelled calls; want 1 (the first attempt)", fb.SawCancel.Load())
				}
			},
		},
		Case{
			name: "attemptTimeout: not retried under retryOn [error]",
			wf: build("at", tool("a", "svc.x", nil).With(retryWith(func(oe *ir.OnError) {
				attempt(oe)
				oe.RetryOn = []string{ir.RetryOnError}
			})).With(timeout(time.Minute))),
			tools:    map[string]*fakeTool{"svc.x": {Hang: true}},
			status:   runtime.RunFailed,
			attempts: map[string]int{"a": 1},
			errHas:   []string{`step "a"`, "the attempt timed out after 20ms (attemptTimeout)"},
		},
		Case{
			name:     "attemptTimeout: every attempt times out, the step fails after maxRetries+1",
			wf:       build("at", tool("a", "svc.x", nil).With(retryWith(attempt)).With(timeout(time.Minute))),
			tools:    map[string]*fakeTool{"svc.x": {Hang: true}},
			status:   runtime.RunFailed,
			attempts: map[string]int{"a": 4},
			errHas:   []string{"the attempt timed out after 20ms"},
		},
	)
}
