package checker

// Parameters come in two forms and both become one JSON Schema object:
//
//   - JSON Schema: {type: object, properties: {...}, required: [...]}.
//   - shorthand:   {name: {type: string, description: ..., required: true, default: ...}}.
//
// The form is decided by the top-level "type" key: when it holds a string
// the mapping is a schema; otherwise, when "properties" holds a mapping whose
// own "type" is not a string, it is a schema without "type"; anything else
// is the shorthand (so a parameter may itself be called "type" or
// "properties"). The result is {type: object, properties, required} with
// required in source order (the schema's list, or the shorthand's
// parameters in the order written) and additionalProperties left unset.
//
// Each property is checked the same way in both forms: its type is a JSON
// Schema type, its default has that type, and the whole schema compiles
// with santhosh-tekuri/jsonschema (which catches malformed keywords such as
// minimum: "x"). A property is compiled with the parameters' $defs and
// definitions beside it, so "$ref": "#/$defs/x" resolves as it does in the
// whole schema (which the runtime compiles and the tool advertises). Output
// properties reuse the type and default checks.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/vmcp-dev/vmcp/parser"
)

// jsonTypes are the JSON Schema type names.
var jsonTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

func (w *wfCheck) checkParameters() {
	w.params = map[string]bool{}
	schema := map[string]any{"type": "object", "properties": map[string]any{}}
	w.wf.InputSchema = schema
	n := w.src.Parameters
	if n == nil || n.Kind == parser.Null {
		return
	}
	if !w.kind(n, "parameters", parser.Map) {
		return
	}
	props := map[string]any{}
	var required []string
	if isSchemaForm(n) {
		required = w.schemaParams(n, schema, props)
	} else {
		required = w.shorthandParams(n, props)
	}
	schema["properties"] = props
	if len(required) > 0 {
		schema["required"] = anyList(required)
	}
	// The top level is compiled without its properties, which were
	// compiled one by one.
	top := map[string]any{}
	for k, v := range schema {
		if k != "properties" {
			top[k] = v
		}
	}
	w.compileSchema(n, top, "parameters")
}

func isSchemaForm(n *parser.Node) bool {
	if t := n.Get("type"); t != nil {
		return t.Kind == parser.String
	}
	p := n.Get("properties")
	if p == nil || p.Kind != parser.Map {
		return false
	}
	t := p.Get("type")
	return t == nil || t.Kind != parser.String
}

// schemaParams reads the JSON Schema form; extra keywords (title,
// $schema, ...) are kept.
func (w *wfCheck) schemaParams(n *parser.Node, schema, props map[string]any) []string {
	if t := n.Get("type"); t != nil {
		if s, _ := t.Str(); s != "object" {
			w.add(errParamsNotObject(t.Pos, t.Path, s))
		}
	}
	for _, f := range n.Fields {
		switch f.Key {
		case "type", "properties", "required", "additionalProperties":
		default:
			schema[f.Key] = f.Value.Interface()
		}
	}
	if ap := n.Get("additionalProperties"); ap != nil {
		schema["additionalProperties"] = ap.Interface()
	}
	defs := refTargets(schema)
	if p := n.Get("properties"); p != nil && w.kind(p, "parameters.properties", parser.Map) {
		for _, f := range p.Fields {
			if !w.kind(f.Value, "parameter "+strconv.Quote(f.Key), parser.Map) {
				continue
			}
			w.declareParam(f)
			props[f.Key] = f.Value.Interface()
			what := "parameter " + strconv.Quote(f.Key)
			if w.checkLocalRefs(f.Value, defs, what) {
				w.checkPropertySchema(f.Value, withRefTargets(props[f.Key], defs), what)
			}
		}
	}
	return w.requiredList(n.Get("required"), "parameters", w.paramNames)
}

// refTargets returns the $defs and definitions of a parameters schema:
// what a property's "$ref": "#/$defs/..." points at.
func refTargets(schema map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"$defs", "definitions"} {
		if v, ok := schema[k]; ok {
			out[k] = v
		}
	}
	return out
}

