package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
)

type compileFlags struct {
	output  string
	format  string
	verbose bool
	tools   string
}

func newCompileCmd() *cobra.Command {
	var f compileFlags
	cmd := &cobra.Command{
		Use:   "compile [FILE|DIR|GLOB]...",
		Short: "Check workflows and write the compiled plan",
		Long: `compile parses and checks every workflow in the given files, directories
(searched recursively for *.yaml, *.yml and *.json) and glob patterns, and
plans them. With no arguments it compiles the current directory.

Diagnostics go to stderr. Without -o, one line per compiled workflow goes
to stdout; with -o, the plan is written as JSON (use -o - for stdout).

Exit status: 0 when everything compiles (warnings allowed), 1 on errors,
2 on bad usage.`,
		Example: `  vmcpc compile workflows/
  vmcpc compile -o build/plan.json workflows/*.yaml
  vmcpc compile --format github --tools tools.lock.json .`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompile(cmd.OutOrStdout(), cmd.ErrOrStderr(), args, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.output, "output", "o", "", "write the plan as JSON to `FILE` (- for stdout)")
	fl.StringVar(&f.format, "format", "text", "diagnostics format: text, json or github")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "also report skipped documents")
	fl.StringVar(&f.tools, "tools", "", "check tool references against a tool lock `FILE` (from vmcpc tools pull)")
	return cmd
}

func runCompile(stdout, stderr io.Writer, args []string, f compileFlags) error {
	format := diag.Format(f.format)
	switch format {
	case diag.Text, diag.JSON, diag.GitHub:
	default:
		return usageErrorf("unknown --format %q (want text, json or github)", f.format)
	}
	opts := compiler.Options{}
	if f.tools != "" {
		cat, err := readCatalog(f.tools)
		if err != nil {
			return failed(err)
		}
		opts.Tools = cat
	}
	if f.verbose {
		opts.Verbose = func(msg string) { fmt.Fprintln(stderr, msg) }
	}
	if len(args) == 0 {
		args = []string{"."}
	}
	inputs, err := compiler.Load(args)
	if err != nil {
		return failed(err)
	}
	if len(inputs) == 0 {
		return failed(fmt.Errorf("no workflow files found in %s", strings.Join(args, " ")))
	}

	plan, diags := compiler.Compile(inputs, opts)
	if len(diags) > 0 || format == diag.JSON {
		if err := diag.Print(stderr, diags, format, compiler.Sources(inputs)); err != nil {
			return failed(err)
		}
	}
	if diags.HasErrors() {
		return reported()
	}

	if f.output != "" {
		data, err := ir.Encode(plan)
		if err != nil {
			return failed(err)
		}
		if f.output == "-" {
			_, err = stdout.Write(data)
		} else {
			err = os.WriteFile(f.output, data, 0o644)
		}
		if err != nil {
			return failed(err)
		}
		if f.output == "-" {
			return nil
		}
	}
	printSummary(stdout, plan)
	return nil
}

// printSummary writes one line per workflow:
//
//	ok  investigate_incident  5 steps, 3 levels
//	ok  locked_deploy         2 steps, 2 levels, 2 finally steps
func printSummary(w io.Writer, plan *ir.Plan) {
	width := 0
	for _, wf := range plan.Workflows {
		width = max(width, len(wf.Name))
	}
	for _, wf := range plan.Workflows {
		finally := ""
		if n := wf.Stats.FinallySteps; n > 0 {
			finally = fmt.Sprintf(", %s", plural(n, "finally step"))
		}
		fmt.Fprintf(w, "ok  %-*s  %s, %s%s\n", width, wf.Name,
			plural(wf.Stats.TotalSteps, "step"), plural(wf.Stats.TotalLevels, "level"), finally)
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func readCatalog(path string) (*catalog.Catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read tool lock file: %w", err)
	}
	cat, err := catalog.Read(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cat, nil
}
