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
		nv, changed, err := coerce(v, ps, k, 0)
		if err != nil {
			return err
		}
		if changed {
			args[k] = nv
		}
	}
	return nil
}

// coerce returns v converted to the schema's type, and whether it changed.
// Containers are copied, never changed in place.
func coerce(v any, schema map[string]any, path string, d int) (any, bool, error) {
	if d > maxArgumentDepth {
		return v, false, nil
	}
	types := schemaTypes(schema)
	switch x := v.(type) {
	case string:
		if len(types) == 0 || types["string"] {
			return v, false, nil
		}
		s := strings.TrimSpace(x)
		switch {
		case types["integer"]:
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i, true, nil
			}
			if f, err := strconv.ParseFloat(s, 64); err == nil && f == float64(int64(f)) {
				return int64(f), true, nil
			}
			if !types["number"] {
				return nil, false, &coerceError{path, "integer"}
			}
			fallthrough
		case types["number"]:
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, false, &coerceError{path, "number"}
			}
			return f, true, nil
		case types["boolean"]:
			switch strings.ToLower(s) {
			case "true":
				return true, true, nil
			case "false":
				return false, true, nil
			}
			return nil, false, &coerceError{path, "boolean"}
		case types["object"], types["array"]:
			parsed, err := decodeTyped(s)
			if err != nil {
				return nil, false, &coerceError{path, jsonKindName(types)}
			}
			switch parsed.(type) {
			case map[string]any:
				if types["object"] {
					nv, _, err := coerce(parsed, schema, path, d)
					return nv, true, err
				}
			case []any:
				if types["array"] {
					nv, _, err := coerce(parsed, schema, path, d)
					return nv, true, err
				}
			}
			return nil, false, &coerceError{path, jsonKindName(types)}
		case types["null"] && s == "":
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
			ne, changed, err := coerce(e, ps, path+"."+k, d+1)
			if err != nil {
				return nil, false, err
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
			ne, changed, err := coerce(e, items, fmt.Sprintf("%s[%d]", path, i), d+1)
			if err != nil {
				return nil, false, err
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

func jsonKindName(types map[string]bool) string {
	if types["object"] {
		return "object"
	}
	return "array"
}

// schemaTypes returns the set of JSON types a schema declares.
func schemaTypes(schema map[string]any) map[string]bool {
	switch t := schema["type"].(type) {
	case string:
		return map[string]bool{t: true}
	case []any:
		m := make(map[string]bool, len(t))
		for _, e := range t {
			if s, ok := e.(string); ok {
				m[s] = true
			}
		}
		return m
	case []string:
		m := make(map[string]bool, len(t))
		for _, s := range t {
			m[s] = true
		}
		return m
	}
	return nil
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
