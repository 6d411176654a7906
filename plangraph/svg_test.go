package plangraph_test

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/plangraph"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// goldenSources are the workflow files whose drawings are pinned in
// testdata/golden/<file>.<workflow>.svg: one of each shape (chain,
// diamond, fan-out/fan-in with level-skipping edges, a loop with an inner
// step, loops nested three deep, finally, sub-workflows, elicitation,
// retries and conditions), the demo's incident workflow and the CMDB
// sync. Paths are relative to the repository root.
var goldenSources = []string{
	"plangraph/testdata/shapes/chain.yaml",
	"examples/diamond.yaml",
	"plangraph/testdata/shapes/fan_out_skip.yaml",
	"examples/foreach_vulnerability_scan.yaml",
	"examples/nested_loops.yaml",
	"plangraph/testdata/shapes/loops3.yaml",
	"examples/finally_cleanup.yaml",
	"examples/subworkflow_triage.yaml",
	"examples/elicitation_deploy.yaml",
	"examples/retry_fallback.yaml",
	"plangraph/testdata/shapes/escape.yaml",
	"examples/incident_investigation.yaml", // the demo's workflow (examples/demo/vmcp.yaml)
	"examples/cmdb/cmdb_sync.yaml",
	"examples/cmdb/cmdb_sync_flat.yaml",
}

// compileFile compiles one file from the repository root, so positions in
// tooltips read examples/x.yaml:line:col.
func compileFile(t testing.TB, path string) []*ir.Workflow {
	t.Helper()
	inputs, err := compiler.Load([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	plan, diags := compiler.Compile(inputs, compiler.Options{})
	if diags.HasErrors() {
		var b bytes.Buffer
		_ = diag.Print(&b, diags, diag.Text, compiler.Sources(inputs))
		t.Fatalf("compile %s:\n%s", path, b.String())
	}
	return plan.Workflows
}

// toRoot changes into the repository root for the rest of the test.
func toRoot(t testing.TB) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(wd, ".."))
}

func render(t testing.TB, wf *ir.Workflow) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := plangraph.SVG(&b, wf, plangraph.Options{}); err != nil {
		t.Fatalf("SVG(%s): %v", wf.Name, err)
	}
	return b.Bytes()
}

func goldenName(src string, wf *ir.Workflow) string {
	base := strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))
	return filepath.Join("plangraph", "testdata", "golden", base+"."+wf.Name+".svg")
}

func TestGolden(t *testing.T) {
	toRoot(t)
	for _, src := range goldenSources {
		for _, wf := range compileFile(t, src) {
			name := goldenName(src, wf)
			t.Run(filepath.Base(name), func(t *testing.T) {
				got := render(t, wf)
				if *update {
					if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(name, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(name)
				if err != nil {
					t.Fatalf("%v (run go test ./plangraph -update to create it)", err)
				}
				if diff := cmp.Diff(string(want), string(got)); diff != "" {
					t.Errorf("SVG(%s) differs from %s (-want +got):\n%s", wf.Name, name, diff)
				}
			})
		}
	}
}

// TestDeterministic: rendering the same plan again, from a fresh compile,
// and from the plan's JSON form (what vmcp run loads from plan.json)
// gives the same bytes.
func TestDeterministic(t *testing.T) {
	toRoot(t)
	for _, src := range goldenSources {
		first := compileFile(t, src)
		again := compileFile(t, src)
		for i, wf := range first {
			want := render(t, wf)
			for n := 0; n < 5; n++ {
				if got := render(t, wf); !bytes.Equal(got, want) {
					t.Fatalf("SVG(%s) render %d differs from the first", wf.Name, n+2)
				}
			}
			if got := render(t, again[i]); !bytes.Equal(got, want) {
				t.Errorf("SVG(%s) of a second compile differs from the first", wf.Name)
			}
			data, err := ir.Encode(&ir.Plan{Version: ir.Version, Workflows: []*ir.Workflow{wf}})
			if err != nil {
				t.Fatal(err)
			}
			plan, err := ir.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			if got := render(t, plan.Workflows[0]); !bytes.Equal(got, want) {
				t.Errorf("SVG(%s) of the decoded plan.json differs from the compiled plan's", wf.Name)
			}
		}
	}
}

// element is one start element of a parsed SVG, with its attributes and
// the text directly inside it.
type element struct {
	name  string
	attrs map[string]string
	text  string
	depth int
}

// parseSVG parses doc strictly as XML and returns its elements in order;
// it fails the test on any XML error, so it is the well-formedness check.
func parseSVG(t testing.TB, doc []byte) []*element {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	dec.Strict = true
	var out, stack []*element
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v\n%s", err, doc)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := &element{name: tok.Name.Local, attrs: map[string]string{}, depth: len(stack)}
			for _, a := range tok.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			out = append(out, e)
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(tok)
			}
		case xml.ProcInst, xml.Directive:
			t.Fatalf("the SVG has a %T; want none (it is inlined into HTML)", tok)
		}
	}
	if len(out) == 0 || out[0].name != "svg" || out[0].attrs["xmlns"] == "" {
		t.Fatalf("the SVG does not start with <svg xmlns=...>:\n%s", doc)
	}
	return out
}

