package ir_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/ir"
)

const digestBase = `compositeTools:
  - name: wf
    description: d
    parameters: {q: {type: string}}
    steps:
      - id: a
        tool: b.fetch
        arguments: {q: "x {{.params.q}}"}
      - id: b
        tool: b.store
        dependsOn: [a]
        arguments: {v: "{{.steps.a.output.text}}"}
`

func compileOne(t *testing.T, name, src string) *ir.Workflow {
	t.Helper()
	plan, diags := compiler.Compile([]compiler.Source{{Name: name, Src: []byte(src)}}, compiler.Options{})
	if diags.HasErrors() {
		t.Fatalf("Compile(%s): %v", name, diags)
	}
	return plan.Workflows[0]
}

// TestDigestIgnoresPositions: comments, blank lines, indentation of flow
// values and the file's name move positions but not what the workflow
// does, so a run started before such an edit still resumes.
func TestDigestIgnoresPositions(t *testing.T) {
	base := ir.Digest(compileOne(t, "a.yaml", digestBase))
	moved := "# a comment\n\n" + digestBase[:len(digestBase)-1] + "   # trailing\n"
	if got := ir.Digest(compileOne(t, "other/b.yaml", moved)); got != base {
		t.Errorf("Digest after moving the workflow in its file = %s; want %s", got, base)
	}
	// Through a plan file, as vmcp run loads vmcpc compile -o output.
	plan, _ := compiler.Compile([]compiler.Source{{Name: "a.yaml", Src: []byte(digestBase)}}, compiler.Options{})
	data, err := ir.Encode(plan)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := ir.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := ir.Digest(decoded.Workflows[0]); got != base {
		t.Errorf("Digest of the decoded plan = %s; want %s", got, base)
	}
	if len(base) != 64 {
		t.Errorf("Digest = %q; want 64 hex digits", base)
	}
}

// TestDigestSeesChanges: anything that changes what a run does changes
// the digest.
func TestDigestSeesChanges(t *testing.T) {
	base := ir.Digest(compileOne(t, "a.yaml", digestBase))
	for _, tc := range []struct{ name, from, to string }{
		{"argument template", `"x {{.params.q}}"`, `"y {{.params.q}}"`},
		{"tool", "tool: b.store", "tool: b.save"},
		{"dependency", "dependsOn: [a]\n        arguments: {v: \"{{.steps.a.output.text}}\"}", "arguments: {v: \"literal\"}"},
		{"idempotent", "tool: b.store\n", "tool: b.store\n        idempotent: true\n"},
		{"timeout", "    steps:\n", "    timeout: 5m\n    steps:\n"},
	} {
		src := replaceOnce(t, digestBase, tc.from, tc.to)
		if got := ir.Digest(compileOne(t, "a.yaml", src)); got == base {
			t.Errorf("Digest after changing the %s = the old digest; want a new one", tc.name)
		}
	}
}

func replaceOnce(t *testing.T, s, from, to string) string {
	t.Helper()
	for i := 0; i+len(from) <= len(s); i++ {
		if s[i:i+len(from)] == from {
			return s[:i] + to + s[i+len(from):]
		}
	}
	t.Fatalf("%q not in the source", from)
	return ""
}

// BenchmarkDigest digests a 100-step chain (the step limit): vmcp computes
// it once per workflow when the engine is built.
func BenchmarkDigest(b *testing.B) {
	var src strings.Builder
	src.WriteString("compositeTools:\n  - name: wf\n    description: d\n    parameters: {q: {type: string}}\n    steps:\n")
	for i := range 100 {
		fmt.Fprintf(&src, "      - id: s%d\n        tool: b.t\n        arguments: {q: \"{{.params.q}} %d\", deep: {list: [1, 2, {x: \"y\"}]}}\n", i, i)
		if i > 0 {
			fmt.Fprintf(&src, "        dependsOn: [s%d]\n", i-1)
		}
	}
	plan, diags := compiler.Compile([]compiler.Source{{Name: "a.yaml", Src: []byte(src.String())}}, compiler.Options{})
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	b.ReportAllocs()
	for b.Loop() {
		ir.Digest(plan.Workflows[0])
	}
}
