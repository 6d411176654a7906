package e2e

// Node.js for the npm peers. The MCP Inspector asks for Node >= 22.19 and
// the conformance suite crashes on Node 20, while Debian ships Node 20; so
// package.json pins the npm registry's `node` package and the tests run
// node_modules/.bin/node, never whatever node PATH finds first.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// minNode is the oldest Node.js the pinned npm peers run on.
var minNode = [3]int{22, 19, 0}

// useRepoNode puts node_modules/.bin first on PATH, so that the npm peers
// this package starts through their `#!/usr/bin/env node` scripts (the
// inspector, server-everything, ...) run on the pinned Node, as they do
// under `make test`. Without an install it leaves PATH alone: the tests
// that need node then fail with the install command.
func useRepoNode() error {
	bin := filepath.Join(testenv.RepoRoot(), "node_modules", ".bin")
	if _, err := os.Stat(filepath.Join(bin, "node")); err != nil {
		return nil
	}
	return os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

var nodeOnce struct {
	sync.Once
	path, version string
	err           error
}

// repoNode returns node_modules/.bin/node, failing the test with the
// install command when it is missing or older than minNode.
func repoNode(t *testing.T) string {
	t.Helper()
	nodeOnce.Do(func() {
		p := filepath.Join(testenv.RepoRoot(), "node_modules", ".bin", "node")
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, p, "--version").Output()
		if err != nil {
			nodeOnce.err = fmt.Errorf("%s does not run (%v)", p, err)
			return
		}
		nodeOnce.path, nodeOnce.version = p, strings.TrimSpace(string(out))
		if !nodeAtLeast(nodeOnce.version, minNode) {
			nodeOnce.err = fmt.Errorf("%s is Node %s; the npm peers need %d.%d or later", p, nodeOnce.version, minNode[0], minNode[1])
		}
	})
	if nodeOnce.err != nil {
		t.Fatalf("%v; run `cd %s && %s` (package.json pins node)", nodeOnce.err, testenv.RepoRoot(), testenv.InstallCommand)
	}
	return nodeOnce.path
}

// nodeAtLeast reports whether a `node --version` string such as v22.23.3
// is at least min.
func nodeAtLeast(version string, min [3]int) bool {
	var got [3]int
	if n, _ := fmt.Sscanf(version, "v%d.%d.%d", &got[0], &got[1], &got[2]); n != 3 {
		return false
	}
	for i := range got {
		if got[i] != min[i] {
			return got[i] > min[i]
		}
	}
	return true
}

func TestNodeAtLeast(t *testing.T) {
	tests := []struct {
		version string
		want    bool
	}{
		{"v22.19.0", true},
		{"v22.23.3", true},
		{"v24.1.0", true},
		{"v22.18.9", false},
		{"v20.20.2", false},
		{"22.19.0", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := nodeAtLeast(tt.version, minNode); got != tt.want {
			t.Errorf("nodeAtLeast(%q, %v) = %v; want %v", tt.version, minNode, got, tt.want)
		}
	}
}
