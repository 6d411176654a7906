package checker

// Checks of a compiled plan against a tool catalog. A plan.json was
// checked when it was compiled, but perhaps without a catalog, or against
// other backends than the ones vmcp run connects to now. CheckPlan gives
// it the same catalog checks a workflow source gets (tools.go,
// annotations.go): unknown backends and tools, bare and aggregated names
// resolved (or reported as unknown or ambiguous), literal arguments against
// the input schemas, and the annotation floor. Positions are the plan's
// own (each tool reference and template keeps its source position);
// a literal argument, which keeps none, is reported at its step's tool
// reference.

import (
	"slices"
	"sort"
	"strconv"

	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/parser"
)

// CheckPlan checks the workflows of a compiled plan against opts.Tools
// and updates them in place: resolved tool references get their backend
// and tool, and each workflow's annotations become its explicit hints
// merged over the floor its tools allow. Without a catalog there is
// nothing to check and the plan is left as it is.
func CheckPlan(p *ir.Plan, opts Options) diag.List {
	var out diag.List
	cat := opts.Tools
	if p == nil || cat == nil {
		return out
	}
	for _, wf := range p.Workflows {
		ir.EachStep(slices.Concat(wf.Steps, wf.Finally), func(s *ir.Step) {
			if s.Type == ir.StepTool {
				out = append(out, checkPlanStep(opts, s)...)
			}
		})
	}
	// Workflow steps may run this plan's workflows or opts.Workflows.
	callee := func(name string) (*ir.Workflow, bool) {
		for _, list := range [][]*ir.Workflow{p.Workflows, opts.Workflows} {
			for _, wf := range list {
				if wf != nil && wf.Name == name {
					return wf, true
				}
			}
		}
		return nil, false
	}
	for _, wf := range floorOrder(p.Workflows, callee) {
		wfPos := wf.Pos
		out = append(out, applyAnnotationFloor(wf, cat, callee, func(hint string) (ir.Pos, string) {
			return wfPos, pathJoin("annotations", hint)
		})...)
	}
	return out
}

// checkPlanStep checks one tool step of a plan: its tool reference, then
// its arguments.
func checkPlanStep(opts Options, s *ir.Step) diag.List {
	tr := s.Tool
	if tr == nil {
		return nil
	}
	var out diag.List
	if tr.Resolved() {
		out = checkToolExists(opts.Tools, tr, "tool")
	} else {
		out = resolveToolRef(opts.Tools, tr, "tool")
	}
	if out.HasErrors() {
		return out
	}
	var args *parser.Node
	if s.Arguments != nil && s.Arguments.Kind == ir.KindObject && len(s.Arguments.Fields) > 0 {
		args = planNode(s.Arguments, "arguments", tr.Pos)
	}
	return append(out, checkArguments(opts.Tools, tr, args, tr.Pos, "arguments")...)
}

// planNode rebuilds a plan's argument value as the syntax tree the
// argument checks read. Templates keep their source positions; literals,
// keys and containers, whose positions a plan does not keep, get at (the
// step's tool reference).
func planNode(v *ir.Value, path string, at ir.Pos) *parser.Node {
	if v == nil {
		return &parser.Node{Kind: parser.Null, Pos: at, Path: path}
	}
	switch v.Kind {
	case ir.KindObject:
		n := &parser.Node{Kind: parser.Map, Pos: at, Path: path}
		for _, f := range v.Fields {
			n.Fields = append(n.Fields, &parser.Field{Key: f.Key, KeyPos: at, Value: planNode(f.Value, pathJoin(path, f.Key), at)})
		}
		return n
	case ir.KindArray:
		n := &parser.Node{Kind: parser.Seq, Pos: at, Path: path}
		for i, it := range v.Items {
			n.Items = append(n.Items, planNode(it, indexPath(path, i), at))
		}
		return n
	case ir.KindTemplate:
		if v.Template != nil {
			return &parser.Node{Kind: parser.String, Pos: v.Template.Pos, Path: path, Value: v.Template.Source}
		}
	}
	return literalNode(v.Literal, path, at)
}

// literalNode turns a decoded JSON value into a node.
func literalNode(x any, path string, at ir.Pos) *parser.Node {
	n := &parser.Node{Pos: at, Path: path, Value: x}
	switch y := x.(type) {
	case nil:
		n.Kind = parser.Null
	case bool:
		n.Kind = parser.Bool
	case int, int64:
		n.Kind = parser.Int
	case float64:
		n.Kind = parser.Float
	case string:
		n.Kind = parser.String
	case map[string]any:
		n.Kind, n.Value = parser.Map, nil
		for _, k := range sortedKeys(y) {
			n.Fields = append(n.Fields, &parser.Field{Key: k, KeyPos: at, Value: literalNode(y[k], pathJoin(path, k), at)})
		}
	case []any:
		n.Kind, n.Value = parser.Seq, nil
		for i, it := range y {
			n.Items = append(n.Items, literalNode(it, indexPath(path, i), at))
		}
	default:
		n.Kind = parser.String
	}
	return n
}

func indexPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
