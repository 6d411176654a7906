package checker

// The annotation safety floor (ToolHive #6208). A composite tool's MCP
// annotations are derived from the backend tools its steps call (forEach
// inner steps included), when a tool catalog is known:
//
//   - readOnlyHint is true only if every step's tool is read-only;
//   - destructiveHint is true if any step's tool may be destructive;
//   - openWorldHint is true if any step's tool works in an open world;
//   - idempotentHint is never derived: idempotence does not compose.
//
// A hint the backend does not declare counts as the unsafe value (not
// read-only, destructive, open-world), as ToolHive counts it. Where vmcp
// reads the MCP specification more closely than ToolHive: a read-only tool
// is never destructive (the specification gives destructiveHint meaning
// only when readOnlyHint is false, and mcp-go's NewTool declares
// destructiveHint: true by default even on read-only tools).
//
// The author's explicit hints are merged over that floor; each hint the
// floor supplied is listed in ir.Annotations.Derived, so a compiled plan
// can be derived again from vmcp run's live catalog. An explicit hint that
// makes the tool look safer than the floor (readOnlyHint: true,
// destructiveHint: false or openWorldHint: false over a step that does not
// allow it) is an error naming the step. ToolHive drops such a tool with a
// log line when it advertises its tools; vmcp refuses it at compile time
// with a catalog and at vmcp run startup. A workflow without tool steps
// (only elicitations) has no floor: its annotations stay as written.
//
// A workflow step counts as a tool whose annotations are its callee's
// final ones (a callee without annotations counts as unknown), so a
// composite tool cannot look safer than the workflows it runs. Floors are
// therefore applied callees first (floorOrder).

import (
	"fmt"
	"slices"
	"sort"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
)

// The hints the floor derives, in the order they are reported.
const (
	hintReadOnly    = "readOnlyHint"
	hintDestructive = "destructiveHint"
	hintOpenWorld   = "openWorldHint"
)

// hintRule is one derived hint: its safe value (the one an author may
// claim only when every step allows it) and how a step's tool affects it.
type hintRule struct {
	hint string
	safe bool // read-only: true; destructive, open-world: false
	// unsafe reports whether the tool denies the safe value, and whether
	// that is only because it does not say.
	unsafe func(a *ir.Annotations) (bool, bool)
	field  func(a *ir.Annotations) **bool // the hint's field in a
}

var hintRules = []hintRule{
	{
		hint: hintReadOnly, safe: true,
		unsafe: func(a *ir.Annotations) (bool, bool) {
			if a == nil || a.ReadOnlyHint == nil {
				return true, true
			}
			return !*a.ReadOnlyHint, false
		},
		field: func(a *ir.Annotations) **bool { return &a.ReadOnlyHint },
	},
	{
		hint: hintDestructive, safe: false,
		unsafe: func(a *ir.Annotations) (bool, bool) {
			if a != nil && a.ReadOnlyHint != nil && *a.ReadOnlyHint {
				return false, false
			}
			if a == nil || a.DestructiveHint == nil {
				return true, true
			}
			return *a.DestructiveHint, false
		},
		field: func(a *ir.Annotations) **bool { return &a.DestructiveHint },
	},
	{
		hint: hintOpenWorld, safe: false,
		unsafe: func(a *ir.Annotations) (bool, bool) {
			if a == nil || a.OpenWorldHint == nil {
				return true, true
			}
			return *a.OpenWorldHint, false
		},
		field: func(a *ir.Annotations) **bool { return &a.OpenWorldHint },
	},
}

// stepTool is a step that calls a backend tool the catalog knows.
type stepTool struct {
	id   string
	ref  *ir.ToolRef
	tool *catalog.Tool
}

