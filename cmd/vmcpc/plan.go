package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/plangraph"
)

type planFlags struct {
	tool   string
	format string
}

func newPlanCmd() *cobra.Command {
	var f planFlags
	cmd := &cobra.Command{
		Use:   "plan FILE",
		Short: "Show the execution plan of a workflow file or compiled plan",
		Long: `plan compiles FILE (a workflow file, or a plan.json written by
vmcpc compile -o) and shows each workflow's plan: the steps by level, the
statistics and the critical path.

Formats: text (a level timeline), json (the compiled workflow, or the whole
plan when FILE holds several workflows and --tool is not given), dot
(Graphviz: levels share a rank, the critical path is drawn in red),
mermaid (a flowchart) and svg (the drawing the web console shows, with no
Graphviz needed: levels in columns, the critical path in red, loop bodies
inside their forEach, finally steps in a group; one workflow per document,
so a file holding several needs --tool).`,
		Example: `  vmcpc plan examples/incident_investigation.yaml
  vmcpc plan --format svg examples/incident_investigation.yaml > plan.svg
  vmcpc plan --format svg --tool triage_ticket examples/k8s_stream.yaml > triage.svg
  vmcpc plan --format dot build/plan.json --tool investigate_incident | dot -Tsvg > plan.svg`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlan(cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], f)
		},
	}
	cmd.Flags().StringVar(&f.tool, "tool", "", "show only the workflow `NAME`")
	cmd.Flags().StringVar(&f.format, "format", "text", "output format: text, json, dot, mermaid or svg")
	return cmd
}

func runPlan(stdout, stderr io.Writer, path string, f planFlags) error {
	var render func(io.Writer, []*ir.Workflow, *ir.Plan) error
	switch f.format {
	case "text":
		render = func(w io.Writer, wfs []*ir.Workflow, _ *ir.Plan) error { return renderText(w, wfs) }
	case "json":
		render = renderJSON
	case "dot":
		render = func(w io.Writer, wfs []*ir.Workflow, _ *ir.Plan) error { return renderDOT(w, wfs) }
	case "mermaid":
		render = func(w io.Writer, wfs []*ir.Workflow, _ *ir.Plan) error { return renderMermaid(w, wfs) }
	case "svg":
		render = func(w io.Writer, wfs []*ir.Workflow, _ *ir.Plan) error { return renderSVG(w, wfs, path) }
	default:
		return usageErrorf("unknown --format %q (want text, json, dot, mermaid or svg)", f.format)
	}

	inputs, err := compiler.Load([]string{path})
	if err != nil {
		return failed(err)
	}
	plan, diags := compiler.Compile(inputs, compiler.Options{})
	if len(diags) > 0 {
		if err := diag.Print(stderr, diags, diag.Text, compiler.Sources(inputs)); err != nil {
			return failed(err)
		}
	}
	if diags.HasErrors() {
		return reported()
	}

	wfs := plan.Workflows
	if f.tool != "" {
		wfs = nil
		for _, w := range plan.Workflows {
			if w.Name == f.tool {
				wfs = append(wfs, w)
			}
		}
		if len(wfs) == 0 {
			return failed(fmt.Errorf("%s has no workflow named %q (it has: %s)", path, f.tool, workflowNames(plan)))
		}
	}
	if len(wfs) == 0 {
		return failed(fmt.Errorf("%s holds no workflows", path))
	}
	return render(stdout, wfs, plan)
}

func workflowNames(p *ir.Plan) string {
	names := make([]string, len(p.Workflows))
	for i, w := range p.Workflows {
		names[i] = w.Name
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// renderJSON prints one workflow as an object, or the whole plan when
// several workflows are shown.
func renderJSON(w io.Writer, wfs []*ir.Workflow, plan *ir.Plan) error {
	var v any = wfs[0]
	if len(wfs) > 1 {
		v = plan
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// renderSVG draws the one workflow shown as an SVG document, the bytes
// the web console serves. An SVG document holds one drawing, so a file
// with several workflows needs --tool.
func renderSVG(w io.Writer, wfs []*ir.Workflow, path string) error {
	if len(wfs) > 1 {
		names := make([]string, len(wfs))
		for i, wf := range wfs {
			names[i] = wf.Name
		}
		sort.Strings(names)
		return usageErrorf("%s holds %d workflows (%s) and an SVG document draws one; choose it with --tool NAME", path, len(wfs), strings.Join(names, ", "))
	}
	if err := plangraph.SVG(w, wfs[0], plangraph.Options{}); err != nil {
		return failed(err)
	}
	return nil
}