// checkLocalRefs reports each "$ref": "#/$defs/NAME" (or
// "#/definitions/NAME") under n that names no definition of the
// parameters, at the $ref's value, and reports whether there was none.
func (w *wfCheck) checkLocalRefs(n *parser.Node, defs map[string]any, what string) bool {
	ok := true
	var walk func(n *parser.Node)
	walk = func(n *parser.Node) {
		switch n.Kind {
		case parser.Seq:
			for _, it := range n.Items {
				walk(it)
			}
		case parser.Map:
			for _, f := range n.Fields {
				if f.Key == "$ref" && f.Value.Kind == parser.String {
					ref, _ := f.Value.Str()
					for _, section := range []string{"$defs", "definitions"} {
						name, local := strings.CutPrefix(ref, "#/"+section+"/")
						if !local {
							continue
						}
						table, _ := defs[section].(map[string]any)
						if _, found := table[name]; !found {
							w.add(errUnknownRef(f.Value.Pos, f.Value.Path, what, ref, section, sortedKeys(table)))
							ok = false
						}
					}
					continue
				}
				walk(f.Value)
			}
		}
	}
	walk(n)
	return ok
}

// withRefTargets returns a property schema to compile on its own, with the
// parameters' $defs and definitions beside it, so that its local $refs
// resolve as they do in the whole schema.
func withRefTargets(prop any, defs map[string]any) any {
	m, ok := prop.(map[string]any)
	if !ok || len(defs) == 0 {
		return prop
	}
	out := make(map[string]any, len(m)+len(defs))
	for k, v := range m {
		out[k] = v
	}
	for k, v := range defs {
		if _, has := out[k]; !has {
			out[k] = v
		}
	}
	return out
}

// shorthandParams reads {name: {type, description, required, default}}.
func (w *wfCheck) shorthandParams(n *parser.Node, props map[string]any) []string {
	var required []string
	for _, f := range n.Fields {
		what := "parameter " + strconv.Quote(f.Key)
		if !w.kind(f.Value, what, parser.Map) {
			continue
		}
		w.declareParam(f)
		prop := map[string]any{}
		for _, pf := range f.Value.Fields {
			if pf.Key == "required" {
				if b, ok := w.boolean(pf.Value, what+" required"); ok && b {
					required = append(required, f.Key)
				}
				continue
			}
			prop[pf.Key] = pf.Value.Interface()
		}
		props[f.Key] = prop
		w.checkPropertySchema(f.Value, prop, what)
	}
	return required
}

func (w *wfCheck) declareParam(f *parser.Field) {
	if !w.params[f.Key] {
		w.params[f.Key] = true
		w.paramNames = append(w.paramNames, f.Key)
	}
}

// requiredList reads a list of property names that must all be declared.
func (w *wfCheck) requiredList(n *parser.Node, what string, known []string) []string {
	if n == nil || !w.kind(n, what+" required", parser.Seq) {
		return nil
	}
	set := map[string]bool{}
	for _, k := range known {
		set[k] = true
	}
	var out []string
	for _, it := range n.Items {
		s, ok := w.str(it, what+" required entry")
		if !ok {
			continue
		}
		if !set[s] {
			w.add(errUnknownRequired(it.Pos, it.Path, what, s, known))
			continue
		}
		out = append(out, s)
	}
	return out
}

// checkPropertySchema checks the type and default of one property schema
// (n in the source, schema once normalised) and, when those are right,
// compiles it.
func (w *wfCheck) checkPropertySchema(n *parser.Node, schema any, what string) {
	before := len(w.diags)
	defer func() {
		if len(w.diags) == before {
			w.compileSchema(n, schema, what)
		}
	}()
	types, ok := w.schemaTypes(n.Get("type"), what)
	if !ok {
		return
	}
	if d := n.Get("default"); d != nil && len(types) > 0 && !valueHasType(d.Interface(), types) {
		w.add(errDefaultType(d.Pos, d.Path, what, joinOr(types), describeValue(d.Interface())))
	}
	if e := n.Get("enum"); e != nil && e.Kind == parser.Seq && len(types) > 0 {
		for _, it := range e.Items {
			if !valueHasType(it.Interface(), types) {
				w.add(errEnumType(it.Pos, it.Path, what, describeValue(it.Interface()), joinOr(types)))
			}
		}
	}
}

