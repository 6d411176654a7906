package runtime

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vmcp-dev/vmcp/ir"
)

// TestQueryShortcutIsTheTypedPath: a template the query shortcut takes
// gives the value (with its Go types) and the error the typed path gives,
// for results the JSON round trip keeps, changes (integral floats, -0) or
// cannot carry (invalid UTF-8, depth), and for failures.
func TestQueryShortcutIsTheTypedPath(t *testing.T) {
	deep := any("leaf")
	for range maxArgumentDepth + 2 {
		deep = []any{deep}
	}
	output := map[string]any{
		"items": []any{
			map[string]any{"uid": "a", "kind": "Pod", "n": 3.0, "refs": []any{map[string]any{"uid": "b", "type": "owns"}}},
			map[string]any{"uid": "b", "kind": "Node", "n": 1.5, "refs": []any{}},
		},
		"big":     []any{1e20, float64(1 << 62), math.Pow(2, 63), -math.Pow(2, 63), math.Copysign(0, -1), 1e-7, 12345678901234567890.0},
		"text":    "héllo ☃ <&>",
		"bad":     "a\xffb",
		"badKeys": map[string]any{"ok": 1.0, "k\xfe": 2.0},
		"deep":    deep,
		"nothing": nil,
		"flag":    true,
	}
	data := map[string]any{"steps": map[string]any{"s": map[string]any{"output": output}}, "params": map[string]any{"limit": int64(2)}}
	exprs := []string{
		"items[].{uid: uid, label: kind, n: n}",
		"(items[].let $from = uid in refs[].{from: $from, type: type, to: uid})[]",
		"sum(items[].n)",
		"length(items)",
		"items[?n > `2`].uid",
		"big",
		"text",
		"bad",
		"badKeys",
		"deep",
		"nothing",
		"flag",
		"items[0]",
		"missing",
		"to_number(text)",
		"abs(text)", // a failed search
	}
	funcs := templateFuncs()
	for _, expr := range exprs {
		for _, src := range []string{`{{query "` + expr + `" .steps.s.output}}`, `{{query "` + expr + `" .steps.s.nope}}`} {
			t.Run(src, func(t *testing.T) {
				tp, err := parseTemplate(&ir.Template{Source: src, Pos: at(3, 7), Single: true}, funcs)
				if err != nil {
					t.Fatal(err)
				}
				if tp.call == nil {
					t.Fatal("the shortcut does not take this template")
				}
				got, gotErr := tp.value(data)
				typed := *tp
				typed.call = nil
				want, wantErr := typed.value(data)
				sameAsTyped(t, want, got, wantErr, gotErr)
			})
		}
	}
}

// TestQueryShortcutTakesOnlyOneQueryOfAChain: named inputs, a pipeline, a
// computed expression or argument, and text around the action keep the
// typed path (or the string path).
func TestQueryShortcutTakesOnlyOneQueryOfAChain(t *testing.T) {
	funcs := templateFuncs()
	for src, takes := range map[string]bool{
		`{{query "a" .steps.s.output}}`:                true,
		`{{ query "a" .params.p }}`:                    true,
		`{{query "$r" .steps.s.output "r" .params.p}}`: false,
		`{{query "a" .steps.s.output | len}}`:          false,
		`{{query (printf "%s" "a") .steps.s.output}}`:  false,
		`{{query "a" (index .steps "s")}}`:             false,
		`x {{query "a" .steps.s.output}}`:              false,
		`{{json .steps.s.output}}`:                     false,
	} {
		tp, err := parseTemplate(&ir.Template{Source: src, Pos: at(1, 1), Single: true}, funcs)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := tp.call != nil; got != takes {
			t.Errorf("%s: shortcut %v; want %v", src, got, takes)
		}
	}
}

