package runtime

import (
	"strings"
	"testing"
)

// TestUnresolvedToolRefRefused checks that a plan whose bare tool name was
// never resolved (compiled without a catalog and not loaded by vmcp run)
// is refused when the engine is built, not at the first call.
func TestUnresolvedToolRefRefused(t *testing.T) {
	s := tool("say", "tb.echo", nil)
	s.Tool.Backend, s.Tool.Name, s.Tool.Ref = "", "", "echo"
	_, err := New(plan(build("bare", s)), Options{Backend: newFake(nil)})
	if err == nil || !strings.Contains(err.Error(), `tool "echo" is not resolved to backend.tool`) {
		t.Fatalf("New(unresolved echo) error = %v; want it refused as not resolved", err)
	}
}
