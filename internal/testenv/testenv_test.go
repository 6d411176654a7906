package testenv

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestRepoRootHasGoMod(t *testing.T) {
	if _, err := os.Stat(filepath.Join(RepoRoot(), "go.mod")); err != nil {
		t.Errorf("RepoRoot() = %q has no go.mod: %v", RepoRoot(), err)
	}
}

func TestFreePortIsFreeAndNotRepeated(t *testing.T) {
	seen := map[int]bool{}
	for range 5 {
		p := FreePort(t, 17290, 17299)
		if p < 17290 || p > 17299 {
			t.Fatalf("FreePort(17290, 17299) = %d; want a port in range", p)
		}
		if seen[p] {
			t.Fatalf("FreePort handed out %d twice", p)
		}
		seen[p] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Fatalf("FreePort returned %d but listening on it failed: %v", p, err)
		}
		l.Close()
	}
}

func TestNodeBinFindsInstalledPeer(t *testing.T) {
	p := NodeBin(t, "mcp-server-everything")
	if _, err := os.Stat(p); err != nil {
		t.Errorf("NodeBin = %q, which does not exist: %v", p, err)
	}
}
