package parser

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
)

func TestScalarValues(t *testing.T) {
	tests := []struct {
		yaml string
		kind Kind
		want any
	}{
		{"x", String, "x"},
		{"'x'", String, "x"},
		{"~", Null, nil},
		{"null", Null, nil},
		{"", Null, nil},
		{"true", Bool, true},
		{"false", Bool, false},
		{"42", Int, int64(42)},
		{"-7", Int, int64(-7)},
		{"0x1f", Int, int64(31)},
		{"9223372036854775807", Int, int64(math.MaxInt64)},
		{"18446744073709551615", Float, float64(math.MaxUint64)},
		{"1.5", Float, 1.5},
		{"1.0", Float, 1.0},
		{"2024-01-02", String, "2024-01-02"},
		{"2024-01-02T10:00:00Z", String, "2024-01-02T10:00:00Z"},
		{"30m", String, "30m"},
		{"'42'", String, "42"},
		{"!!str 42", String, "42"},
		{"!!str true", String, "true"},
		{".inf", String, ".inf"},
		{"\"{{.params.x}}\"", String, "{{.params.x}}"},
		{"[1, a]", Seq, nil},
	}
	for _, tc := range tests {
		src := "v: " + tc.yaml + "\n"
		docs, diags, _ := parseTree(t, src)
		if len(diags) > 0 {
			t.Errorf("parse %q: %v", src, diags)
			continue
		}
		n := find(docs[0], "v")
		if n == nil {
			t.Errorf("parse %q: no value", src)
			continue
		}
		if n.Kind != tc.kind {
			t.Errorf("parse %q: kind %v; want %v", src, n.Kind, tc.kind)
			continue
		}
		if tc.kind != Map && tc.kind != Seq && n.Value != tc.want {
			t.Errorf("parse %q: value %#v; want %#v", src, n.Value, tc.want)
		}
	}
}

func TestPathsAndPositions(t *testing.T) {
	src := `apiVersion: toolhive.stacklok.dev/v1beta1
kind: VirtualMCPCompositeToolDefinition
metadata:
  name: r
spec:
  name: w
  parameters:
    properties:
      x: {type: string}
  steps:
    - id: a
      tool: b.c
      arguments:
        body: "hi"
        "Content-Type": json
        "a.b c": 1
        list:
          - one
          - {deep: [1, 2]}
    - id: b
      onError:
        action: retry
`
	f, diags := Parse("k.yaml", []byte(src))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	w := f.Workflows[0]
	tests := []struct {
		n    *Node
		path string
		pos  string
	}{
		{w.Node, "", "k.yaml:6:3"},
		{w.Name, "name", "k.yaml:6:9"},
		{w.Parameters.Get("properties").Get("x"), "parameters.properties.x", "k.yaml:9:10"},
		{w.StepsNode, "steps", "k.yaml:11:5"},
		{w.Steps[0].Node, "steps[0]", "k.yaml:11:7"},
		{w.Steps[0].Arguments.Get("body"), "steps[0].arguments.body", "k.yaml:14:15"},
		{w.Steps[0].Arguments.Get("Content-Type"), "steps[0].arguments.Content-Type", "k.yaml:15:25"},
		{w.Steps[0].Arguments.Get("a.b c"), `steps[0].arguments["a.b c"]`, "k.yaml:16:18"},
		{w.Steps[0].Arguments.Get("list").Items[1].Get("deep").Items[1], "steps[0].arguments.list[1].deep[1]", "k.yaml:19:24"},
		{w.Steps[1].OnError.Action, "steps[1].onError.action", "k.yaml:22:17"},
	}
	for _, tc := range tests {
		if tc.n == nil {
			t.Errorf("no node for %s", tc.path)
			continue
		}
		if tc.n.Path != tc.path || tc.n.Pos.String() != tc.pos {
			t.Errorf("node at %s %s; want %s %s", tc.n.Path, tc.n.Pos, tc.path, tc.pos)
		}
	}
	args := w.Steps[0].Arguments
	var keys []string
	for _, fl := range args.Fields {
		keys = append(keys, fmt.Sprintf("%s@%s", fl.Key, fl.KeyPos))
	}
	want := []string{"body@k.yaml:14:9", "Content-Type@k.yaml:15:9", "a.b c@k.yaml:16:9", "list@k.yaml:17:9"}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("argument keys in source order (-want +got):\n%s", diff)
	}
	if got := fmt.Sprint(args.Interface()); got != "map[Content-Type:json a.b c:1 body:hi list:[one map[deep:[1 2]]]]" {
		t.Errorf("Interface() = %s", got)
	}
}

