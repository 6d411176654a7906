package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
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
			"exit-code": scriptExitCode,
		},
	})
}

// scriptExitCode runs a program and checks its exact exit status:
// "exit-code 2 vmcp call". Its stdout and stderr stay available to the
// stdout and stderr commands that follow.
func scriptExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exit-code N program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exit-code: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exit-code: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d; want %d", strings.Join(args[1:], " "), got, want)
	}
}
