package checker

// A shortcut for compileSchema.
//
// Compiling a schema with jsonschema validates it against the JSON Schema
// (draft 2020-12) meta-schema, which costs a compiler, a JSON round trip
// and a validation per parameter. Most parameter schemas use only a few
// keywords whose meta-schema rules are simple: type (a simple type name,
// or a non-empty list of distinct ones), title and description
// (strings), default (any JSON value), enum and examples (arrays), and
// required (a list of distinct strings). A schema made only of those,
// with values that encode as JSON, is accepted by the meta-schema, so
// compileSchema can skip the compiler for it. Anything else (another
// keyword, a nested schema, a value JSON cannot encode such as an
// infinity) still goes through jsonschema, so diagnostics are unchanged.

import "math"

// simpleTypes are the meta-schema's simpleTypes.
var simpleTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// trivialSchema reports whether schema is a map that the meta-schema
// accepts by the rules above.
func trivialSchema(schema any) bool {
	m, ok := schema.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range m {
		switch k {
		case "type":
			if !schemaTypeValue(v) {
				return false
			}
		case "title", "description":
			if _, ok := v.(string); !ok {
				return false
			}
		case "default":
			if !plainJSON(v) {
				return false
			}
		case "enum", "examples":
			if _, ok := v.([]any); !ok || !plainJSON(v) {
				return false
			}
		case "required":
			if !distinctStrings(v) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func isSimpleType(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	for _, t := range simpleTypes {
		if s == t {
			return true
		}
	}
	return false
}

// schemaTypeValue: a simple type, or a non-empty list of distinct ones.
func schemaTypeValue(v any) bool {
	if isSimpleType(v) {
		return true
	}
	l, ok := v.([]any)
	if !ok || len(l) == 0 {
		return false
	}
	for _, x := range l {
		if !isSimpleType(x) {
			return false
		}
	}
	return distinctStrings(v)
}

// distinctStrings: a list of strings with no repeats.
func distinctStrings(v any) bool {
	l, ok := v.([]any)
	if !ok {
		return false
	}
	for i, x := range l {
		s, ok := x.(string)
		if !ok {
			return false
		}
		for _, y := range l[:i] {
			if y == s {
				return false
			}
		}
	}
	return true
}

// plainJSON reports whether v is made of the values parser.Node.Interface
// produces and encodes as JSON: nil, bool, string, int64, finite float64,
// []any and map[string]any of those.
func plainJSON(v any) bool {
	switch x := v.(type) {
	case nil, bool, string, int64:
		return true
	case float64:
		return !math.IsInf(x, 0) && !math.IsNaN(x)
	case []any:
		for _, e := range x {
			if !plainJSON(e) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range x {
			if !plainJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}