// schemaTypes reads a "type" keyword: a type name or a list of them.
func (w *wfCheck) schemaTypes(t *parser.Node, what string) ([]string, bool) {
	if t == nil {
		return nil, true
	}
	var nodes []*parser.Node
	switch t.Kind {
	case parser.String:
		nodes = []*parser.Node{t}
	case parser.Seq:
		nodes = t.Items
	default:
		w.add(errWrongType(t.Pos, t.Path, what+" type", "a type name or a list of them", kindPhrase(t.Kind)))
		return nil, false
	}
	var out []string
	for _, it := range nodes {
		s, ok := it.Str()
		if !ok || !isJSONType(s) {
			if !ok {
				s = fmt.Sprint(it.Value)
			}
			w.add(errInvalidType(it.Pos, it.Path, what, s))
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func isJSONType(s string) bool {
	for _, t := range jsonTypes {
		if s == t {
			return true
		}
	}
	return false
}

// valueHasType reports whether a YAML-decoded value is an instance of one
// of the JSON Schema types.
func valueHasType(v any, types []string) bool {
	for _, t := range types {
		if jsonTypeOf(v) == t || (t == "number" && jsonTypeOf(v) == "integer") {
			return true
		}
	}
	return false
}

// jsonTypeOf names the JSON type of a value; integral numbers are "integer".
func jsonTypeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case int, int64:
		return "integer"
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// describeValue names a value's type for messages without printing the
// value itself (it may be a secret).
func describeValue(v any) string {
	switch t := jsonTypeOf(v); t {
	case "integer":
		return "an integer"
	case "array":
		return "an array"
	case "object":
		return "an object"
	case "null":
		return "null"
	default:
		return "a " + t
	}
}

// compileSchema compiles a schema built from node n and reports what the
// JSON Schema meta-schema rejects, at the offending node when it can be
// found.
func (w *wfCheck) compileSchema(n *parser.Node, schema any, what string) {
	if trivialSchema(schema) {
		return // accepted by the meta-schema; see schemafast.go
	}
	doc, err := jsonRoundTrip(schema)
	if err != nil {
		w.add(errInvalidSchema(n.Pos, n.Path, what, err.Error()))
		return
	}
	c := jsonschema.NewCompiler()
	const url = "vmcp:///schema.json"
	if err := c.AddResource(url, doc); err != nil {
		w.add(errInvalidSchema(n.Pos, n.Path, what, err.Error()))
		return
	}
	_, err = c.Compile(url)
	if err == nil {
		return
	}
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			p := message.NewPrinter(language.English)
			for _, leaf := range leafCauses(ve) {
				at := nodeAt(n, leaf.InstanceLocation)
				why := leaf.ErrorKind.LocalizedString(p)
				if len(leaf.InstanceLocation) > 0 {
					why = strings.Join(leaf.InstanceLocation, ".") + ": " + why
				}
				w.add(errInvalidSchema(at.Pos, at.Path, what, why))
			}
			return
		}
	}
	w.add(errInvalidSchema(n.Pos, n.Path, what, err.Error()))
}

func leafCauses(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leafCauses(c)...)
	}
	return out
}

// nodeAt follows a JSON pointer's tokens from n as far as the YAML tree
// goes (the normalised schema may have keys the source did not).
func nodeAt(n *parser.Node, loc []string) *parser.Node {
	cur := n
	for _, tok := range loc {
		var next *parser.Node
		switch cur.Kind {
		case parser.Map:
			next = cur.Get(tok)
		case parser.Seq:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(cur.Items) {
				next = cur.Items[i]
			}
		}
		if next == nil {
			return cur
		}
		cur = next
	}
	return cur
}

// jsonRoundTrip turns YAML-decoded data into what encoding/json would
// produce, so the schema library sees plain JSON values.
func jsonRoundTrip(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var out any
	err = dec.Decode(&out)
	return out, err
}

// anyList converts names to the []any that JSON decoding produces, so a
// schema compares equal to itself after a plan is written and read back.
func anyList(names []string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out
}

// jsonSize is the length of v encoded as JSON.
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}
