package semantictest

// Plan builders: each case states its IR in a few lines.

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

func at(line, col int) ir.Pos { return ir.Pos{File: "wf.yaml", Line: line, Col: col} }

func single(src string) bool {
	return strings.HasPrefix(src, "{{") && strings.HasSuffix(src, "}}") && strings.Count(src, "{{") == 1
}

func tpl(src string) *ir.Template {
	return &ir.Template{Source: src, Pos: at(1, 1), Single: single(src)}
}

// val converts a Go value into an ir.Value: strings with "{{" become
// templates, maps objects (keys sorted), slices arrays.
func val(v any) *ir.Value {
	switch x := v.(type) {
	case *ir.Value:
		return x
	case string:
		if strings.Contains(x, "{{") {
			return &ir.Value{Kind: ir.KindTemplate, Template: tpl(x)}
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
			out.Fields = append(out.Fields, &ir.Field{Key: k, Value: val(x[k])})
		}
		return out
	case []any:
		out := &ir.Value{Kind: ir.KindArray}
		for _, e := range x {
			out.Items = append(out.Items, val(e))
		}
		return out
	case int:
		return &ir.Value{Kind: ir.KindLiteral, Literal: int64(x)}
	}
	return &ir.Value{Kind: ir.KindLiteral, Literal: v}
}

type M = map[string]any
type A = []any

// step describes a step for build(); after names its dependencies.
type step struct {
	*ir.Step
	after []string
}

func tool(id, ref string, args M, after ...string) step {
	b, t, _ := strings.Cut(ref, ".")
	s := &ir.Step{ID: id, Type: ir.StepTool, Pos: at(10, 5), Tool: &ir.ToolRef{Backend: b, Name: t}}
	if args != nil {
		s.Arguments = val(args)
	}
	return step{s, after}
}

func (s step) with(f func(*ir.Step)) step { f(s.Step); return s }

func when(cond string) func(*ir.Step) {
	return func(s *ir.Step) { s.Condition = tpl(cond); s.MaySkip = true }
}

func defaults(v any) func(*ir.Step) {
	return func(s *ir.Step) { s.DefaultResults = v }
}

func onError(action string, retries int) func(*ir.Step) {
	return func(s *ir.Step) {
		s.OnError = ir.OnError{Action: action, MaxRetries: retries, RetryDelay: ir.Duration(time.Millisecond)}
	}
}

func timeout(d time.Duration) func(*ir.Step) {
	return func(s *ir.Step) { s.Timeout = ir.Duration(d) }
}

func forEach(id, coll, itemVar string, inner step, after ...string) step {
	inner.ID = id
	s := &ir.Step{ID: id, Type: ir.StepForEach, Pos: at(20, 5), ForEach: &ir.ForEach{
		Collection: tpl(coll), ItemVar: itemVar, MaxParallel: 10, MaxIterations: 100, Step: inner.Step,
	}}
	return step{s, after}
}

func elicit(id, msg string, after ...string) step {
	s := &ir.Step{ID: id, Type: ir.StepElicitation, Pos: at(30, 5), Message: tpl(msg),
		Schema: M{"type": "object"}, OnDecline: ir.ActionAbort, OnCancel: ir.ActionAbort}
	return step{s, after}
}

// build makes a one-workflow plan; steps must be listed in dependency order.
func build(name string, steps ...step) *ir.Workflow {
	wf := &ir.Workflow{Name: name, Description: "test", Pos: at(1, 1), Timeout: ir.Duration(time.Minute),
		FailureMode: ir.FailureAbort, MaxParallel: 10, InputSchema: M{"type": "object"}}
	index := map[string]int{}
	for i, s := range steps {
		s.Index = i
		index[s.ID] = i
		for _, a := range s.after {
			d, ok := index[a]
			if !ok {
				panic(fmt.Sprintf("step %q: dependency %q not defined before it", s.ID, a))
			}
			s.Deps = append(s.Deps, d)
		}
		sort.Ints(s.Deps)
		wf.Steps = append(wf.Steps, s.Step)
	}
	return wf
}

func plan(wfs ...*ir.Workflow) *ir.Plan { return &ir.Plan{Version: ir.Version, Workflows: wfs} }

type schemaMap map[string]M

func (s schemaMap) InputSchema(backend, tool string) (map[string]any, bool) {
	m, ok := s[backend+"."+tool]
	return m, ok
}

// calledOnce checks that the backend saw exactly one call for step id.
func calledOnce(id string) func(*testing.T, *runtime.Run, *fakeBackend) {
	return func(t *testing.T, _ *runtime.Run, fb *fakeBackend) {
		t.Helper()
		if n := len(fb.callsTo(id)); n != 1 {
			t.Errorf("step %q called its tool %d times; want 1 (maxRetries has no effect without action retry)", id, n)
		}
	}
}

func structured(v any) func(M) any { return func(M) any { return v } }