func TestAliasesAndMerge(t *testing.T) {
	src := `common: &common
  onError: {action: continue}
  timeout: 1m
steps:
  - id: a
    <<: *common
    timeout: 2m
  - id: b
    <<: [*common, {condition: "{{true}}"}]
  - id: c
    arguments: &args {k: v}
  - id: d
    arguments: *args
`
	f, diags := Parse("f.yaml", []byte(src))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	w := f.Workflows[0]
	a, b, d := w.Steps[0], w.Steps[1], w.Steps[3]
	if got := a.Timeout.Value; got != "2m" {
		t.Errorf("step a timeout = %v; want 2m (explicit key beats merge)", got)
	}
	if a.OnError == nil || a.OnError.Action.Value != "continue" || a.OnError.Action.Path != "steps[0].onError.action" {
		t.Errorf("step a onError = %+v; want merged action continue at steps[0].onError.action", a.OnError)
	}
	if b.Condition == nil || b.Timeout == nil || b.Timeout.Path != "steps[1].timeout" {
		t.Errorf("step b = condition %v timeout %+v; want both merged", b.Condition, b.Timeout)
	}
	if got := d.Arguments.Get("k"); got == nil || got.Value != "v" || got.Path != "steps[3].arguments.k" {
		t.Errorf("alias arguments k = %+v; want v at steps[3].arguments.k", got)
	}
	// The aliased value keeps the position of the text it came from.
	if got := d.Arguments.Get("k").Pos; got.Line != 11 {
		t.Errorf("alias value position = %v; want line 11 where the text is", got)
	}
}

func TestAliasErrors(t *testing.T) {
	tests := []struct {
		src  string
		code string
	}{
		{"steps:\n  - <<: 5\n    id: a\n", CodeBadMerge},
		{"m: &m {a: 1}\nsteps:\n  - *m : 1\n", CodeComplexKey},
		{"steps:\n  - ? [a, b]\n    : 1\n", CodeSyntax},
		{"steps:\n  - *nope : 1\n", CodeUnknownAnchor},
		{"steps:\n  - id: *nope\n", CodeUnknownAnchor},
	}
	for _, tc := range tests {
		_, diags := Parse("f.yaml", []byte(tc.src))
		var codes []string
		for _, d := range diags {
			codes = append(codes, d.Code)
		}
		if !contains(codes, tc.code) {
			t.Errorf("Parse(%q) codes = %v; want %s", tc.src, codes, tc.code)
		}
	}
}

// TestUnknownAliasMessage: a quoted alias name may span lines (FuzzParse
// found it; testdata/fuzz/FuzzParse keeps the input). The message names the
// alias on one line, quoted when it is not plain text.
func TestUnknownAliasMessage(t *testing.T) {
	tests := []struct{ src, want string }{
		{"steps:\n  - id: *nope\n", "alias *nope names no anchor defined before it"},
		{"steps: *'a\n\n  b'\n", `alias *"a\nb" names no anchor defined before it`},
		{"steps: [*\"x\\ty\"]\n", `alias *"x\ty" names no anchor defined before it`},
	}
	for _, tc := range tests {
		_, diags := Parse("f.yaml", []byte(tc.src))
		if len(diags) != 1 || diags[0].Code != CodeUnknownAnchor || diags[0].Message != tc.want {
			t.Errorf("Parse(%q) = %v; want one %s: %s", tc.src, diags, CodeUnknownAnchor, tc.want)
		}
	}
}

