package checker

// Argument and var values become ir.Value trees: mappings keep their keys
// in source order, sequences their items, strings with an action become
// templates (checked like any other), and every other scalar is a literal.
// Nesting deeper than maxNesting levels is an error reported once, at the
// first node past the limit.

import (
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/parser"
)

// arguments converts a tool step's arguments and checks them against the
// input schema of its tool tr when a catalog is known.
func (w *wfCheck) arguments(s *parser.Step, tr *ir.ToolRef, sc scope) *ir.Value {
	n := s.Arguments
	if n == nil || n.Kind == parser.Null {
		w.checkToolArgs(tr, s, nil)
		return &ir.Value{Kind: ir.KindObject}
	}
	if !w.kind(n, "arguments", parser.Map) {
		return nil
	}
	tooDeep := false
	v := w.value(n, sc, 1, "arguments", &tooDeep)
	w.checkToolArgs(tr, s, n)
	return v
}

// value converts n at nesting depth depth (the top is 1).
func (w *wfCheck) value(n *parser.Node, sc scope, depth int, what string, tooDeep *bool) *ir.Value {
	if depth > maxNesting {
		if !*tooDeep {
			*tooDeep = true
			w.add(errNestingTooDeep(n.Pos, n.Path, what))
		}
		return nil
	}
	switch n.Kind {
	case parser.Map:
		v := w.newValue(ir.Value{Kind: ir.KindObject})
		if len(n.Fields) > 0 {
			// One block for the fields; Fields stays nil when there are none.
			block := make([]ir.Field, len(n.Fields))
			v.Fields = make([]*ir.Field, len(n.Fields))
			for i, f := range n.Fields {
				block[i] = ir.Field{Key: f.Key, Value: w.value(f.Value, sc, depth+1, what, tooDeep)}
				v.Fields[i] = &block[i]
			}
		}
		return v
	case parser.Seq:
		v := w.newValue(ir.Value{Kind: ir.KindArray, Items: make([]*ir.Value, len(n.Items))})
		for i, it := range n.Items {
			v.Items[i] = w.value(it, sc, depth+1, what, tooDeep)
		}
		return v
	case parser.String:
		s, ok := n.Str()
		if !isTemplate(s) {
			var lit any = s
			if ok {
				lit = n.Value // the same string, already boxed
			}
			return w.newValue(ir.Value{Kind: ir.KindLiteral, Literal: lit})
		}
		return w.newValue(ir.Value{Kind: ir.KindTemplate, Template: w.template(n, what, sc)})
	}
	return w.newValue(ir.Value{Kind: ir.KindLiteral, Literal: n.Value})
}

// valueSlab is how many ir.Values newValue allocates at once. The values
// of a workflow live as long as its IR.
const valueSlab = 64

// newValue returns a pointer to a copy of v.
func (w *wfCheck) newValue(v ir.Value) *ir.Value {
	if len(w.valueSlab) == 0 {
		w.valueSlab = make([]ir.Value, valueSlab)
	}
	p := &w.valueSlab[0]
	w.valueSlab = w.valueSlab[1:]
	*p = v
	return p
}

// checkVars reads vars: a mapping of names to values (templates over
// .params and .workflow).
func (w *wfCheck) checkVars() {
	w.vars = map[string]bool{}
	n := w.src.Vars
	if n == nil || n.Kind == parser.Null {
		return
	}
	if !w.kind(n, "vars", parser.Map) {
		return
	}
	// Declare every name first, so the messages can list them.
	for _, f := range n.Fields {
		if !isIdentifier(f.Key) {
			w.add(errInvalidVarName(f.KeyPos, pathJoin(n.Path, f.Key), f.Key))
			continue
		}
		if !w.vars[f.Key] {
			w.vars[f.Key] = true
			w.varNames = append(w.varNames, f.Key)
		}
	}
	sc := scope{kind: inVars}
	for _, f := range n.Fields {
		tooDeep := false
		v := w.value(f.Value, sc, 1, "vars", &tooDeep)
		w.wf.Vars = append(w.wf.Vars, &ir.Var{Name: f.Key, Value: v})
	}
}
