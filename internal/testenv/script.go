package testenv

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// ScriptExitCode is a testscript command that runs a program and asserts
// its exact exit status, which exec cannot: "exit-code 2 vmcpc compile
// --bogus". Its stdout and stderr stay available to the stdout and stderr
// commands that follow. Register it as Cmds["exit-code"].
func ScriptExitCode(ts *testscript.TestScript, neg bool, args []string) {
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
