package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// TestMain lets testscript run this test binary as the vmcpc command, so
// the scripts exercise the real main, exit codes and all.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"vmcpc": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs testdata/script/*.txtar. Each script starts in a work
// directory holding a copy of the repository's examples/ (workflow files
// only, not the demo).
func TestScripts(t *testing.T) {
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("..", "..", "testdata", "script"),
		Setup: func(env *testscript.Env) error {
			return copyExamples(examples, filepath.Join(env.WorkDir, "examples"))
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exit-code": testenv.ScriptExitCode,
			"gen-steps": genSteps,
		},
	})
}

// genSteps writes a workflow of N one-line steps: gen-steps N FILE.
func genSteps(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: gen-steps N FILE")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("gen-steps: %v", err)
	}
	var b strings.Builder
	b.WriteString("name: big\ndescription: many steps\nsteps:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {id: s%d, tool: a.b}\n", i)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(b.String()), 0o644))
}

func copyExamples(from, to string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
