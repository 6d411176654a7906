package authoring

// Checking a draft. Check runs the compiler (compiler.Compile, the same
// front end, checker and planner `vmcp run` uses for its files) with the
// live catalog narrowed to the backends authoring.backends allows, and
// adds the authoring rules: a source holds one workflow; a tool of a
// backend outside authoring.backends is backend_not_allowed at its tool
// reference (in place of the checker's unknown_backend there), and so is a
// workflow step whose callee reaches such a backend; and, for
// saving, the name must not be a workflow from files or another tool.

import (
	"regexp"
	"slices"
	"strings"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/checker"
	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/parser"
)

// DraftFile is the file name positions of a checked draft carry.
const DraftFile = "draft.yaml"

// Compiler checks drafts against the live catalog.
type Compiler struct {
	// Catalog is the connected backends' tools.
	Catalog *catalog.Catalog
	// Allowed are the backends authored workflows may call (sorted); empty
	// means every backend.
	Allowed []string
	// MaxIterations is limits.maxIterations.
	MaxIterations int
}

// Checked is the outcome of checking one draft.
type Checked struct {
	// Workflow is the compiled workflow; nil when Diagnostics has errors.
	Workflow *ir.Workflow
	// Name is the workflow's name when the source has one, also on errors.
	Name        string
	Diagnostics diag.List
	Sources     diag.Sources
	// Callees are the served workflows the workflow runs, through its own
	// workflow steps or theirs (sorted; reach.go); a draft run needs the
	// scope each of them needs.
	Callees []string
	// namePos and namePath locate the name, for the save rules.
	namePos  ir.Pos
	namePath string
}

// OK reports whether the draft compiled without errors.
func (c *Checked) OK() bool { return c.Workflow != nil && !c.Diagnostics.HasErrors() }

// Check compiles source (named file in positions; DraftFile when empty).
// callable are the served workflows its workflow steps may call; one of
// the draft's own name is left out (the draft replaces it).
func (c *Compiler) Check(file, source string, callable []*ir.Workflow) *Checked {
	if file == "" {
		file = DraftFile
	}
	src := []byte(source)
	out := &Checked{Sources: diag.Sources{file: src}}
	switch {
	case strings.TrimSpace(source) == "":
		out.Diagnostics.Add(errEmptySource(file))
		return out
	case compiler.IsPlan(src):
		out.Diagnostics.Add(errPlanSource(file))
		return out
	}
	f, pdiags := parser.Parse(file, src)
	if pdiags.HasErrors() || f == nil {
		out.Diagnostics = pdiags.Sorted()
		return out
	}
	var own diag.List
	switch len(f.Workflows) {
	case 0:
		out.Diagnostics.Add(errNoWorkflow(file))
		return out
	case 1:
	default:
		second := f.Workflows[1]
		own.Add(errOneWorkflow(second.Node.Pos, second.Node.Path, nameOf(f.Workflows[0])))
	}
	first := f.Workflows[0]
	out.Name = nameOf(first)
	out.namePos, out.namePath = first.Node.Pos, "name"
	if first.Name != nil {
		out.namePos, out.namePath = first.Name.Pos, first.Name.Path
	}
	var others []*ir.Workflow
	served := map[string]*ir.Workflow{}
	for _, wf := range callable {
		if wf.Name != out.Name {
			others = append(others, wf)
			served[wf.Name] = wf
		}
	}
	forbidden := c.forbiddenRefs(first, served, &own)
	plan, cdiags := compiler.Compile([]compiler.Source{{Name: file, Src: src}},
		compiler.Options{Tools: c.allowedCatalog(), MaxIterations: c.MaxIterations, Workflows: others})
	for _, d := range cdiags {
		if d.Code == checker.CodeUnknownBackend && forbidden[d.Pos] {
			continue // said better by backend_not_allowed
		}
		own.Add(d)
	}
	out.Diagnostics = own.Sorted()
	if !out.Diagnostics.HasErrors() && plan != nil && len(plan.Workflows) == 1 {
		out.Workflow = plan.Workflows[0]
		out.Callees = reach(out.Workflow, served).Workflows
	}
	return out
}

func nameOf(w *parser.Workflow) string {
	if w.Name != nil {
		if s, ok := w.Name.Value.(string); ok {
			return s
		}
	}
	return ""
}

// allowedCatalog is the catalog narrowed to the allowed backends.
func (c *Compiler) allowedCatalog() *catalog.Catalog {
	if c.Catalog == nil || len(c.Allowed) == 0 {
		return c.Catalog
	}
	out := catalog.New()
	for name, b := range c.Catalog.Backends {
		if slices.Contains(c.Allowed, name) {
			out.Backends[name] = b
		}
	}
	return out
}

// forbiddenRefs reports every tool reference backend.tool of w whose
// backend is connected but not allowed, and every workflow step whose
// callee (one of served) reaches such a backend (reach.go), and returns
// the tool references' positions.
func (c *Compiler) forbiddenRefs(w *parser.Workflow, served map[string]*ir.Workflow, out *diag.List) map[ir.Pos]bool {
	at := map[ir.Pos]bool{}
	if c.Catalog == nil || len(c.Allowed) == 0 {
		return at
	}
	var walk func(steps []*parser.Step)
	walk = func(steps []*parser.Step) {
		for _, s := range steps {
			if s == nil {
				continue
			}
			if s.Tool != nil {
				if ref, ok := s.Tool.Value.(string); ok {
					backend, _, found := strings.Cut(ref, ".")
					if _, connected := c.Catalog.Backends[backend]; found && connected && !slices.Contains(c.Allowed, backend) {
						out.Add(errBackendNotAllowed(s.Tool.Pos, s.Tool.Path, backend, c.Allowed))
						at[s.Tool.Pos] = true
					}
				}
			}
			if s.Workflow != nil {
				if name, ok := s.Workflow.Value.(string); ok && served[name] != nil {
					if b := outside(reach(served[name], served).Backends, c.Allowed); b != "" {
						out.Add(errCalleeNotAllowed(s.Workflow.Pos, s.Workflow.Path, name, b, c.Allowed))
					}
				}
			}
			if s.Inner != nil {
				walk([]*parser.Step{s.Inner})
			}
			walk(s.Body)
		}
	}
	walk(w.Steps)
	walk(w.Finally)
	return at
}

// windowsDevice matches the names Windows keeps for devices: a file
// called con.yaml cannot be checked out there, and authoring.dir is meant
// to be committed. (Workflow names are lower case.)
var windowsDevice = regexp.MustCompile(`^(con|prn|aux|nul|com[0-9]|lpt[0-9])$`)

// checkName adds the save rules for the name: not a workflow from files,
// not another tool's name, not a Windows device name.
func (ch *Checked) checkName(files map[string]*ir.Workflow, taken func(string) bool) {
	if ch.Name == "" {
		return
	}
	if wf, ok := files[ch.Name]; ok {
		ch.Diagnostics = append(ch.Diagnostics, errFileWorkflow(ch.namePos, ch.namePath, ch.Name, wf.Pos)).Sorted()
	} else if strings.HasPrefix(ch.Name, "vmcp_") || (taken != nil && taken(ch.Name)) {
		ch.Diagnostics = append(ch.Diagnostics, errReservedName(ch.namePos, ch.namePath, ch.Name)).Sorted()
	} else if windowsDevice.MatchString(ch.Name) {
		ch.Diagnostics = append(ch.Diagnostics, errDeviceName(ch.namePos, ch.namePath, ch.Name)).Sorted()
	}
	if ch.Diagnostics.HasErrors() {
		ch.Workflow = nil
	}
}
