package compiler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/checker"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/parser"
	"github.com/vmcp-dev/vmcp/planner"
)

// Source is one input: a workflow file (YAML or JSON) or a compiled plan.
type Source struct {
	// Name is the file name as diagnostics print it: a forward-slash path
	// relative to the working directory.
	Name string
	Src  []byte
}

// Options configure a compilation.
type Options struct {
	// Tools, when set, lets the checker verify backend and tool names and
	// argument types. Nil means no backend knowledge.
	Tools *catalog.Catalog
	// MaxIterations is the server-wide cap on a forEach's maxIterations
	// (limits.maxIterations); 0 means the default (ir.DefaultIterationLimit).
	MaxIterations int
	// Workflows are workflows compiled before (the ones a server already
	// serves) that workflow steps of the sources may call, as they may
	// call the workflows of precompiled plans among the inputs.
	Workflows []*ir.Workflow
	// Verbose, when set, receives notes that are not diagnostics, such as
	// documents skipped because they are not composite-tool definitions.
	Verbose func(msg string)
}

// Diagnostic codes the compiler itself reports (the parser, checker and
// planner have their own).
const (
	CodeBadPlan           = "bad_plan"
	CodeDuplicateWorkflow = "duplicate_workflow"
	CodeNoWorkflows       = "no_workflows"
)

// Compile turns sources into one plan: parse every source, stop if any
// failed; check them together, stop on errors; plan the checked workflows;
// then add the workflows of any precompiled plans among the inputs, which
// get the checker's catalog checks (checker.CheckPlan) when there is a
// catalog. The
// plan is nil whenever the diagnostics hold an error. Diagnostics come back
// sorted, de-duplicated and capped (diag.List.Sorted).
func Compile(inputs []Source, opts Options) (*ir.Plan, diag.List) {
	var diags diag.List

	files, plans := parseAll(inputs, &diags)
	if diags.HasErrors() {
		return nil, diags.Sorted()
	}
	reportSkipped(files, opts.Verbose)

	// Workflow steps may call the workflows of precompiled plans too.
	planned := append([]*ir.Workflow(nil), opts.Workflows...)
	for _, p := range plans {
		planned = append(planned, p.Workflows...)
	}
	wfs, cdiags := checker.Check(files, checker.Options{Tools: opts.Tools, Workflows: planned, MaxIterations: opts.MaxIterations})
	diags = append(diags, cdiags...)
	if diags.HasErrors() {
		return nil, diags.Sorted()
	}

	plan, pdiags := planner.Plan(wfs)
	diags = append(diags, pdiags...)
	if diags.HasErrors() {
		return nil, diags.Sorted()
	}

	for _, p := range plans {
		diags = append(diags, checker.CheckPlan(p, checker.Options{Tools: opts.Tools, Workflows: opts.Workflows})...)
		plan.Workflows = append(plan.Workflows, p.Workflows...)
	}
	checkUniqueNames(plan.Workflows, &diags)
	if diags.HasErrors() {
		return nil, diags.Sorted()
	}
	if len(plan.Workflows) == 0 && len(inputs) > 0 {
		diags.Warnf(ir.Pos{File: inputs[0].Name}, "", CodeNoWorkflows,
			"no composite tool definitions found in %s", describeInputs(inputs))
	}
	return plan, diags.Sorted()
}

// Sources returns the text of every input keyed by name, for diag.Print to
// show the offending line under each diagnostic.
func Sources(inputs []Source) diag.Sources {
	src := make(diag.Sources, len(inputs))
	for _, in := range inputs {
		src[in.Name] = in.Src
	}
	return src
}

// parseAll parses workflow sources and decodes compiled plans.
func parseAll(inputs []Source, diags *diag.List) ([]*parser.File, []*ir.Plan) {
	var files []*parser.File
	var plans []*ir.Plan
	for _, in := range inputs {
		if IsPlan(in.Src) {
			p, err := ir.Decode(in.Src)
			if err != nil {
				diags.Errorf(ir.Pos{File: in.Name, Line: 1, Col: 1}, "", CodeBadPlan, "cannot load compiled plan: %v", err)
				continue
			}
			stampFile(p, in.Name)
			plans = append(plans, p)
			continue
		}
		f, pd := parser.Parse(in.Name, in.Src)
		*diags = append(*diags, pd...)
		if f != nil {
			files = append(files, f)
		}
	}
	return files, plans
}

// IsPlan reports whether src is a compiled plan: a JSON object whose
// "version" starts with "vmcp.plan/". (A plan of another version is still
// a plan; ir.Decode then says which version it wants.)
func IsPlan(src []byte) bool {
	trimmed := bytes.TrimLeft(src, " \t\r\n\ufeff")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return false
	}
	var head struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(trimmed, &head); err != nil {
		return false
	}
	return strings.HasPrefix(head.Version, "vmcp.plan/")
}

// stampFile fills in the file name of positions a plan left without one,
// so diagnostics about a loaded workflow still name a file.
func stampFile(p *ir.Plan, name string) {
	for _, w := range p.Workflows {
		if w.Pos.File == "" {
			w.Pos.File = name
		}
	}
}

func reportSkipped(files []*parser.File, verbose func(string)) {
	if verbose == nil {
		return
	}
	for _, f := range files {
		for _, s := range f.Skipped {
			what := s.Kind
			if s.Name != "" {
				what = fmt.Sprintf("%s %q", s.Kind, s.Name)
			}
			verbose(fmt.Sprintf("%s: skipped %s: not a composite tool definition", s.Pos, what))
		}
	}
}

// checkUniqueNames reports every workflow whose name an earlier one (in
// input order) already took: two tools of one server cannot share a name.
func checkUniqueNames(wfs []*ir.Workflow, diags *diag.List) {
	first := map[string]*ir.Workflow{}
	for _, w := range wfs {
		prev, ok := first[w.Name]
		if !ok {
			first[w.Name] = w
			continue
		}
		diags.Add(diag.Diagnostic{
			Severity: diag.Error,
			Pos:      w.Pos,
			Path:     "name",
			Code:     CodeDuplicateWorkflow,
			Message:  fmt.Sprintf("workflow %q is already defined at %s", w.Name, prev.Pos),
		})
	}
}

func describeInputs(inputs []Source) string {
	names := make([]string, len(inputs))
	for i, in := range inputs {
		names[i] = in.Name
	}
	sort.Strings(names)
	if len(names) > 3 {
		return fmt.Sprintf("%s and %d more files", strings.Join(names[:3], ", "), len(names)-3)
	}
	return strings.Join(names, ", ")
}
