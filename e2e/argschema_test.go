package e2e

// Tool arguments checked at run time against a real `vmcp run`: an
// argument computed at run time that does not match the backend tool's
// input schema is refused before the call, and the backend's own record
// shows that it was never called.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// TestWrongArgumentTypeRefusedBeforeTheCall serves a workflow that passes
// its batch parameter (any array) to tb.create_tickets, whose input schema
// takes an array of objects. Called with [[], []] the run fails naming the
// argument, the rule and the tool, and the backend records no call; called
// with a right batch the call goes through and is recorded.
func TestWrongArgumentTypeRefusedBeforeTheCall(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "calls.log")
	cfg := writeConfig(t, `
backends:
  tb: {command: "${TB}", args: [-record, "${REC}", -typed]}
compositeTools:
  - name: file_tickets
    description: Create the tickets of one batch
    parameters: {batch: {type: array, required: true}}
    steps:
      - {id: create, tool: tb.create_tickets, arguments: {items: "{{.params.batch}}"}}
`, rec)
	c, _ := stdioVMCP(t, cfg)

	res := mustCall(t, c, "file_tickets", map[string]any{"batch": []any{[]any{}, []any{}}})
	text := testenv.ResultText(res)
	if !res.IsError {
		t.Fatalf("file_tickets([[], []]) succeeded: %s; want it refused", text)
	}
	for _, want := range []string{`step "create"`, `argument "items[0]" must be object (got array)`,
		`argument "items[1]" must be object (got array)`, "(input schema of tool tb.create_tickets)"} {
		if !strings.Contains(text, want) {
			t.Errorf("file_tickets([[], []]) error = %q; want it to contain %q", text, want)
		}
	}
	if log := readRecord(t, rec); log != "" {
		t.Errorf("the backend was called with the wrong arguments; its record:\n%s", log)
	}

	res = mustCall(t, c, "file_tickets", map[string]any{"batch": []any{map[string]any{"name": "web-1"}}})
	if res.IsError {
		t.Fatalf("file_tickets([{name: web-1}]) failed: %s", testenv.ResultText(res))
	}
	if log, want := readRecord(t, rec), "call create_tickets 1\n"; log != want {
		t.Errorf("backend record after a right call = %q; want %q", log, want)
	}
}

// readRecord is the test backend's record file, empty when it wrote none.
func readRecord(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
