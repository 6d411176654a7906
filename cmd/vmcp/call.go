package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/mcpserver"
	"github.com/vmcp-dev/vmcp/runtime"
)

func newCallCmd(io streams) *cobra.Command {
	var (
		configPath, argsJSON, logLevel string
		kvs                            []string
		timeline                       bool
	)
	cmd := &cobra.Command{
		Use:   "call [--config vmcp.yaml] TOOL [--arg k=v ...] [--args-json '{...}']",
		Short: "Run one workflow once and print its result",
		Long: `Run one workflow once, print its result JSON on stdout and its progress on stderr.

Arguments come from --args-json (a JSON object) and then --arg k=v, which
wins for the same name. A --arg value is read as JSON when it parses as
JSON (5, true, ["a"], {"k":1}, "quoted") and as a plain string otherwise;
when the workflow declares the parameter as a string, the value is always
the string as written (--arg id=1234 passes "1234").

Elicitation steps ask on the terminal when stdin and stderr are terminals;
otherwise they take their onCancel action.

Exit status: 0 when the workflow completes, 1 when it fails, is cancelled
or times out (or vmcp cannot start), 2 on bad usage or arguments.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			log, err := newLogger(io.err, logLevel)
			if err != nil {
				return err
			}
			params, err := parseJSONArgs(argsJSON)
			if err != nil {
				return err
			}
			st, err := openStack(cmd.Context(), configPath, log, io.err)
			if err != nil {
				return err
			}
			defer st.Close()
			if st.cfg.Authoring.Enabled {
				// Authored workflows can be called too.
				if err := st.loadAuthored(cmd.Context(), log); err != nil { // authoring.go
					return failuref("%v", err)
				}
			}
			wf, err := st.workflow(args[0])
			if err != nil {
				return usageErrorf("%v", err)
			}
			if err := applyKVArgs(params, kvs, wf.InputSchema); err != nil {
				return err
			}
			display := newProgressDisplay(io.err, isTerminal(io.err), cmd.Context())
			opts := runtime.RunOptions{OnEvent: display.onEvent}
			if isTerminal(io.in) && isTerminal(io.err) {
				opts.Elicitor = newTerminalElicitor(io.in, io.err, display.pause)
			}
			// Ctrl-C (or SIGTERM) cancels the command's context, which
			// cancels the run; the display names the steps it stopped.
			run, err := st.exec.Run(cmd.Context(), wf.Name, params, opts)
			display.finish()
			if err != nil {
				var inErr *runtime.InputError
				if errors.As(err, &inErr) {
					return usageErrorf("%v", err)
				}
				return failuref("%v", err)
			}
			if timeline {
				printTimeline(io.err, run, display.stepStatus)
			}
			printFailedFinally(io.err, run)
			if run.Status != runtime.RunCompleted {
				return failuref("%s", mcpserver.FailureMessage(run))
			}
			enc := json.NewEncoder(io.out)
			enc.SetEscapeHTML(false) // "<" and "&" in outputs stay readable
			enc.SetIndent("", "  ")
			if err := enc.Encode(run.Output); err != nil {
				return failuref("workflow %s: output is not JSON: %v", wf.Name, err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "the config file (default ./vmcp.yaml)")
	f.StringArrayVar(&kvs, "arg", nil, "a workflow argument as name=value (repeatable)")
	f.StringVar(&argsJSON, "args-json", "", "workflow arguments as a JSON object")
	f.BoolVar(&timeline, "timeline", false, "print when each step started and ended, on stderr")
	f.StringVar(&logLevel, "log-level", "warn", "log level: debug, info, warn or error")
	return cmd
}

// parseJSONArgs reads --args-json; empty means no arguments.
func parseJSONArgs(s string) (map[string]any, error) {
	params := map[string]any{}
	if strings.TrimSpace(s) == "" {
		return params, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, usageErrorf("--args-json is not valid JSON: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, usageErrorf("--args-json must be a JSON object")
	}
	return ir.NormalizeNumbers(m).(map[string]any), nil
}

// applyKVArgs adds --arg name=value pairs to params, typed as the call's
// help text explains.
func applyKVArgs(params map[string]any, kvs []string, schema map[string]any) error {
	props, _ := schema["properties"].(map[string]any)
	for _, kv := range kvs {
		name, raw, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return usageErrorf("--arg %q: want name=value", kv)
		}
		params[name] = typedArg(raw, props[name])
	}
	return nil
}

func typedArg(raw string, prop any) any {
	if p, ok := prop.(map[string]any); ok && p["type"] == "string" {
		return raw
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return raw
	}
	return ir.NormalizeNumbers(v)
}

// printFailedFinally names each finally step that failed, with its error:
// they do not change the run's status or the exit code, so this is where
// the caller of vmcp call sees them.
func printFailedFinally(w interface{ Write([]byte) (int, error) }, run *runtime.Run) {
	for i, st := range run.Steps {
		if run.IsFinally(i) && st.Status == runtime.StepFailed {
			fmt.Fprintf(w, "vmcp: finally step %q failed (the run is still %s): %s\n", st.ID, run.Status, st.Error)
		}
	}
}

// printTimeline writes one line per step that ran: its start and end as
// offsets from the start of the run, a bar drawn to scale, so steps that
// overlapped in time are visible at a glance, and the step's status as
// status names it.
func printTimeline(w interface{ Write([]byte) (int, error) }, run *runtime.Run, status func(runtime.StepState) string) {
	tl := mcpserver.Timeline(run)
	if len(tl) == 0 {
		return
	}
	steps := make(map[string]runtime.StepState, len(run.Steps))
	for _, st := range run.Steps {
		steps[st.ID] = st
	}
	end := 0.0
	width := 0
	for _, e := range tl {
		end = max(end, e.EndMs)
		width = max(width, len(e.Step))
	}
	const cols = 40
	fmt.Fprintf(w, "timeline (total %.0fms):\n", run.EndedAt.Sub(run.StartedAt).Seconds()*1000)
	for _, e := range tl {
		from, to := 0, 0
		if end > 0 {
			from = int(e.StartMs / end * cols)
			to = max(int(e.EndMs/end*cols), from+1)
		}
		bar := strings.Repeat(" ", from) + strings.Repeat("#", to-from) + strings.Repeat(" ", cols-min(to, cols))
		fmt.Fprintf(w, "  %-*s |%s| %6.0fms → %6.0fms  %s\n", width, e.Step, bar, e.StartMs, e.EndMs, status(steps[e.Step]))
	}
}

// sortedKeys returns m's keys in order.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && isattyTerminal(f.Fd())
}
