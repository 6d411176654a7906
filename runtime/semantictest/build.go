package semantictest

// Plan builders: each case states its IR in a few lines.

import (
	"testing"

	"github.com/vmcp-dev/vmcp/internal/irbuild"
	"github.com/vmcp-dev/vmcp/runtime"
)

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

// calledOnce checks that the backend saw exactly one call for step id.
func calledOnce(id string) func(*testing.T, *runtime.Run, *fakeBackend) {
	return func(t *testing.T, _ *runtime.Run, fb *fakeBackend) {
		t.Helper()
		if n := len(fb.CallsTo(id)); n != 1 {
			t.Errorf("step %q called its tool %d times; want 1 (maxRetries has no effect without action retry)", id, n)
		}
	}
}

func structured(v any) func(M) any { return func(M) any { return v } }
