package checker

// The output declaration: each property has a JSON Schema type, an
// optional description and default, and either a value template (a leaf)
// or nested properties (an object). Required names must be declared
// properties. The same declaration becomes the advertised outputSchema, a
// JSON Schema object, in ir.Output.Schema. Value templates run after every
// step has finished, so they may read any step (see refs.go), but the
// defaultResults rule still applies.

import (
	"strconv"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/parser"
)

func (w *wfCheck) checkOutput() {
	o := w.src.Output
	if o == nil || o.Node == nil || o.Node.Kind == parser.Null {
		return
	}
	if !w.kind(o.Node, "output", parser.Map) {
		return
	}
	if len(o.Properties) == 0 {
		w.add(errMissingField(o.Node.Pos, o.Node.Path, "properties", "output"))
		return
	}
	out := &ir.Output{}
	out.Properties, out.Schema = w.outputProps(o.Properties, o.Required, "output", 1, &out.Required, scope{kind: inOutput})
	w.wf.Output = out
}

// outputProps converts one level of properties and returns them with the
// JSON Schema object describing that level.
// sc is where the value templates are evaluated: the workflow's output,
// or a loop's (bodies.go).
func (w *wfCheck) outputProps(props []*parser.OutputProperty, required *parser.Node, what string, depth int, req *[]string, sc scope) ([]*ir.OutputProperty, map[string]any) {
	schemaProps := map[string]any{}
	schema := map[string]any{"type": "object", "properties": schemaProps}
	var out []*ir.OutputProperty
	var names []string
	for _, p := range props {
		if p == nil {
			continue
		}
		names = append(names, p.Name)
		ip, ps := w.outputProp(p, depth, sc)
		if ip != nil {
			out = append(out, ip)
			schemaProps[p.Name] = ps
		}
	}
	*req = w.requiredList(required, what, names)
	if len(*req) > 0 {
		schema["required"] = anyList(*req)
	}
	return out, schema
}

func (w *wfCheck) outputProp(p *parser.OutputProperty, depth int, sc scope) (*ir.OutputProperty, map[string]any) {
	what := "output property " + strconv.Quote(p.Name)
	ip := &ir.OutputProperty{Name: p.Name, Pos: p.KeyPos}
	schema := map[string]any{}
	if p.Node != nil && p.Node.Kind != parser.Map {
		w.add(errWrongType(p.Node.Pos, p.Node.Path, what, "a mapping with type and value", kindPhrase(p.Node.Kind)))
		return nil, nil
	}
	if depth > maxNesting {
		w.add(errNestingTooDeep(p.KeyPos, nodePath(p.Node), "output properties"))
		return nil, nil
	}
	var types []string
	if p.Type != nil {
		if ts, ok := w.schemaTypes(p.Type, what); ok {
			types = ts
			if len(ts) == 1 {
				ip.Type = ts[0]
			}
			schema["type"] = p.Type.Interface()
		}
	}
	if p.Description != nil {
		if s, ok := w.str(p.Description, what+" description"); ok {
			ip.Description = s
			schema["description"] = s
		}
	}
	if d := p.Default; d != nil {
		v := d.Interface()
		if len(types) > 0 && !valueHasType(v, types) {
			w.add(errDefaultType(d.Pos, d.Path, what, joinOr(types), describeValue(v)))
		}
		ip.Default, ip.HasDefault = v, true
		schema["default"] = v
	}
	switch {
	case len(p.Properties) > 0:
		if p.Value != nil {
			pos, path := keyPos(p.Node, p.Value, "value")
			w.add(errValueAndProperties(pos, path, what))
		}
		if len(types) > 0 && !contains(types, "object") {
			w.add(errNestedNotObject(p.Type.Pos, p.Type.Path, what, joinOr(types)))
		}
		var nested map[string]any
		ip.Properties, nested = w.outputProps(p.Properties, p.Required, what, depth+1, &ip.Required, sc)
		schema["type"] = "object"
		schema["properties"] = nested["properties"]
		if r, ok := nested["required"]; ok {
			schema["required"] = r
		}
	case p.Value != nil:
		ip.Value = w.template(p.Value, what+" value", sc)
	case p.Default != nil:
		// A constant property.
	default:
		pos, path := p.KeyPos, nodePath(p.Node)
		w.add(errOutputNoValue(pos, path, what))
	}
	return ip, schema
}

func nodePath(n *parser.Node) string {
	if n == nil {
		return ""
	}
	return n.Path
}