// TestCollectionShortcutIsTheTypedPath: a collection '{{json .chain}}'
// gives the loop the items (with their Go types) that rendering the JSON
// text and parsing it give, or the same value and error where the
// shortcut leaves the typed path to decide.
func TestCollectionShortcutIsTheTypedPath(t *testing.T) {
	deep := any("leaf")
	for range maxArgumentDepth + 2 {
		deep = []any{deep}
	}
	output := map[string]any{
		"ints":    []any{int64(0), int64(1), int64(-7), int64(math.MaxInt64)},
		"numbers": []any{3.0, 1.5, 1e20, float64(1 << 62), math.Pow(2, 63), math.Copysign(0, -1), 1e-7},
		"objects": []any{map[string]any{"uid": "a", "refs": []any{map[string]any{"to": "b"}}}, map[string]any{"uid": "b", "refs": []any{}}, nil, true, "héllo <&>"},
		"badText": []any{"a\xffb"},
		"badKeys": []any{map[string]any{"k\xfe": 1.0}},
		"deep":    []any{deep},
		"nan":     []any{math.NaN()},
		"empty":   []any{},
		"object":  map[string]any{"a": 1.0},
		"text":    "[1, 2]",
		"nothing": nil,
	}
	data := map[string]any{"steps": map[string]any{"s": map[string]any{"output": output}}}
	funcs := templateFuncs()
	for key := range output {
		for _, src := range []string{"{{json .steps.s.output." + key + "}}", "{{ json .steps.s.nope." + key + " }}"} {
			t.Run(src, func(t *testing.T) {
				tp, err := parseTemplate(&ir.Template{Source: src, Pos: at(3, 7), Single: true}, funcs)
				if err != nil {
					t.Fatal(err)
				}
				if tp.jsonOf == nil {
					t.Fatal("the shortcut does not take this template")
				}
				got, gotErr := tp.collectionValue(data)
				typed := *tp
				typed.jsonOf = nil
				want, wantErr := typed.collectionValue(data)
				sameAsTyped(t, loopItems(want), loopItems(got), wantErr, gotErr, cmpopts.EquateNaNs())
			})
		}
	}
	for src, takes := range map[string]bool{
		`{{json .steps.s.output}}`:          true,
		`{{json .steps.s.output | printf}}`: false,
		`{{json (index .steps "s")}}`:       false,
		`x {{json .steps.s.output}}`:        false,
		`{{query "a" .steps.s.output}}`:     false,
	} {
		tp, err := parseTemplate(&ir.Template{Source: src, Pos: at(1, 1), Single: true}, funcs)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := tp.jsonOf != nil; got != takes {
			t.Errorf("%s: shortcut %v; want %v", src, got, takes)
		}
	}
}

// sameAsTyped fails t when a shortcut's value or error differs from the
// typed path's.
func sameAsTyped(t *testing.T, want, got any, wantErr, gotErr error, opts ...cmp.Option) {
	t.Helper()
	if diff := cmp.Diff(want, got, opts...); diff != "" {
		t.Errorf("the shortcut's value differs from the typed path's (-typed +shortcut):\n%s", diff)
	}
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Errorf("shortcut error %v; the typed path's %v", gotErr, wantErr)
	}
}

// loopItems is a collection's value as the loop reads it: a string
// holding a JSON array is that array.
func loopItems(v any) any {
	if s, ok := v.(string); ok {
		if parsed, err := decodeTyped(s); err == nil {
			if _, isArray := parsed.([]any); isArray {
				return parsed
			}
		}
	}
	return v
}

// BenchmarkQueryTemplate is one CMDB projection (30 objects with two
// references each) through the shortcut and through the typed path.
func BenchmarkQueryTemplate(b *testing.B) {
	var items []any
	for i := range 30 {
		items = append(items, map[string]any{"uid": fmt.Sprint("u", i), "kind": "Pod", "name": fmt.Sprint("pod-", i), "namespace": "ns",
			"refs": []any{map[string]any{"uid": "n1", "type": "runs_on"}, map[string]any{"uid": "rs1", "type": "owned_by"}}})
	}
	data := map[string]any{"steps": map[string]any{"list": map[string]any{"output": map[string]any{"items": items, "count": 30.0}}}}
	src := `{{query "items[].{uid: uid, label: kind, name: name, namespace: namespace}" .steps.list.output}}`
	tp, err := parseTemplate(&ir.Template{Source: src, Pos: at(1, 1), Single: true}, templateFuncs())
	if err != nil {
		b.Fatal(err)
	}
	typed := *tp
	typed.call = nil
	for name, t := range map[string]*tmpl{"shortcut": tp, "typed": &typed} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := t.value(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
