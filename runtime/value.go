package runtime

// Argument values: a valuePlan tree is evaluated into plain JSON-like Go
// values (map[string]any, []any, string, bool, int64, float64, nil). Template
// leaves that are Single keep the type of their value; others are strings.
// When the backend tool's input schema is known, string values are then
// coerced to the declared type: "5" becomes 5 for an integer, "true" a
// boolean, and a JSON text an object or array. Coercion follows nested
// "properties" and array "items".

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// eval evaluates a value tree against template data.
func (v *valuePlan) eval(data map[string]any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch v.kind {
	case "template":
		return v.t.value(data)
	case "object":
		m := make(map[string]any, len(v.keys))
		for i, k := range v.keys {
			x, err := v.fields[i].eval(data)
			if err != nil {
				return nil, err
			}
			m[k] = x
		}
		return m, nil
	case "array":
		a := make([]any, len(v.items))
		for i, it := range v.items {
			x, err := it.eval(data)
			if err != nil {
				return nil, err
			}
			a[i] = x
		}
		return a, nil
	}
	return v.literal, nil
}

// coerceError reports an argument that cannot take its declared type. It
// names the argument and the types, never the value.
type coerceError struct {
	path string
	want string
}

// under returns e with prefix put in front of its path, as the value it
// is in names it.
func (e *coerceError) under(prefix string) *coerceError {
	e.path = prefix + e.path
	return e
}

func (e *coerceError) Error() string {
	return fmt.Sprintf("argument %q: a string that is not a valid %s cannot be passed where the tool's input schema declares %s", e.path, e.want, e.want)
}

// coerceArgs converts string values in args to the types declared by the
// tool's input schema. args is fresh per call and is changed in place;
// nested values may be shared with step outputs, so they are copied before
// anything inside them changes.
func coerceArgs(args map[string]any, schema map[string]any) error {
	props, _ := schema["properties"].(map[string]any)
	for k, v := range args {
		ps, _ := props[k].(map[string]any)
		if ps == nil {
			continue
		}
		nv, changed, err := coerce(v, ps, 0)
		if err != nil {
			return err.under(k)
		}
		if changed {
			args[k] = nv
		}
	}
	return nil
}

// coerce returns v converted to the schema's type, and whether it changed.
// Containers are copied, never changed in place. An error's path is
// relative to v (the caller puts the argument's name in front), so no
// path is built for the values that convert.
func coerce(v any, schema map[string]any, d int) (any, bool, *coerceError) {
	if d > maxArgumentDepth {
		return v, false, nil
	}
	switch x := v.(type) {
	case string:
		types := schemaTypes(schema)
		if types == 0 || types&typeString != 0 {
			return v, false, nil
		}
		s := strings.TrimSpace(x)
		switch {
		case types&typeInteger != 0:
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i, true, nil
			}
			if f, err := strconv.ParseFloat(s, 64); err == nil && f == float64(int64(f)) {
				return int64(f), true, nil
			}
			if types&typeNumber == 0 {
				return nil, false, &coerceError{want: "integer"}
			}
			fallthrough
		case types&typeNumber != 0:
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, false, &coerceError{want: "number"}
			}
			return f, true, nil
		case types&typeBoolean != 0:
			switch strings.ToLower(s) {
			case "true":
				return true, true, nil
			case "false":
				return false, true, nil
			}
			return nil, false, &coerceError{want: "boolean"}
		case types&(typeObject|typeArray) != 0:
			parsed, err := decodeTyped(s)
			if err != nil {
				return nil, false, &coerceError{want: jsonKindName(types)}
			}
			switch parsed.(type) {
			case map[string]any:
				if types&typeObject != 0 {
					nv, _, err := coerce(parsed, schema, d)
					return nv, true, err
				}
			case []any:
				if types&typeArray != 0 {
					nv, _, err := coerce(parsed, schema, d)
					return nv, true, err
				}
			}
			return nil, false, &coerceError{want: jsonKindName(types)}
		case types&typeNull != 0 && s == "":
			return nil, true, nil
		}
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		if props == nil {
			return v, false, nil
		}
		var cp map[string]any
		for k, e := range x {
			ps, _ := props[k].(map[string]any)
			if ps == nil {
				continue
			}
			ne, changed, err := coerce(e, ps, d+1)
			if err != nil {
				return nil, false, err.under("." + k)
			}
			if changed {
				if cp == nil {
					cp = make(map[string]any, len(x))
					for k2, e2 := range x {
						cp[k2] = e2
					}
				}
				cp[k] = ne
			}
		}
		if cp != nil {
			return cp, true, nil
		}
	case []any:
		items, _ := schema["items"].(map[string]any)
		if items == nil {
			return v, false, nil
		}
		var cp []any
		for i, e := range x {
			ne, changed, err := coerce(e, items, d+1)
			if err != nil {
				return nil, false, err.under("[" + strconv.Itoa(i) + "]")
			}
			if changed {
				if cp == nil {
					cp = append([]any(nil), x...)
				}
				cp[i] = ne
			}
		}
		if cp != nil {
			return cp, true, nil
		}
	}
	return v, false, nil
}

func jsonKindName(types jsonTypes) string {
	if types&typeObject != 0 {
		return "object"
	}
	return "array"
}

// jsonTypes is the set of JSON types a schema declares, one bit each.
type jsonTypes uint8

const (
	typeString jsonTypes = 1 << iota
	typeInteger
	typeNumber
	typeBoolean
	typeObject
	typeArray
	typeNull
)

// typeBits maps a JSON Schema type name to its bit.
var typeBits = map[string]jsonTypes{
	"string": typeString, "integer": typeInteger, "number": typeNumber, "boolean": typeBoolean,
	"object": typeObject, "array": typeArray, "null": typeNull,
}

// schemaTypes returns the set of JSON types a schema declares (0: none
// that coercion knows).
func schemaTypes(schema map[string]any) jsonTypes {
	switch t := schema["type"].(type) {
	case string:
		return typeBits[t]
	case []any:
		var m jsonTypes
		for _, e := range t {
			if s, ok := e.(string); ok {
				m |= typeBits[s]
			}
		}
		return m
	case []string:
		var m jsonTypes
		for _, s := range t {
			m |= typeBits[s]
		}
		return m
	}
	return 0
}

// deepCopy copies JSON-like values so defaults are never shared between runs.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = deepCopy(e)
		}
		return a
	}
	return v
}

// asBool interprets a condition's value: a boolean, or the strings true and
// false in any case. The error names the type, never the value.
func asBool(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return false, fmt.Errorf("condition must yield a boolean or the string true or false; it yielded a string that is neither")
	}
	return false, fmt.Errorf("condition must yield a boolean; it yielded %s", typeName(v))
}

// toJSONValue converts an arbitrary value into JSON-like form (used for
// backend results that carry Go types other than the JSON ones).
func toJSONValue(v any) (any, error) {
	switch v.(type) {
	case nil, string, bool, int64, float64, map[string]any, []any:
		return v, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeTyped(string(b))
}
