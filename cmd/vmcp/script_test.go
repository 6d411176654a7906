package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// TestMain lets testscript run this test binary as the vmcp command, so the
// scripts go through the real main: flags, exit codes, stdout and stderr.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"vmcp": func() {
			os.Exit(execute(context.Background(), os.Args[1:], streams{in: os.Stdin, out: os.Stdout, err: os.Stderr}))
		},
	})
}

// TestScripts runs testdata/script/*.txtar. The scripts' configs start the
// e2e test backend as ${TESTBACKEND}, built once here.
func TestScripts(t *testing.T) {
	dir := t.TempDir()
	backend := filepath.Join(dir, "testbackend")
	build := exec.Command("go", "build", "-o", backend, "../../e2e/testbackend")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build testbackend: %v\n%s", err, out)
	}
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("TESTBACKEND", backend)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exit-code": testenv.ScriptExitCode,
		},
	})
}
