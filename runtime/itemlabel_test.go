package runtime

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestIterationLabel(t *testing.T) {
	long := strings.Repeat("é", 50) // two bytes a rune: a byte cut would split one
	tests := []struct {
		name string
		item any
		want string
	}{
		{"name", map[string]any{"name": "web-2", "id": "x"}, `iteration 1 (name "web-2")`},
		{"id string", map[string]any{"id": "db-7", "metadata": map[string]any{"name": "m"}}, `iteration 1 (id "db-7")`},
		{"id number", map[string]any{"id": int64(7)}, `iteration 1 (id 7)`},
		{"id float", map[string]any{"id": 7.5}, `iteration 1 (id 7.5)`},
		{"metadata.name", map[string]any{"kind": "Pod", "metadata": map[string]any{"name": "pod-a", "namespace": "ns"}}, `iteration 1 (metadata.name "pod-a")`},
		{"empty name is no name", map[string]any{"name": "", "a": int64(1)}, `iteration 1 ({"a":1,"name":""})`},
		{"name that is not a string", map[string]any{"name": map[string]any{"first": "x"}}, `iteration 1 ({"name":{"first":"x"}})`},
		{"name with quotes and control characters", map[string]any{"name": "a\"b\nc"}, `iteration 1 (name "a\"b\nc")`},
		{"long name", map[string]any{"name": long}, `iteration 1 (name "` + strings.Repeat("é", 40) + `...")`},
		{"object prefix, keys sorted", map[string]any{"b": []any{int64(1), int64(2), int64(3), "four", "five", "six", "seven"}, "a": int64(1)}, `iteration 1 ({"a":1,"b":[1,2,3,"four","five","six","s...)`},
		{"short object", map[string]any{"a": true, "b": nil}, `iteration 1 ({"a":true,"b":null})`},
		{"array", []any{"x", 1.5}, `iteration 1 (["x",1.5])`},
		{"string", "web-2", `iteration 1 ("web-2")`},
		{"html kept as it is", "<a&b>", `iteration 1 ("<a&b>")`},
		{"long string", long, `iteration 1 ("` + strings.Repeat("é", 39) + `...)`},
		{"number", int64(42), `iteration 1 (42)`},
		{"null", nil, `iteration 1 (null)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := IterationLabel(1, tt.item)
			if got != tt.want {
				t.Errorf("IterationLabel(1, %v) =\n  %s\nwant\n  %s", tt.item, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("IterationLabel(1, %v) = %q is not valid UTF-8", tt.item, got)
			}
			if again := IterationLabel(1, tt.item); again != got {
				t.Errorf("IterationLabel is not deterministic: %s, then %s", got, again)
			}
		})
	}
}

// TestIterationLabelIsBounded: a large item costs a label of the same
// short length.
func TestIterationLabelIsBounded(t *testing.T) {
	big := map[string]any{}
	for _, k := range []string{"a", "b", "c"} {
		big[k] = strings.Repeat(k, 1<<20)
	}
	got := ItemLabel(map[string]any{"spec": big, "list": make([]any, 1<<16)})
	if n := utf8.RuneCountInString(got); n != maxLabelRunes+len(cutMark) {
		t.Errorf("ItemLabel of a 3 MB item has %d runes (%q); want %d", n, got, maxLabelRunes+len(cutMark))
	}
}

const labelledLoops = `
compositeTools:
  - name: calls
    description: each inner call fails
    parameters:
      items: {type: array}
    steps:
      - id: loop
        type: forEach
        collection: "{{.params.items}}"
        maxParallel: 1
        onError: {action: continue}
        step: {tool: svc.down, arguments: {n: "{{.forEach.index}}"}}
  - name: conditions
    description: each inner condition is not a boolean
    parameters:
      items: {type: array}
    steps:
      - id: loop
        type: forEach
        collection: "{{.params.items}}"
        maxParallel: 1
        onError: {action: continue}
        step: {tool: svc.down, condition: "{{.forEach.index}}", arguments: {n: 1}}
  - name: bodies
    description: each body step fails
    parameters:
      items: {type: array}
    steps:
      - id: loop
        type: forEach
        collection: "{{.params.items}}"
        maxParallel: 1
        onError: {action: continue}
        steps:
          - {id: put, tool: svc.down, arguments: {n: "{{.forEach.index}}"}}
`

// TestIterationErrorsNameTheItem: wherever an iteration fails (its
// call, its condition, a body step), its error names the item.
func TestIterationErrorsNameTheItem(t *testing.T) {
	items := []any{
		map[string]any{"name": "web-1"},
		map[string]any{"metadata": map[string]any{"name": "pod-a"}},
		map[string]any{"id": 7},
		map[string]any{"a": 1, "b": []any{"x"}},
		"plain",
	}
	want := []string{
		`iteration 0 (name "web-1"): `,
		`iteration 1 (metadata.name "pod-a"): `,
		`iteration 2 (id 7): `,
		`iteration 3 ({"a":1,"b":["x"]}): `,
		`iteration 4 ("plain"): `,
	}
	fb := newFake(map[string]*fakeTool{"svc.down": {Fail: true}})
	e := bodyEngine(t, labelledLoops, fb)
	for _, wf := range []string{"calls", "conditions", "bodies"} {
		run, err := e.Run(context.Background(), wf, map[string]any{"items": items}, RunOptions{})
		if err != nil || run.Status != RunCompleted {
			t.Fatalf("%s: Run = %v, %v (%v); want completed", wf, run.Status, err, run.Error)
		}
		for i, it := range iterations(t, run, "loop") {
			msg, _ := it["error"].(string)
			if !strings.HasPrefix(msg, want[i]) {
				t.Errorf("%s: iteration %d's error = %q; want it to start %q", wf, i, msg, want[i])
			}
		}
	}
}
