package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1 // the inputs have errors, or a file could not be read or written
	exitUsage = 2 // bad command line
)

// run executes vmcpc with args and returns the process exit code.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteC()
	if err == nil {
		return exitOK
	}
	var ee *exitErr
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "vmcpc: %v\n", ee.err)
		}
		if ee.code == exitUsage && ee.err != nil {
			fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
		return ee.code
	}
	// Anything else came from cobra itself: an unknown command or flag, or
	// the wrong number of arguments.
	fmt.Fprintf(stderr, "vmcpc: %v\n", err)
	fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	return exitUsage
}

// newRootCmd builds the vmcpc command tree. Subcommands are added here, in
// one place, so each is easy to find.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "vmcpc",
		Short: "Compile vmcp composite-tool workflows into execution plans",
		Long: `vmcpc compiles declarative composite-tool workflows (Kubernetes
VirtualMCPCompositeToolDefinition resources, compositeTools configs, or their
JSON form) into a static, checked execution plan, and shows plans as text,
JSON, Graphviz DOT or Mermaid.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		// Without a subcommand, print help and fail like the go tool does.
		// (Args stays nil so cobra reports an unknown subcommand, with
		// suggestions, as a usage error.)
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(cmd.ErrOrStderr())
			_ = cmd.Help()
			return &exitErr{code: exitUsage}
		},
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(withConfig(newCompileCmd())) // --config: tools.go
	root.AddCommand(newPlanCmd())
	root.AddCommand(newSchemaCmd())
	root.AddCommand(newToolsCmd()) // vmcpc tools pull: tools.go
	return root
}

// exitErr carries an exit code out of a command. A nil err means the
// command already reported the problem (diagnostics were printed).
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitErr) Unwrap() error { return e.err }

// usageErrorf reports a bad command line (exit 2).
func usageErrorf(format string, args ...any) error {
	return &exitErr{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// failed reports an error that is not about usage (exit 1).
func failed(err error) error { return &exitErr{code: exitError, err: err} }

// reported says the problem was already printed (exit 1).
func reported() error { return &exitErr{code: exitError} }
