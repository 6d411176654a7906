package main

// Renderers for `vmcpc plan`. Each takes planned workflows (steps in plan
// order, Levels, Stats and CriticalPath filled in by the planner) and
// writes them in one format, several workflows one after another. All
// output is deterministic: it follows plan order, never map order.

import (
	"fmt"
	"io"
	"strings"

	"github.com/vmcp-dev/vmcp/ir"
)

// renderText prints a level timeline, the statistics, the critical path
// and a step table:
//
//	workflow investigate_incident (examples/incident_investigation.yaml:15:9)
//
//	level 0 | fetch_logs  fetch_metrics  fetch_traces
//	level 1 | correlate
//	level 2 | create_ticket
//	...
func renderText(w io.Writer, wfs []*ir.Workflow) error {
	var b strings.Builder
	for i, wf := range wfs {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "workflow %s (%s)\n", wf.Name, wf.Pos)
		if d := firstLine(wf.Description); d != "" {
			fmt.Fprintf(&b, "  %s\n", d)
		}
		b.WriteString("\n")

		labelWidth := len(fmt.Sprintf("level %d", len(wf.Levels)-1))
		for l, level := range wf.Levels {
			ids := make([]string, len(level))
			for j, idx := range level {
				ids[j] = wf.Steps[idx].ID
			}
			fmt.Fprintf(&b, "%-*s | %s\n", labelWidth, fmt.Sprintf("level %d", l), strings.Join(ids, "  "))
		}

		st := wf.Stats
		b.WriteString("\nstatistics\n")
		for _, row := range []struct {
			name string
			v    int
		}{
			{"total_levels", st.TotalLevels},
			{"total_steps", st.TotalSteps},
			{"max_parallelism", st.MaxParallelism},
			{"min_parallelism", st.MinParallelism},
			{"sequential_steps", st.SequentialSteps},
		} {
			fmt.Fprintf(&b, "  %-17s %d\n", row.name, row.v)
		}

		fmt.Fprintf(&b, "\ncritical path (%s)\n  %s\n", plural(len(wf.CriticalPath), "step"), strings.Join(stepIDs(wf, wf.CriticalPath), " -> "))

		b.WriteString("\nsteps\n")
		writeStepTable(&b, wf.Steps, "  ")
		for _, s := range wf.Steps {
			renderBodyText(&b, s, "  ")
		}
		renderFinallyText(&b, wf)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// renderFinallyText prints the finally steps, when there are any: their
// levels, the time bound and a step table.
//
//	finally (2 steps, 2 levels; at most 1m0s after the run ends)
//	  level 0 | release
//	  level 1 | report
//	  release  locks.release (conditional)
//	  report   chat.post  after release
func renderFinallyText(b *strings.Builder, wf *ir.Workflow) {
	if len(wf.Finally) == 0 {
		return
	}
	fmt.Fprintf(b, "\nfinally (%s, %s; at most %s after the run ends)\n",
		plural(len(wf.Finally), "step"), plural(len(wf.FinallyLevels), "level"), wf.FinallyBound.D())
	labelWidth := len(fmt.Sprintf("level %d", len(wf.FinallyLevels)-1))
	for l, level := range wf.FinallyLevels {
		fmt.Fprintf(b, "  %-*s | %s\n", labelWidth, fmt.Sprintf("level %d", l), strings.Join(finallyIDs(wf, level), "  "))
	}
	writeStepTable(b, wf.Finally, "  ")
	for _, s := range wf.Finally {
		renderBodyText(b, s, "  ")
	}
}

// renderBodyText prints a loop body below the step table it belongs to,
// indented one step per nesting level: its levels, critical path, steps
// and the loop's output fields, then the bodies nested in it.
//
//	body of per_ns (for each ns; 3 steps, 2 levels)
//	  level 0 | pods  per_kind
//	  level 1 | write_pods
//	  critical path: pods -> write_pods
//	  pods        k8s.list_resources
//	  write_pods  graph.merge_nodes (conditional)  after pods
func renderBodyText(b *strings.Builder, loop *ir.Step, indent string) {
	fe := loop.ForEach
	if fe == nil || len(fe.Steps) == 0 {
		return
	}
	ids := func(idx []int) []string { return idsOf(fe.Steps, idx) }
	fmt.Fprintf(b, "\n%sbody of %s (for each %s; %s, %s)\n", indent, loop.ID, fe.ItemVar, plural(len(fe.Steps), "step"), plural(len(fe.Levels), "level"))
	in := indent + "  "
	labelWidth := len(fmt.Sprintf("level %d", len(fe.Levels)-1))
	for l, level := range fe.Levels {
		fmt.Fprintf(b, "%s%-*s | %s\n", in, labelWidth, fmt.Sprintf("level %d", l), strings.Join(ids(level), "  "))
	}
	fmt.Fprintf(b, "%scritical path: %s\n", in, strings.Join(ids(fe.CriticalPath), " -> "))
	writeStepTable(b, fe.Steps, in)
	if fe.Output != nil {
		var names []string
		for _, p := range fe.Output.Properties {
			names = append(names, p.Name)
		}
		fmt.Fprintf(b, "%soutput: %s\n", in, strings.Join(names, ", "))
	}
	for _, s := range fe.Steps {
		renderBodyText(b, s, in)
	}
}

func finallyIDs(wf *ir.Workflow, idx []int) []string { return idsOf(wf.Finally, idx) }

// writeStepTable prints one line per step, indented: its id, what it does
// and the steps of the same list it runs after, in aligned columns.
func writeStepTable(b *strings.Builder, steps []*ir.Step, indent string) {
	idWidth, actionWidth := 0, 0
	for _, s := range steps {
		idWidth = max(idWidth, len(s.ID))
		actionWidth = max(actionWidth, len(stepAction(s)))
	}
	for _, s := range steps {
		line := fmt.Sprintf("%s%-*s  %-*s", indent, idWidth, s.ID, actionWidth, stepAction(s))
		if len(s.Deps) > 0 {
			line += "  after " + strings.Join(idsOf(steps, s.Deps), ", ")
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
}

// stepAction says what a step does in a few words.
func stepAction(s *ir.Step) string {
	var what string
	switch s.Type {
	case ir.StepElicitation:
		what = "elicitation"
	case ir.StepForEach:
		what = "forEach"
		if s.ForEach != nil && s.ForEach.Step != nil {
			if inner := s.ForEach.Step; inner.Tool != nil || inner.Workflow != nil {
				what = fmt.Sprintf("forEach %s: %s", s.ForEach.ItemVar, stepAction(inner))
			}
		}
		if s.ForEach != nil && len(s.ForEach.Steps) > 0 {
			what = fmt.Sprintf("forEach %s: %s", s.ForEach.ItemVar, plural(len(s.ForEach.Steps), "body step"))
		}
	case ir.StepWorkflow:
		what = "workflow"
		if s.Workflow != nil {
			what = "workflow " + s.Workflow.Name
		}
	default:
		if s.Tool != nil {
			what = s.Tool.String()
		} else {
			what = s.Type
		}
	}
	var marks []string
	if s.Condition != nil {
		marks = append(marks, "conditional")
	}
	if s.Idempotent {
		marks = append(marks, "idempotent")
	}
	if len(marks) > 0 {
		what += " (" + strings.Join(marks, ", ") + ")"
	}
	return what
}

func stepIDs(wf *ir.Workflow, idx []int) []string { return idsOf(wf.Steps, idx) }

// idsOf names the steps at the indexes idx of steps.
func idsOf(steps []*ir.Step, idx []int) []string {
	out := make([]string, len(idx))
	for i, x := range idx {
		out[i] = steps[x].ID
	}
	return out
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

// criticalEdges returns the set of edges (from, to) on the critical path.
func criticalEdges(wf *ir.Workflow) map[[2]int]bool {
	edges := map[[2]int]bool{}
	for i := 1; i < len(wf.CriticalPath); i++ {
		edges[[2]int{wf.CriticalPath[i-1], wf.CriticalPath[i]}] = true
	}
	return edges
}

func onCriticalPath(wf *ir.Workflow) map[int]bool {
	on := map[int]bool{}
	for _, i := range wf.CriticalPath {
		on[i] = true
	}
	return on
}

// renderDOT prints one Graphviz digraph per workflow. Each level is a
// rank=same subgraph, so levels line up in rows; critical-path nodes are
// bold and critical-path edges red and thick.
func renderDOT(w io.Writer, wfs []*ir.Workflow) error {
	var b strings.Builder
	for i, wf := range wfs {
		if i > 0 {
			b.WriteString("\n")
		}
		crit := criticalEdges(wf)
		onPath := onCriticalPath(wf)
		fmt.Fprintf(&b, "digraph %s {\n", dotID(wf.Name))
		b.WriteString("  rankdir=TB;\n")
		fmt.Fprintf(&b, "  label=%s;\n  labelloc=t;\n", dotID(wf.Name))
		b.WriteString("  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n")
		b.WriteString("  edge [color=\"#555555\"];\n")
		for l, level := range wf.Levels {
			fmt.Fprintf(&b, "  subgraph level_%d {\n    rank=same;\n", l)
			for _, idx := range level {
				s := wf.Steps[idx]
				attrs := fmt.Sprintf("label=%s", dotID(s.ID+"\n"+stepAction(s)))
				if onPath[idx] {
					attrs += ", style=\"rounded,bold\", color=\"#d62728\""
				}
				if s.Type == ir.StepElicitation {
					attrs += ", shape=parallelogram"
				}
				if s.Type == ir.StepForEach {
					attrs += ", peripheries=2"
				}
				if s.Type == ir.StepWorkflow {
					attrs += ", shape=component"
				}
				fmt.Fprintf(&b, "    %s [%s];\n", dotID(s.ID), attrs)
			}
			b.WriteString("  }\n")
		}
		for _, s := range wf.Steps {
			for _, d := range s.Deps {
				attrs := ""
				if crit[[2]int{d, s.Index}] {
					attrs = " [color=\"#d62728\", penwidth=2.5]"
				}
				fmt.Fprintf(&b, "  %s -> %s%s;\n", dotID(wf.Steps[d].ID), dotID(s.ID), attrs)
			}
		}
		for _, s := range wf.Steps {
			renderBodyDOT(&b, s, "  ")
		}
		renderFinallyDOT(&b, wf)
		b.WriteString("}\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// renderBodyDOT draws a loop body as a dotted cluster (nested bodies as
// clusters inside it), with the body's own edges and a dotted edge from
// the loop to each body root. Step ids are unique across the workflow,
// bodies included, so node names do not clash.
func renderBodyDOT(b *strings.Builder, loop *ir.Step, indent string) {
	fe := loop.ForEach
	if fe == nil || len(fe.Steps) == 0 {
		return
	}
	in := indent + "  "
	fmt.Fprintf(b, "%ssubgraph %s {\n%slabel=%s;\n%sstyle=dotted;\n", indent, dotID("cluster_body_"+loop.ID), in,
		dotID(fmt.Sprintf("body of %s: for each %s", loop.ID, fe.ItemVar)), in)
	for _, s := range fe.Steps {
		attrs := fmt.Sprintf("label=%s", dotID(s.ID+"\n"+stepAction(s)))
		switch s.Type {
		case ir.StepForEach:
			attrs += ", peripheries=2"
		case ir.StepWorkflow:
			attrs += ", shape=component"
		}
		fmt.Fprintf(b, "%s%s [%s];\n", in, dotID(s.ID), attrs)
	}
	for _, s := range fe.Steps {
		renderBodyDOT(b, s, in)
	}
	b.WriteString(indent + "}\n")
	for _, s := range fe.Steps {
		if len(s.Deps) == 0 {
			fmt.Fprintf(b, "%s%s -> %s [style=dotted];\n", indent, dotID(loop.ID), dotID(s.ID))
		}
		for _, d := range s.Deps {
			fmt.Fprintf(b, "%s%s -> %s;\n", indent, dotID(fe.Steps[d].ID), dotID(s.ID))
		}
	}
}

// renderFinallyDOT draws the finally steps in a dashed cluster below the
// steps, with their own edges. Step ids are unique across both lists, so
// node names do not clash.
func renderFinallyDOT(b *strings.Builder, wf *ir.Workflow) {
	if len(wf.Finally) == 0 {
		return
	}
	fmt.Fprintf(b, "  subgraph cluster_finally {\n    label=%s;\n    style=dashed;\n",
		dotID(fmt.Sprintf("finally (at most %s after the run ends)", wf.FinallyBound.D())))
	for _, s := range wf.Finally {
		attrs := fmt.Sprintf("label=%s", dotID(s.ID+"\n"+stepAction(s)))
		if s.Type == ir.StepForEach {
			attrs += ", peripheries=2"
		}
		fmt.Fprintf(b, "    %s [%s];\n", dotID(s.ID), attrs)
	}
	for _, s := range wf.Finally {
		renderBodyDOT(b, s, "    ")
	}
	b.WriteString("  }\n")
	for _, s := range wf.Finally {
		for _, d := range s.Deps {
			fmt.Fprintf(b, "  %s -> %s;\n", dotID(wf.Finally[d].ID), dotID(s.ID))
		}
	}
}

// dotID quotes s as a DOT string.
func dotID(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// renderMermaid prints one `flowchart TD` per workflow, titled with the
// workflow name. Nodes are named s0, s1, ... by plan index so any step id
// is safe; labels carry the id and the action. Critical-path edges are
// drawn thick (==>) and critical-path nodes get the "critical" class.
func renderMermaid(w io.Writer, wfs []*ir.Workflow) error {
	var b strings.Builder
	for i, wf := range wfs {
		if i > 0 {
			b.WriteString("\n")
		}
		crit := criticalEdges(wf)
		fmt.Fprintf(&b, "---\ntitle: %s\n---\nflowchart TD\n", wf.Name)
		for _, s := range wf.Steps {
			open, closing := mermaidShape(s)
			fmt.Fprintf(&b, "  s%d%s\"%s<br/>%s\"%s\n", s.Index, open, mermaidText(s.ID), mermaidText(stepAction(s)), closing)
		}
		for _, s := range wf.Steps {
			renderBodyMermaid(&b, s, fmt.Sprintf("s%d", s.Index), "  ")
		}
		for _, s := range wf.Steps {
			for _, d := range s.Deps {
				arrow := "-->"
				if crit[[2]int{d, s.Index}] {
					arrow = "==>"
				}
				fmt.Fprintf(&b, "  s%d %s s%d\n", d, arrow, s.Index)
			}
		}
		renderFinallyMermaid(&b, wf)
		var critNodes []string
		for _, idx := range wf.CriticalPath {
			critNodes = append(critNodes, fmt.Sprintf("s%d", idx))
		}
		b.WriteString("  classDef critical stroke:#d62728,stroke-width:3px\n")
		if len(critNodes) > 0 {
			fmt.Fprintf(&b, "  class %s critical\n", strings.Join(critNodes, ","))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mermaidShape is the pair of brackets that draws a step's node.
func mermaidShape(s *ir.Step) (string, string) {
	switch s.Type {
	case ir.StepElicitation:
		return "[/", "/]"
	case ir.StepForEach:
		return "[[", "]]"
	case ir.StepWorkflow:
		return "{{", "}}"
	}
	return "[", "]"
}

// renderBodyMermaid draws a loop body as a subgraph named b<node> (nested
// bodies as subgraphs inside it), its steps named <node>_0, <node>_1, ...
// by body index, and a dotted edge from the loop node to the subgraph.
func renderBodyMermaid(b *strings.Builder, loop *ir.Step, node, indent string) {
	fe := loop.ForEach
	if fe == nil || len(fe.Steps) == 0 {
		return
	}
	in := indent + "  "
	fmt.Fprintf(b, "%ssubgraph b%s [\"%s\"]\n", indent, node, mermaidText(fmt.Sprintf("body of %s: for each %s", loop.ID, fe.ItemVar)))
	for _, s := range fe.Steps {
		open, closing := mermaidShape(s)
		fmt.Fprintf(b, "%s%s_%d%s\"%s<br/>%s\"%s\n", in, node, s.Index, open, mermaidText(s.ID), mermaidText(stepAction(s)), closing)
	}
	for _, s := range fe.Steps {
		for _, d := range s.Deps {
			fmt.Fprintf(b, "%s%s_%d --> %s_%d\n", in, node, d, node, s.Index)
		}
	}
	for _, s := range fe.Steps {
		renderBodyMermaid(b, s, fmt.Sprintf("%s_%d", node, s.Index), in)
	}
	b.WriteString(indent + "end\n")
	fmt.Fprintf(b, "%s%s -.-> b%s\n", indent, node, node)
}

// renderFinallyMermaid draws the finally steps as a subgraph, nodes named
// f0, f1, ... by their index in Finally.
func renderFinallyMermaid(b *strings.Builder, wf *ir.Workflow) {
	if len(wf.Finally) == 0 {
		return
	}
	fmt.Fprintf(b, "  subgraph finally [\"finally (at most %s after the run ends)\"]\n", wf.FinallyBound.D())
	for _, s := range wf.Finally {
		open, closing := "[", "]"
		if s.Type == ir.StepForEach {
			open, closing = "[[", "]]"
		}
		fmt.Fprintf(b, "    f%d%s\"%s<br/>%s\"%s\n", s.Index, open, mermaidText(s.ID), mermaidText(stepAction(s)), closing)
	}
	for _, s := range wf.Finally {
		for _, d := range s.Deps {
			fmt.Fprintf(b, "    f%d --> f%d\n", d, s.Index)
		}
	}
	for _, s := range wf.Finally {
		renderBodyMermaid(b, s, fmt.Sprintf("f%d", s.Index), "    ")
	}
	b.WriteString("  end\n")
}

// mermaidText escapes text for a quoted Mermaid label.
func mermaidText(s string) string {
	r := strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "\n", " ")
	return r.Replace(s)
}
