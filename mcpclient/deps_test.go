package mcpclient

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoEngineDependency: the MCP client shares the tool call's types
// through toolcall and does not link the engine, so vmcpc tools
// pull stays a client.
func TestNoEngineDependency(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if line == "github.com/vmcp-dev/vmcp/runtime" {
			t.Errorf("mcpclient depends on %s", line)
		}
	}
}
