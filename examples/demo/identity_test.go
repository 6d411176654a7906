package demo

// The session of docs/identity.md, run from the page's own text as the
// tour is (tour_test.go): every sh block of the
// section, in order, in a fresh clone with bin/vmcp and bin/demo-backend
// built, against the real Ory Hydra `make hydra` builds (its binary is
// found through testenv.HydraBin first, so a missing one fails with the
// build command). The page's ports (Hydra's 4444 and 4445, vmcp's
// 8080) are moved to free ports of this test's range (17250-17299), in
// the commands and in the clone's examples/oidc/vmcp.yaml: the only change
// made.

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
	identityPage    = "docs/identity.md"
	identityHeading = "# Behind your identity provider"
)

func TestIdentityProviderSection(t *testing.T) {
	testenv.HydraBin(t)
	if _, err := exec.LookPath("jq"); err != nil {
		t.Fatalf("the page's session pipes answers through jq: %v", err)
	}
	root := testenv.RepoRoot()
	page, err := os.ReadFile(filepath.Join(root, identityPage))
	if err != nil {
		t.Fatal(err)
	}
	steps, err := readSection(identityPage, string(page), identityHeading)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) < 10 {
		t.Fatalf("the %q section has %d steps; want the whole session", identityHeading, len(steps))
	}
	clone := freshClone(t, root)
	buildDemo(t, clone)
	pub, adm, vmcp := testenv.FreePort(t, 17250, 17299), testenv.FreePort(t, 17250, 17299), testenv.FreePort(t, 17250, 17299)
	replace := strings.NewReplacer(
		"127.0.0.1:4444", fmt.Sprint("127.0.0.1:", pub), "SERVE_PUBLIC_PORT=4444", fmt.Sprint("SERVE_PUBLIC_PORT=", pub),
		"127.0.0.1:4445", fmt.Sprint("127.0.0.1:", adm), "SERVE_ADMIN_PORT=4445", fmt.Sprint("SERVE_ADMIN_PORT=", adm),
		"127.0.0.1:8080", fmt.Sprint("127.0.0.1:", vmcp),
	).Replace
	cfgPath := filepath.Join(clone, "examples", "oidc", "vmcp.yaml")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfgPath, []byte(replace(string(cfg))), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // the servers, should a step fail before the kill
		for _, f := range []string{"vmcp-oidc.pid", "hydra.pid"} {
			if pid, err := os.ReadFile(filepath.Join(clone, f)); err == nil {
				exec.Command("kill", strings.TrimSpace(string(pid))).Run()
			}
		}
	})
	for _, s := range steps {
		if s.command == "" {
			t.Fatalf("%s:%d: the section may only hold sh blocks", identityPage, s.line)
		}
		out, err := runTourCommand(clone, replace(s.command))
		if err != nil {
			t.Fatalf("%s:%d: %s: %v\n%s", identityPage, s.line, s.command, err, out)
		}
		var want []string
		for _, w := range s.want {
			want = append(want, replace(w))
		}
		if s.want != nil && !matchOutput(want, outputLines(out)) {
			t.Errorf("%s:%d: %s printed what the page does not show (-page +printed):\n%s",
				identityPage, s.line, s.command, cmp.Diff(want, outputLines(out)))
		}
	}
}
