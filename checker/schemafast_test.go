package checker

import (
	"math"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compiles reports whether jsonschema accepts schema, the way
// compileSchema compiles it.
func compiles(t *testing.T, schema any) bool {
	t.Helper()
	doc, err := jsonRoundTrip(schema)
	if err != nil {
		return false
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("vmcp:///schema.json", doc); err != nil {
		return false
	}
	_, err = c.Compile("vmcp:///schema.json")
	return err == nil
}

// TestTrivialSchemaImpliesCompiles checks the shortcut in compileSchema:
// every schema trivialSchema accepts must compile, for each keyword it
// knows paired with good and bad values, alone and combined.
func TestTrivialSchemaImpliesCompiles(t *testing.T) {
	values := map[string][]any{
		"type": {"string", "integer", "object", "strin", "", 5, nil, []any{}, []any{"string"},
			[]any{"string", "null"}, []any{"string", "string"}, []any{"string", 1}},
		"title":       {"T", 1, nil},
		"description": {"What to look for", "", true, []any{"x"}},
		"default":     {nil, 1, int64(10), 1.5, math.Inf(1), math.NaN(), "x", []any{1, "a"}, map[string]any{"a": math.Inf(-1)}},
		"enum":        {[]any{}, []any{"a", 1, nil}, "a", []any{math.NaN()}},
		"examples":    {[]any{"a"}, "a", map[string]any{}},
		"required":    {[]any{}, []any{"a", "b"}, []any{"a", "a"}, []any{1}, "a"},
		"minLength":   {1, -1, "x"},
		"pattern":     {"^a", "("},
		"$ref":        {"#/nope"},
	}
	var schemas []map[string]any
	for k, vs := range values {
		for _, v := range vs {
			schemas = append(schemas, map[string]any{k: v})
		}
	}
	// Pairs of keywords.
	for k1, vs1 := range values {
		for k2, vs2 := range values {
			if k1 >= k2 {
				continue
			}
			for _, v1 := range vs1 {
				for _, v2 := range vs2 {
					schemas = append(schemas, map[string]any{k1: v1, k2: v2})
				}
			}
		}
	}
	accepted := 0
	for _, s := range schemas {
		if !trivialSchema(s) {
			continue
		}
		accepted++
		if !compiles(t, s) {
			t.Errorf("trivialSchema(%v) = true; jsonschema rejects it", s)
		}
	}
	if accepted == 0 {
		t.Fatalf("trivialSchema accepted none of %d schemas", len(schemas))
	}
	if trivialSchema([]any{"type"}) || trivialSchema(nil) {
		t.Errorf("trivialSchema accepts a schema that is not a mapping")
	}
}
