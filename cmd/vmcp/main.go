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

	"github.com/vmcp-dev/vmcp/telemetry/trace"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	// exitInterrupted is the status of a forced exit (a second Ctrl-C),
	// 128 + SIGINT as shells report it.
	exitInterrupted = 130
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
	ctx := interruptible(os.Stderr)
	code := execute(ctx, os.Args[1:], streams{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	os.Exit(code)
}

// interruptible returns a context that the first SIGINT or SIGTERM
// cancels: vmcp run then shuts down gracefully (shutdown.go) and vmcp call
// cancels its run. A second signal exits at once with exitInterrupted,
// without waiting for anything; the stdio backends die with vmcp (they run
// with Pdeathsig), and a SQLite store marks the runs it had as interrupted
// at the next start.
func interruptible(stderr io.Writer) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		cancel()
		<-sigs
		fmt.Fprintln(stderr, "vmcp: interrupted again: exiting now")
		os.Exit(exitInterrupted)
	}()
	return ctx
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
	root.AddCommand(newRunsCmd(io), newWorkflowsCmd(io), newWorkerCmd(io), newReadyCmd(io))
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
	// Lines logged with a traced context carry trace_id and span_id.
	return slog.New(trace.LogHandler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))), nil
}
