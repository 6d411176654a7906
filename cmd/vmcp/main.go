package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// exitError carries an exit code out of a cobra command. Its message, when
// not empty, is printed on stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, msg: fmt.Sprintf(format, args...)}
}

func failuref(format string, args ...any) error {
	return &exitError{code: exitFailure, msg: fmt.Sprintf(format, args...)}
}

// streams are the process's standard streams, passed explicitly so tests
// can run commands in-process.
type streams struct {
	in       io.Reader
	out, err io.Writer
}

func main() {
	// A client that closes vmcp's stderr (mcp-go's stdio client does, on
	// Close) must not kill vmcp with SIGPIPE at its next log line: it would
	// die without stopping its backend processes. Ignored, the write just
	// fails.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, os.Args[1:], streams{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	stop()
	os.Exit(code)
}

// execute runs the CLI and returns the exit code.
func execute(ctx context.Context, args []string, io streams) int {
	root := &cobra.Command{
		Use:           "vmcp",
		Short:         "Serve composite-tool workflows over MCP",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(io.in)
	root.SetOut(io.err)
	root.SetErr(io.err)
	root.AddCommand(newRunCmd(io), newCallCmd(io))
	root.AddCommand(newRunsCmd(io))
	root.SetArgs(args)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErrorf("%v", err) })
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(io.err, "vmcp:", ee.msg)
		}
		return ee.code
	}
	// Errors cobra makes itself (unknown command, wrong number of args)
	// are usage errors.
	fmt.Fprintln(io.err, "vmcp:", err)
	return exitUsage
}

// newLogger returns a text logger on w at the named level.
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, usageErrorf("--log-level must be debug, info, warn or error, not %q", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
