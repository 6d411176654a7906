package demo

// The agent session of docs/authoring.md, run from the page's own text as
// the README's tour is (tour_test.go): every sh block of the page, in
// order, in a fresh clone with bin/vmcp and bin/demo-backend built, each
// command's output compared with what the page shows. The page's HTTP
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

const (
	authoringPage    = "docs/authoring.md"
	authoringHeading = "# Agents author workflows"
)

func TestAuthoringSession(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatalf("the session of %s pipes results through jq: %v", authoringPage, err)
	}
	root := testenv.RepoRoot()
	page, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(authoringPage)))
	if err != nil {
		t.Fatal(err)
	}
	steps, err := readSection(authoringPage, string(page), authoringHeading)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) < 10 {
		t.Fatalf("the %q section has %d steps; want the whole session", authoringHeading, len(steps))
	}
	clone := freshClone(t, root)
	buildDemo(t, clone)
	port := fmt.Sprint(testenv.FreePort(t, 17500, 17599))
	t.Cleanup(func() { // the server, should a step fail before the kill
		if pid, err := os.ReadFile(filepath.Join(clone, "vmcp-http.pid")); err == nil {
			exec.Command("kill", strings.TrimSpace(string(pid))).Run()
		}
	})
	for _, s := range steps {
		if s.command == "" {
			t.Fatalf("%s:%d: the page may only hold sh blocks", authoringPage, s.line)
		}
		command := strings.ReplaceAll(s.command, "127.0.0.1:8080", "127.0.0.1:"+port)
		out, err := runTourCommand(clone, command)
		if err != nil {
			t.Fatalf("%s:%d: %s: %v\n%s", authoringPage, s.line, s.command, err, out)
		}
		if s.want != nil && !matchOutput(s.want, outputLines(out)) {
			t.Errorf("%s:%d: %s printed what the page does not show (-page +printed):\n%s",
				authoringPage, s.line, s.command, cmp.Diff(s.want, outputLines(out)))
		}
	}
}
