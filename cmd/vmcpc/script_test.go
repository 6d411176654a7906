package main

import (
	"os"
	"path/filepath"
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
		},
	})
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