// stepTools lists the steps of wf that call a known backend tool or a
// known workflow (callee finds it), in plan order, forEach inner steps
// under their loop's id. Steps whose tool or workflow is unresolved or
// unknown are left out; they have errors of their own.
func stepTools(wf *ir.Workflow, cat *catalog.Catalog, callee func(string) (*ir.Workflow, bool)) (known []stepTool, hasTools bool) {
	add := func(id string, s *ir.Step) {
		if s.Workflow != nil {
			if c, ok := callee(s.Workflow.Name); ok {
				hasTools = true
				ref := &ir.ToolRef{Ref: fmt.Sprintf("workflow %q", c.Name), Pos: s.Workflow.Pos}
				known = append(known, stepTool{id: id, ref: ref, tool: &catalog.Tool{Annotations: c.Annotations}})
			}
			return
		}
		tr := s.Tool
		if tr == nil {
			return
		}
		hasTools = true
		if t, ok := cat.Tool(tr.Backend, tr.Name); ok && tr.Resolved() {
			known = append(known, stepTool{id: id, ref: tr, tool: t})
		}
	}
	// Every step that calls something, loop inner steps and bodies too.
	ir.EachStep(slices.Concat(wf.Steps, wf.Finally), func(s *ir.Step) {
		if s.Type == ir.StepTool || s.Type == ir.StepWorkflow {
			add(s.ID, s)
		}
	})
	return known, hasTools
}

// floorOrder returns wfs with every workflow after the workflows its
// workflow steps run (callee finds them; a cycle, reported elsewhere, is
// cut where it closes), so each floor sees its callees' final annotations.
func floorOrder(wfs []*ir.Workflow, callee func(string) (*ir.Workflow, bool)) []*ir.Workflow {
	in := map[*ir.Workflow]bool{}
	for _, wf := range wfs {
		in[wf] = true
	}
	seen := map[*ir.Workflow]bool{}
	var out []*ir.Workflow
	var visit func(wf *ir.Workflow)
	visit = func(wf *ir.Workflow) {
		if seen[wf] {
			return
		}
		seen[wf] = true
		ir.EachStep(wf.Steps, func(s *ir.Step) {
			if s.Workflow == nil {
				return
			}
			if c, ok := callee(s.Workflow.Name); ok && in[c] {
				visit(c)
			}
		})
		out = append(out, wf)
	}
	for _, wf := range wfs {
		visit(wf)
	}
	return out
}

// hintPos says where an explicit hint is written, for diagnostics.
type hintPos func(hint string) (ir.Pos, string)

// applyAnnotationFloor derives wf's annotation floor from the catalog,
// reports every explicit hint that is safer than the floor, and replaces
// wf.Annotations with the explicit hints merged over the floor. Hints that
// wf.Annotations.Derived lists are not explicit: they are derived again.
func applyAnnotationFloor(wf *ir.Workflow, cat *catalog.Catalog, callee func(string) (*ir.Workflow, bool), at hintPos) diag.List {
	var out diag.List
	steps, hasTools := stepTools(wf, cat, callee)
	if !hasTools {
		return out
	}
	explicit := explicitAnnotations(wf.Annotations)
	merged := &ir.Annotations{Title: explicit.Title, IdempotentHint: explicit.IdempotentHint}
	for _, r := range hintRules {
		var offenders []stepTool
		var unknown []bool
		for _, st := range steps {
			if bad, unk := r.unsafe(st.tool.Annotations); bad {
				offenders = append(offenders, st)
				unknown = append(unknown, unk)
			}
		}
		floor := r.safe
		if len(offenders) > 0 {
			floor = !r.safe
		}
		declared := *r.field(explicit)
		if declared == nil {
			v := floor
			*r.field(merged) = &v
			merged.Derived = append(merged.Derived, r.hint)
			continue
		}
		v := *declared
		*r.field(merged) = &v
		if v != r.safe || len(offenders) == 0 {
			continue
		}
		var others []string
		for i, o := range offenders[1:] {
			others = append(others, unsafeStep(r.hint, o.id, o.ref.Pos, o.ref.String(), unknown[i+1]))
		}
		pos, path := at(r.hint)
		first := offenders[0]
		out.Add(errUnsafeAnnotation(pos, path, r.hint, v, first.id, first.ref.Pos, first.ref.String(), unknown[0], others))
	}
	sort.Strings(merged.Derived)
	wf.Annotations = merged
	return out
}

// explicitAnnotations returns the hints of a that the author wrote: all of
// them, less those a earlier derivation listed in Derived.
func explicitAnnotations(a *ir.Annotations) *ir.Annotations {
	out := &ir.Annotations{}
	if a == nil {
		return out
	}
	*out = *a
	out.Derived = nil
	for _, h := range a.Derived {
		for _, r := range hintRules {
			if r.hint == h {
				*r.field(out) = nil
			}
		}
	}
	return out
}