// stepPaths lists every step of wf as its data-step path: top-level and
// finally steps by id, body steps as loop/.../id.
func stepPaths(wf *ir.Workflow) []string {
	var out []string
	var walk func(prefix string, steps []*ir.Step)
	walk = func(prefix string, steps []*ir.Step) {
		for _, s := range steps {
			p := prefix + s.ID
			out = append(out, p)
			if s.ForEach != nil {
				walk(p+"/", s.ForEach.Steps)
			}
		}
	}
	walk("", wf.Steps)
	walk("", wf.Finally)
	return out
}

// TestHooks: every step is exactly one element with its data-step path
// and a title; every dependency is one edge with data-from and data-to;
// the critical path's nodes and edges (and only they) have the class
// critical; nothing external is referenced.
func TestHooks(t *testing.T) {
	toRoot(t)
	for _, src := range goldenSources {
		for _, wf := range compileFile(t, src) {
			doc := render(t, wf)
			elems := parseSVG(t, doc)
			nodes := map[string]*element{}
			edges := map[string]*element{}
			for _, e := range elems {
				for k, v := range e.attrs {
					if k == "href" || strings.Contains(v, "url(") || strings.HasPrefix(strings.ToLower(k), "on") {
						t.Errorf("%s: <%s %s=%q> refers outside the drawing or runs script", wf.Name, e.name, k, v)
					}
				}
				if e.name == "script" || e.name == "foreignObject" || e.name == "image" {
					t.Errorf("%s: has a <%s> element", wf.Name, e.name)
				}
				if p, ok := e.attrs["data-step"]; ok {
					if nodes[p] != nil {
						t.Errorf("%s: data-step=%q appears twice", wf.Name, p)
					}
					nodes[p] = e
				}
				if from, ok := e.attrs["data-from"]; ok {
					edges[from+" -> "+e.attrs["data-to"]] = e
				}
			}
			want := stepPaths(wf)
			if len(nodes) != len(want) {
				t.Errorf("%s: %d data-step nodes; want %d (%v)", wf.Name, len(nodes), len(want), want)
			}
			for _, p := range want {
				if nodes[p] == nil {
					t.Errorf("%s: no node data-step=%q", wf.Name, p)
				}
			}

			crit := map[string]bool{}
			for i, x := range wf.CriticalPath {
				crit[wf.Steps[x].ID] = true
				if i > 0 {
					crit[wf.Steps[wf.CriticalPath[i-1]].ID+" -> "+wf.Steps[x].ID] = true
				}
			}
			wantEdges := 0
			var walk func(prefix string, steps []*ir.Step, top bool)
			walk = func(prefix string, steps []*ir.Step, top bool) {
				for _, s := range steps {
					for _, d := range s.Deps {
						wantEdges++
						key := prefix + steps[d].ID + " -> " + prefix + s.ID
						e := edges[key]
						if e == nil {
							t.Errorf("%s: no edge %s", wf.Name, key)
							continue
						}
						if top && hasClass(e, "critical") != crit[steps[d].ID+" -> "+s.ID] {
							t.Errorf("%s: edge %s has class %q; critical should be %v", wf.Name, key, e.attrs["class"], !hasClass(e, "critical"))
						}
					}
					if top {
						if n := nodes[s.ID]; n != nil && hasClass(n, "critical") != crit[s.ID] {
							t.Errorf("%s: node %s has class %q; critical should be %v", wf.Name, s.ID, n.attrs["class"], crit[s.ID])
						}
					}
					if s.ForEach != nil {
						walk(prefix+s.ID+"/", s.ForEach.Steps, false)
					}
				}
			}
			walk("", wf.Steps, true)
			walk("", wf.Finally, false)
			if len(edges) != wantEdges {
				t.Errorf("%s: %d edges; want %d", wf.Name, len(edges), wantEdges)
			}
		}
	}
}

