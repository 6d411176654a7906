package irbuild

// Plan builders: a test states its workflow's IR in a few lines, with
// predictable positions (file wf.yaml).

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/planner"
)

// At is a position in wf.yaml.
func At(line, col int) ir.Pos { return ir.Pos{File: "wf.yaml", Line: line, Col: col} }

func single(src string) bool {
	return strings.HasPrefix(src, "{{") && strings.HasSuffix(src, "}}") && strings.Count(src, "{{") == 1
}

// Tpl is a template of src.
func Tpl(src string) *ir.Template {
	return &ir.Template{Source: src, Pos: At(1, 1), Single: single(src)}
}

// Val converts a Go value into an ir.Value: strings with "{{" become
// templates, maps objects (keys sorted), slices arrays.
func Val(v any) *ir.Value {
	switch x := v.(type) {
	case *ir.Value:
		return x
	case string:
		if strings.Contains(x, "{{") {
			return &ir.Value{Kind: ir.KindTemplate, Template: Tpl(x)}
		}
		return &ir.Value{Kind: ir.KindLiteral, Literal: x}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := &ir.Value{Kind: ir.KindObject}
		for _, k := range keys {
			out.Fields = append(out.Fields, &ir.Field{Key: k, Value: Val(x[k])})
		}
		return out
	case []any:
		out := &ir.Value{Kind: ir.KindArray}
		for _, e := range x {
			out.Items = append(out.Items, Val(e))
		}
		return out
	case int:
		return &ir.Value{Kind: ir.KindLiteral, Literal: int64(x)}
	}
	return &ir.Value{Kind: ir.KindLiteral, Literal: v}
}

// M and A are JSON objects and arrays.
type (
	M = map[string]any
	A = []any
)

// Step describes a Step for Build(); after names its dependencies.
type Step struct {
	*ir.Step
	After []string
}

// Tool is a tool step calling ref ("backend.tool") with args.
func Tool(id, ref string, args M, after ...string) Step {
	b, t, _ := strings.Cut(ref, ".")
	s := &ir.Step{ID: id, Type: ir.StepTool, Pos: At(10, 5), Tool: &ir.ToolRef{Backend: b, Name: t}, Timeout: ir.Duration(ir.DefaultStepTimeout)}
	if args != nil {
		s.Arguments = Val(args)
	}
	return Step{Step: s, After: after}
}

// With applies f to the step.
func (s Step) With(f func(*ir.Step)) Step { f(s.Step); return s }

// When gives a step a condition.
func When(cond string) func(*ir.Step) {
	return func(s *ir.Step) { s.Condition = Tpl(cond); s.MaySkip = true }
}

// Defaults sets a step's defaultResults.
func Defaults(v any) func(*ir.Step) {
	return func(s *ir.Step) { s.DefaultResults = v }
}

// OnError sets a step's failure action and retries (1 ms apart).
func OnError(action string, retries int) func(*ir.Step) {
	return func(s *ir.Step) {
		s.OnError = ir.OnError{Action: action, MaxRetries: retries, RetryDelay: ir.Duration(time.Millisecond)}
	}
}

// Timeout sets a step's timeout.
func Timeout(d time.Duration) func(*ir.Step) {
	return func(s *ir.Step) { s.Timeout = ir.Duration(d) }
}

// ForEach is a forEach step over coll running inner once per item.
func ForEach(id, coll, itemVar string, inner Step, after ...string) Step {
	inner.ID = id
	if itemVar == "" {
		itemVar = "item"
	}
	s := &ir.Step{ID: id, Type: ir.StepForEach, Pos: At(20, 5), Timeout: ir.Duration(ir.DefaultStepTimeout), ForEach: &ir.ForEach{
		Collection: Tpl(coll), ItemVar: itemVar, MaxParallel: 10, MaxIterations: 100, Step: inner.Step,
	}}
	return Step{Step: s, After: after}
}

// Elicit is an elicitation step asking msg (any object answer).
func Elicit(id, msg string, after ...string) Step {
	s := &ir.Step{ID: id, Type: ir.StepElicitation, Pos: At(30, 5), Message: Tpl(msg), Timeout: ir.Duration(ir.DefaultStepTimeout),
		Schema: M{"type": "object"}, OnDecline: ir.ActionAbort, OnCancel: ir.ActionAbort}
	return Step{Step: s, After: after}
}

// Build makes a workflow; steps must be listed in dependency order. The
// planner then fills in the graph facts (Dependents, Sinks, Remaining,
// levels) as it does for a compiled workflow, since the runtime trusts
// them: call Build again (or Replan) after changing a step's Deps.
func Build(name string, steps ...Step) *ir.Workflow {
	wf := &ir.Workflow{Name: name, Description: "test", Pos: At(1, 1), Timeout: ir.Duration(time.Minute),
		FailureMode: ir.FailureAbort, MaxParallel: 10, InputSchema: M{"type": "object"}}
	index := map[string]int{}
	for i, s := range steps {
		s.Index = i
		index[s.ID] = i
		for _, a := range s.After {
			d, ok := index[a]
			if !ok {
				panic(fmt.Sprintf("Step %q: dependency %q not defined before it", s.ID, a))
			}
			s.Deps = append(s.Deps, d)
		}
		sort.Ints(s.Deps)
		fillDefaults(s.Step)
		wf.Steps = append(wf.Steps, s.Step)
	}
	return Replan(wf)
}

// fillDefaults gives a hand-made step the checker's defaults where the
// test left a field at zero (the runtime applies none): a timeout, and a
// loop's maxParallel, maxIterations and item name, in its inner and body
// steps too.
func fillDefaults(s *ir.Step) {
	if s == nil {
		return
	}
	if s.Timeout <= 0 {
		s.Timeout = ir.Duration(ir.DefaultStepTimeout)
	}
	fe := s.ForEach
	if fe == nil {
		return
	}
	if fe.MaxParallel <= 0 {
		fe.MaxParallel = ir.DefaultMaxParallel
	}
	fe.MaxParallel = min(fe.MaxParallel, ir.MaxForEachParallel)
	if fe.MaxIterations <= 0 {
		fe.MaxIterations = ir.DefaultMaxIterations
	}
	if fe.ItemVar == "" {
		fe.ItemVar = "item"
	}
	fillDefaults(fe.Step)
	for _, b := range fe.Steps {
		fillDefaults(b)
	}
}

// Replan runs the planner over wf in place (and over its finally steps
// and loop bodies) and returns it. A test that edits a built workflow's
// graph calls it before running the workflow.
func Replan(wf *ir.Workflow) *ir.Workflow {
	if _, diags := planner.Plan([]*ir.Workflow{wf}); diags.HasErrors() {
		panic(fmt.Sprintf("irbuild: workflow %q does not plan: %v", wf.Name, diags))
	}
	return wf
}

// Plan is a plan of wfs, each planned (Replan).
func Plan(wfs ...*ir.Workflow) *ir.Plan {
	for _, wf := range wfs {
		Replan(wf)
	}
	return &ir.Plan{Version: ir.Version, Workflows: wfs}
}

// SchemaMap is a SchemaSource of input schemas by "backend.tool".
type SchemaMap map[string]M

// InputSchema returns the schema of backend.tool.
func (s SchemaMap) InputSchema(backend, tool string) (map[string]any, bool) {
	m, ok := s[backend+"."+tool]
	return m, ok
}