func TestAliasBudget(t *testing.T) {
	// Ten levels of ten aliases each: 10^10 nodes if expanded. The anchors
	// sit in a part of a vMCP config that is not converted; the workflow's
	// one alias is where the expansion starts.
	var b strings.Builder
	b.WriteString("defs:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, "  a%d: &a%d [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("compositeTools:\n  - name: w\n    steps:\n      - id: boom\n        arguments: {x: *a10}\n")
	start := time.Now()
	f, diags := Parse("bomb.yaml", []byte(b.String()))
	elapsed := time.Since(start)
	var got []string
	for _, d := range diags {
		got = append(got, fmt.Sprintf("%s %s", d.Code, d.Pos))
	}
	if diff := cmp.Diff([]string{"alias_budget bomb.yaml:17:24"}, got); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	if len(f.Workflows) != 1 {
		t.Errorf("got %d workflows; want the workflow kept, with its arguments cut short", len(f.Workflows))
	}
	t.Logf("billion laughs stopped after %v", elapsed)
}

func TestNesting(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		code  string
		line  int
		depth int // for valid inputs: depth of the deepest node
	}{
		// The document root is level 0, vars 1, x 2, and each bracket one more.
		{"flow at the limit", "steps: []\nvars: {x: " + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + "}\n", "", 0, maxDepth},
		{"flow over the limit", "steps: []\nvars: {x: " + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + "}\n", CodeNestingTooDeep, 2, 0},
		{"block over the limit", "steps: []\nvars:\n  x:\n" + blockNest(maxDepth+5), CodeNestingTooDeep, 0, 0},
		{"huge flow", "steps: []\nvars: " + strings.Repeat("[", 1_000_000), CodeNestingTooDeep, 2, 0},
		{"huge block", "steps: []\nvars: " + strings.Repeat("- ", 500_000) + "x\n", CodeNestingTooDeep, 2, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, diags := Parse("deep.yaml", []byte(tc.src))
			if tc.code == "" {
				if len(diags) > 0 {
					t.Fatalf("diagnostics: %v", diags)
				}
				if d := nodeDepth(f.Workflows[0].Node); d != tc.depth {
					t.Errorf("depth = %d; want %d", d, tc.depth)
				}
				return
			}
			if len(diags) != 1 || diags[0].Code != tc.code {
				t.Fatalf("diagnostics = %v; want one %s", diags, tc.code)
			}
			if tc.line != 0 && diags[0].Pos.Line != tc.line {
				t.Errorf("diagnostic at %v; want line %d", diags[0].Pos, tc.line)
			}
		})
	}
}

func blockNest(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(strings.Repeat(" ", 4+i) + "k:\n")
	}
	return b.String()
}

// nodeDepth counts the levels below and including n, counting the
// document root as level 0.
func nodeDepth(n *Node) int {
	d := 0
	for _, f := range n.Fields {
		d = max(d, nodeDepth(f.Value)+1)
	}
	for _, it := range n.Items {
		d = max(d, nodeDepth(it)+1)
	}
	return d
}

func TestNodeHelpers(t *testing.T) {
	docs, _, _ := parseTree(t, "m: {a: 1, b: [x]}\n")
	m := find(docs[0], "m")
	if m.Get("b").Items[0].Value != "x" || m.Get("missing") != nil {
		t.Errorf("Get misbehaves on %+v", m)
	}
	var nilNode *Node
	if nilNode.Get("a") != nil || nilNode.Interface() != nil {
		t.Error("nil node helpers return non-nil")
	}
	if _, ok := m.Str(); ok {
		t.Error("Str() on a mapping reports a string")
	}
	if got := m.Pos; got != (ir.Pos{File: "test.yaml", Line: 1, Col: 4}) {
		t.Errorf("flow mapping position = %v; want 1:4 (the brace)", got)
	}
}

func TestJSONPositions(t *testing.T) {
	src := "{\n  \"name\": \"j\",\n  \"steps\": [\n    {\"id\": \"a\", \"arguments\": {\"q\": \"é {{.params.q}}\", \"n\": 3}},\n    {\n      \"id\": \"b\",\n      \"dependsOn\": [\"a\"]\n    }\n  ]\n}\n"
	f, diags := Parse("j.json", []byte(src))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	w := f.Workflows[0]
	q := w.Steps[0].Arguments.Get("q")
	tests := []struct {
		n    *Node
		path string
		pos  string
	}{
		{w.Node, "", "j.json:1:1"},
		{w.Name, "name", "j.json:2:11"},
		{w.StepsNode, "steps", "j.json:3:12"},
		{w.Steps[0].Node, "steps[0]", "j.json:4:5"},
		{w.Steps[0].ID, "steps[0].id", "j.json:4:12"},
		{q, "steps[0].arguments.q", "j.json:4:36"},
		{w.Steps[0].Arguments.Get("n"), "steps[0].arguments.n", "j.json:4:60"},
		{w.Steps[1].Node, "steps[1]", "j.json:5:5"},
		{w.Steps[1].DependsOn.Items[0], "steps[1].dependsOn[0]", "j.json:7:21"},
	}
	for _, tc := range tests {
		if tc.n.Path != tc.path || tc.n.Pos.String() != tc.pos {
			t.Errorf("node at %s %s; want %s %s", tc.n.Path, tc.n.Pos, tc.path, tc.pos)
		}
	}
	s, _ := q.Str()
	if got, want := q.OffsetPos(strings.Index(s, "{{")), posOf(t, src, "{{"); got.Line != want.Line || got.Col != want.Col {
		t.Errorf("template position = %v; want line %d col %d", got, want.Line, want.Col)
	}
	if kp := w.Steps[1].Node.Fields[1].KeyPos; kp.String() != "j.json:7:7" {
		t.Errorf("key dependsOn at %v; want j.json:7:7", kp)
	}
}
