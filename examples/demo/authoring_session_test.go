package demo

// The README's "Agents author workflows" session, run from the README's
// own text as the tour is (tour_test.go): every sh block of the section,
// in order, in a fresh clone with bin/vmcp and bin/demo-backend built, each
// command's output compared with what the README shows. The README's HTTP
// listener 127.0.0.1:8080 is moved to a free port of this test's range
// (17500-17599), the only change made to the commands.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

const authoringHeading = "## Agents author workflows"

func TestAuthoringSession(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatalf("the README's session pipes results through jq: %v", err)
	}
	root := testenv.RepoRoot()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps, err := readSection(string(readme), authoringHeading)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) < 10 {
		t.Fatalf("the %q section has %d steps; want the whole session", authoringHeading, len(steps))
	}
	clone := freshClone(t, root)
	for _, args := range [][]string{
		{"build", "-o", "bin/vmcp", "./cmd/vmcp"},
		{"build", "-o", "bin/demo-backend", "./examples/demo/backends"},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = clone
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	port := fmt.Sprint(testenv.FreePort(t, 17500, 17599))
	t.Cleanup(func() { // the server, should a step fail before the kill
		if pid, err := os.ReadFile(filepath.Join(clone, "vmcp-http.pid")); err == nil {
			exec.Command("kill", strings.TrimSpace(string(pid))).Run()
		}
	})
	for _, s := range steps {
		if s.command == "" {
			t.Fatalf("README.md:%d: the section may only hold sh blocks", s.line)
		}
		command := strings.ReplaceAll(s.command, "127.0.0.1:8080", "127.0.0.1:"+port)
		out, err := runTourCommand(clone, command)
		if err != nil {
			t.Fatalf("README.md:%d: %s: %v\n%s", s.line, s.command, err, out)
		}
		if s.want != nil && !matchOutput(s.want, outputLines(out)) {
			t.Errorf("README.md:%d: %s printed what the README does not show (-README +printed):\n%s",
				s.line, s.command, cmp.Diff(s.want, outputLines(out)))
		}
	}
}