func hasClass(e *element, class string) bool {
	for _, c := range strings.Fields(e.attrs["class"]) {
		if c == class {
			return true
		}
	}
	return false
}

// TestEscaping: markup in a description and a condition shows as text; it
// never becomes an element. Characters XML forbids become U+FFFD.
func TestEscaping(t *testing.T) {
	toRoot(t)
	wf := compileFile(t, "plangraph/testdata/shapes/escape.yaml")[0]
	doc := render(t, wf)
	elems := parseSVG(t, doc)
	for _, e := range elems {
		if e.name == "script" || e.name == "b" {
			t.Fatalf("the description became a <%s> element:\n%s", e.name, doc)
		}
	}
	var desc, tooltip string
	for _, e := range elems {
		if e.name == "desc" {
			desc = e.text
		}
		if e.name == "title" && strings.HasPrefix(e.text, "second\n") {
			tooltip = e.text
		}
	}
	if want := `<script>alert('x')</script> & "quotes" <b>not bold</b>`; desc != want {
		t.Errorf("<desc> reads %q; want %q", desc, want)
	}
	if want := `if {{if and (gt 1 0) (lt 0 1)}}true{{end}}`; !strings.Contains(tooltip, want) {
		t.Errorf("the tooltip of second is %q; want it to contain %q", tooltip, want)
	}
	if !bytes.Contains(doc, []byte("&lt;script&gt;alert(&apos;x&apos;)&lt;/script&gt; &amp; &quot;quotes&quot;")) {
		t.Errorf("the description is not escaped as expected:\n%s", doc)
	}

	// Control characters (possible in a YAML "\x01" escape) and invalid
	// UTF-8 from a hand-written plan.
	wf.Description = "bell\x07 nul\x00 bad\xff end"
	elems = parseSVG(t, render(t, wf))
	for _, e := range elems {
		if e.name == "desc" && e.text != "bell\uFFFD nul\uFFFD bad\uFFFD end" {
			t.Errorf("<desc> reads %q; want the control characters and the bad byte as U+FFFD", e.text)
		}
	}
}

// TestInlineSafe: the stylesheet only styles the drawing (every selector
// starts with .vmcp-plan), and there are no element ids to clash with a
// page that inlines the SVG.
func TestInlineSafe(t *testing.T) {
	toRoot(t)
	wf := compileFile(t, "examples/nested_loops.yaml")[0]
	elems := parseSVG(t, render(t, wf))
	if c := elems[0].attrs["class"]; c != "vmcp-plan" {
		t.Errorf("<svg class=%q>; want vmcp-plan", c)
	}
	for _, e := range elems {
		if id, ok := e.attrs["id"]; ok {
			t.Errorf("<%s id=%q>; want no ids", e.name, id)
		}
		if e.name != "style" {
			continue
		}
		for _, rule := range strings.Split(strings.TrimSpace(e.text), "\n") {
			sel, _, ok := strings.Cut(rule, "{")
			if !ok {
				t.Errorf("style rule %q has no block", rule)
			}
			for _, s := range strings.Split(sel, ",") {
				if !strings.HasPrefix(s, ".vmcp-plan ") {
					t.Errorf("style selector %q is not scoped under .vmcp-plan", s)
				}
			}
		}
	}
}

// ExampleSVG draws a one-step workflow built by hand.
func ExampleSVG() {
	wf := &ir.Workflow{
		Name:         "hello",
		Steps:        []*ir.Step{{ID: "greet", Type: ir.StepTool, Tool: &ir.ToolRef{Backend: "chat", Name: "post"}}},
		Levels:       [][]int{{0}},
		CriticalPath: []int{0},
	}
	var b strings.Builder
	if err := plangraph.SVG(&b, wf, plangraph.Options{}); err != nil {
		fmt.Println(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.Contains(line, "data-step") {
			fmt.Println(line)
		}
	}
	// Output:
	// <g class="pg-node pg-tool critical" data-step="greet" data-type="tool">
}
