package e2e

// The README promises two commands on a fresh Debian machine: make test
// installs the Debian packages its tests run when they are missing
// (scripts/system-packages.sh). These tests run the script in dry-run
// mode with a PATH that lacks some of the commands, and check that make
// test runs it.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// systemPackages runs scripts/system-packages.sh --dry-run with PATH set to
// a directory holding only id (the script asks who it runs as) and the
// named fake commands.
func systemPackages(t *testing.T, present ...string) string {
	t.Helper()
	bin := t.TempDir()
	id, err := exec.LookPath("id")
	if err != nil {
		t.Fatalf("id: %v", err)
	}
	if err := os.Symlink(id, filepath.Join(bin, "id")); err != nil {
		t.Fatal(err)
	}
	for _, name := range present {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	cmd := exec.Command(bash, filepath.Join("..", "scripts", "system-packages.sh"), "--dry-run")
	cmd.Env = []string{"PATH=" + bin}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("system-packages.sh --dry-run: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestSystemPackagesInstallsWhatIsMissing(t *testing.T) {
	cases := []struct {
		present []string
		want    string
	}{
		{nil, "apt-get install -y -qq chromium jq"},
		{[]string{"jq"}, "apt-get install -y -qq chromium"},
		{[]string{"chromium"}, "apt-get install -y -qq jq"},
		{[]string{"chromium", "jq"}, "system packages: all present"},
	}
	for _, c := range cases {
		got := systemPackages(t, c.present...)
		if !strings.HasSuffix(got, c.want) {
			t.Errorf("with %v on PATH: got %q; want it to end with %q", c.present, got, c.want)
		}
	}
}

func TestMakeTestInstallsSystemPackages(t *testing.T) {
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Fatalf("make: %v", err)
	}
	cmd := exec.Command(makeBin, "-n", "test")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n test: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "./scripts/system-packages.sh") {
		t.Errorf("make -n test does not run scripts/system-packages.sh:\n%s", out)
	}
}
