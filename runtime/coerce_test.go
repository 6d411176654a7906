package runtime

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCoerceArgs: strings take the types a tool's schema declares, at any
// depth, without changing the caller's containers; a string that cannot
// take its type names the argument's path (objects with ".key", arrays
// with "[index]") and the type, never the value.
func TestCoerceArgs(t *testing.T) {
	schema := M{"type": "object", "properties": M{
		"n":     M{"type": "integer"},
		"ratio": M{"type": []any{"number", "null"}},
		"on":    M{"type": "boolean"},
		"name":  M{"type": "string"},
		"cfg": M{"type": "object", "properties": M{
			"ports": M{"type": "array", "items": M{"type": "integer"}},
			"deep":  M{"type": "object", "properties": M{"flag": M{"type": "boolean"}}},
		}},
		"list": M{"type": "array", "items": M{"type": "object", "properties": M{"id": M{"type": "integer"}}}},
		"raw":  M{"type": "array"},
	}}
	ports := []any{"80", int64(443)}
	cfg := M{"ports": ports, "deep": M{"flag": "TRUE"}}
	args := M{"n": " 42 ", "ratio": "0.5", "on": "false", "name": "7", "cfg": cfg, "list": A{M{"id": "3.0"}}, "raw": `[1, "a"]`}
	if err := coerceArgs(args, schema); err != nil {
		t.Fatal(err)
	}
	want := M{"n": int64(42), "ratio": 0.5, "on": false, "name": "7",
		"cfg":  M{"ports": A{int64(80), int64(443)}, "deep": M{"flag": true}},
		"list": A{M{"id": int64(3)}}, "raw": A{int64(1), "a"}}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("coerced (-want +got):\n%s", diff)
	}
	if ports[0] != "80" || cfg["deep"].(M)["flag"] != "TRUE" {
		t.Errorf("the caller's containers changed: ports %v, cfg %v", ports, cfg)
	}

	for _, c := range []struct {
		args M
		want string
	}{
		{M{"n": "4.5"}, `argument "n": a string that is not a valid integer cannot be passed where the tool's input schema declares integer`},
		{M{"ratio": "x"}, `argument "ratio": a string that is not a valid number`},
		{M{"on": "yes"}, `argument "on": a string that is not a valid boolean`},
		{M{"cfg": M{"ports": A{int64(1), "http"}}}, `argument "cfg.ports[1]": a string that is not a valid integer`},
		{M{"cfg": M{"deep": M{"flag": "maybe"}}}, `argument "cfg.deep.flag": a string that is not a valid boolean`},
		{M{"list": A{M{"id": int64(1)}, M{"id": "x"}}}, `argument "list[1].id": a string that is not a valid integer`},
		{M{"raw": "{}"}, `argument "raw": a string that is not a valid array`},
		{M{"cfg": "[1]"}, `argument "cfg": a string that is not a valid object`},
	} {
		err := coerceArgs(c.args, schema)
		if err == nil || len(err.Error()) < len(c.want) || err.Error()[:len(c.want)] != c.want {
			t.Errorf("coerceArgs(%v) = %v; want %s...", c.args, err, c.want)
		}
	}
}
