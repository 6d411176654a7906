package plangraph_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/plangraph"
)

type rect struct{ x0, y0, x1, y1 int }

// extent is a node's box, with the stacked outline of a loop.
func extent(n plangraph.Node) rect {
	r := rect{n.X, n.Y, n.X + n.W, n.Y + n.H}
	if n.Type == ir.StepForEach {
		r.x1 += 4
		r.y1 += 4
	}
	return r
}

func (a rect) overlaps(b rect) bool { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1 }
func (a rect) contains(b rect) bool {
	return a.x0 <= b.x0 && b.x1 <= a.x1 && a.y0 <= b.y0 && b.y1 <= a.y1
}

// crosses reports whether the axis-parallel segment p-q passes through
// the inside of r (touching its border does not count).
func (r rect) crosses(p, q [2]int) bool {
	x0, x1 := min(p[0], q[0]), max(p[0], q[0])
	y0, y1 := min(p[1], q[1]), max(p[1], q[1])
	return x0 < r.x1 && r.x0 < x1+boolInt(x0 == x1) && y0 < r.y1 && r.y0 < y1+boolInt(y0 == y1) &&
		!(x0 == x1 && (x0 <= r.x0 || x0 >= r.x1)) && !(y0 == y1 && (y0 <= r.y0 || y0 >= r.y1))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkGeometry asserts the layout's invariants: every box is on the
// page; boxes of one graph do not overlap; a body's boxes are inside
// their loop's box; finally boxes are below the workflow's; every edge is
// orthogonal, runs from its source's right side to its target's left
// side, crosses no box but its own ends' enclosing loops, and never runs
// along another edge's line unless the two share an end.
func checkGeometry(t *testing.T, name string, l *plangraph.Layout) {
	t.Helper()
	page := rect{0, 0, l.Width, l.Height}
	byPath := map[string]plangraph.Node{}
	for _, n := range l.Nodes {
		byPath[n.Path] = n
		if !page.contains(extent(n)) {
			t.Errorf("%s: node %s at %+v is off the %dx%d page", name, n.Path, extent(n), l.Width, l.Height)
		}
	}
	mainBottom, finTop := 0, l.Height
	for i, a := range l.Nodes {
		if a.Loop != "" {
			if loop, ok := byPath[a.Loop]; !ok || !extent(loop).contains(extent(a)) {
				t.Errorf("%s: body node %s %+v is not inside its loop %s %+v", name, a.Path, extent(a), a.Loop, extent(loop))
			}
		}
		if a.Finally {
			finTop = min(finTop, a.Y)
		} else {
			mainBottom = max(mainBottom, extent(a).y1)
		}
		for _, b := range l.Nodes[i+1:] {
			if a.Loop == b.Loop && a.Finally == b.Finally && extent(a).overlaps(extent(b)) {
				t.Errorf("%s: nodes %s %+v and %s %+v overlap", name, a.Path, extent(a), b.Path, extent(b))
			}
		}
	}
	if finTop < mainBottom {
		t.Errorf("%s: finally starts at y=%d, above the steps' bottom %d", name, finTop, mainBottom)
	}

	ancestors := func(path string) map[string]bool {
		out := map[string]bool{path: true}
		for p := byPath[path].Loop; p != ""; p = byPath[p].Loop {
			out[p] = true
		}
		return out
	}
	type hseg struct {
		y, x0, x1 int
		from, to  string
	}
	var hsegs []hseg
	for _, e := range l.Edges {
		from, to := byPath[e.From], byPath[e.To]
		pts := e.Points
		if len(pts) < 2 {
			t.Errorf("%s: edge %s -> %s has %d points", name, e.From, e.To, len(pts))
			continue
		}
		if p := pts[0]; p[0] != from.X+from.W || p[1] <= from.Y || p[1] >= from.Y+from.H {
			t.Errorf("%s: edge %s -> %s starts at %v, not on %s's right side", name, e.From, e.To, p, e.From)
		}
		if p := pts[len(pts)-1]; p[0] != to.X || p[1] <= to.Y || p[1] >= to.Y+to.H {
			t.Errorf("%s: edge %s -> %s ends at %v, not on %s's left side", name, e.From, e.To, p, e.To)
		}
		skip := ancestors(e.From)
		for k := range ancestors(e.To) {
			skip[k] = true
		}
		for i := 1; i < len(pts); i++ {
			p, q := pts[i-1], pts[i]
			if p[0] != q[0] && p[1] != q[1] {
				t.Errorf("%s: edge %s -> %s has a diagonal segment %v-%v", name, e.From, e.To, p, q)
			}
			if p[1] == q[1] {
				hsegs = append(hsegs, hseg{p[1], min(p[0], q[0]), max(p[0], q[0]), e.From, e.To})
			}
			for _, n := range l.Nodes {
				if !skip[n.Path] && extent(n).crosses(p, q) {
					t.Errorf("%s: edge %s -> %s segment %v-%v crosses node %s %+v", name, e.From, e.To, p, q, n.Path, extent(n))
				}
			}
		}
	}
	for i, a := range hsegs {
		for _, b := range hsegs[i+1:] {
			if a.from == b.from || a.to == b.to || a.y != b.y || a.x1 <= b.x0 || b.x1 <= a.x0 {
				continue
			}
			t.Errorf("%s: edges %s -> %s and %s -> %s run along the same line y=%d (x %d-%d and %d-%d)",
				name, a.from, a.to, b.from, b.to, a.y, a.x0, a.x1, b.x0, b.x1)
		}
	}
}

func TestGeometry(t *testing.T) {
	toRoot(t)
	for _, src := range goldenSources {
		for _, wf := range compileFile(t, src) {
			l, err := plangraph.Lay(wf)
			if err != nil {
				t.Fatalf("Lay(%s): %v", wf.Name, err)
			}
			checkGeometry(t, wf.Name, l)
			if got, want := len(l.Nodes), len(stepPaths(wf)); got != want {
				t.Errorf("Lay(%s) has %d nodes; want %d", wf.Name, got, want)
			}
		}
	}
}

// TestLayoutMatchesSVG: the positions Lay reports are the ones drawn.
func TestLayoutMatchesSVG(t *testing.T) {
	toRoot(t)
	wf := compileFile(t, "examples/nested_loops.yaml")[0]
	l, err := plangraph.Lay(wf)
	if err != nil {
		t.Fatal(err)
	}
	elems := parseSVG(t, render(t, wf))
	for _, n := range l.Nodes {
		want := fmt.Sprintf("%d %d %d %d", n.X, n.Y, n.W, n.H)
		found := false
		for i, e := range elems {
			if e.attrs["data-step"] != n.Path {
				continue
			}
			for _, r := range elems[i+1:] {
				if r.name == "rect" && r.attrs["class"] == "pg-box" {
					got := strings.Join([]string{r.attrs["x"], r.attrs["y"], r.attrs["width"], r.attrs["height"]}, " ")
					found = got == want
					if !found {
						t.Errorf("node %s is drawn at %s; Lay says %s", n.Path, got, want)
					}
					break
				}
			}
		}
		if !found {
			t.Errorf("node %s (%s) not found in the SVG", n.Path, want)
		}
	}
}

// bigWorkflows are generated workflows of 100 steps (the limit): a
// random DAG (a fixed-seed generator, each step depending on one to three
// of the 15 before it), a fan-out of 98 between two steps, and a chain.
func bigWorkflows() map[string]string {
	var dag, fan, chain strings.Builder
	head := func(b *strings.Builder, name string) {
		fmt.Fprintf(b, "compositeTools:\n  - name: %s\n    description: 100 generated steps\n    steps:\n", name)
	}
	head(&dag, "dag100")
	seed := uint32(7)
	rnd := func(n int) int {
		seed = seed*1664525 + 1013904223
		return int(seed>>8) % n
	}
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&dag, "      - id: step_%02d\n        tool: backend_%d.tool_number_%d\n", i, i%7, i)
		if i > 0 {
			deps := map[int]bool{}
			for k := 0; k < 1+rnd(3); k++ {
				deps[max(0, i-1-rnd(15))] = true
			}
			var ds []string
			for d := 0; d < i; d++ {
				if deps[d] {
					ds = append(ds, fmt.Sprintf("step_%02d", d))
				}
			}
			fmt.Fprintf(&dag, "        dependsOn: [%s]\n", strings.Join(ds, ", "))
		}
		if i%9 == 4 {
			dag.WriteString("        condition: \"{{true}}\"\n")
		}
	}
	head(&fan, "fan100")
	fan.WriteString("      - id: root\n        tool: svc.root\n")
	var all []string
	for i := 0; i < 98; i++ {
		fmt.Fprintf(&fan, "      - id: item_%02d\n        tool: svc.item\n        dependsOn: [root]\n", i)
		all = append(all, fmt.Sprintf("item_%02d", i))
	}
	fmt.Fprintf(&fan, "      - id: join\n        tool: svc.join\n        dependsOn: [%s]\n", strings.Join(all, ", "))
	head(&chain, "chain100")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&chain, "      - id: link_%02d\n        tool: svc.link\n", i)
		if i > 0 {
			fmt.Fprintf(&chain, "        dependsOn: [link_%02d]\n", i-1)
		}
	}
	return map[string]string{"dag100": dag.String(), "fan100": fan.String(), "chain100": chain.String()}
}

// maxSVGBytes bounds the drawing of a 100-step workflow: small enough to
// serve with every page view and to inline into HTML.
const maxSVGBytes = 160 << 10

// TestHundredSteps: workflows at the 100-step limit lay out with the same
// invariants, every step drawn once, in bounded size.
func TestHundredSteps(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	big := bigWorkflows()
	for _, name := range []string{"dag100", "fan100", "chain100"} {
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(big[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		wf := compileFile(t, name+".yaml")[0]
		l, err := plangraph.Lay(wf)
		if err != nil {
			t.Fatal(err)
		}
		checkGeometry(t, name, l)
		doc := render(t, wf)
		elems := parseSVG(t, doc)
		steps := 0
		for _, e := range elems {
			if _, ok := e.attrs["data-step"]; ok {
				steps++
			}
		}
		if steps != 100 {
			t.Errorf("%s: %d data-step nodes; want 100", name, steps)
		}
		if len(doc) > maxSVGBytes {
			t.Errorf("%s: the SVG is %d bytes; want at most %d", name, len(doc), maxSVGBytes)
		}
		t.Logf("%s: %dx%d px, %d bytes", name, l.Width, l.Height, len(doc))
	}
}

// TestMalformed: a plan whose indexes do not add up is an error naming
// the problem, never a panic.
func TestMalformed(t *testing.T) {
	step := func(id string, deps ...int) *ir.Step {
		return &ir.Step{ID: id, Type: ir.StepTool, Deps: deps, Tool: &ir.ToolRef{Backend: "b", Name: "t"}}
	}
	tests := []struct {
		name string
		wf   *ir.Workflow
		want string
	}{
		{"nil", nil, "no workflow to draw"},
		{"level out of range", &ir.Workflow{Name: "w", Steps: []*ir.Step{step("a")}, Levels: [][]int{{0, 3}}},
			`workflow "w": level 0 lists step index 3, but there are 1 steps`},
		{"step in no level", &ir.Workflow{Name: "w", Steps: []*ir.Step{step("a"), step("b", 0)}, Levels: [][]int{{0}}},
			`step "b" is in no level`},
		{"dep out of range", &ir.Workflow{Name: "w", Steps: []*ir.Step{step("a", 5)}, Levels: [][]int{{0}}},
			`step "a" depends on index 5, but there are 1 steps`},
		{"dep not earlier", &ir.Workflow{Name: "w", Steps: []*ir.Step{step("a", 1), step("b")}, Levels: [][]int{{0, 1}}},
			`step "a" (level 0) depends on "b" (level 0), which is not an earlier level`},
		{"critical path out of range", &ir.Workflow{Name: "w", Steps: []*ir.Step{step("a")}, Levels: [][]int{{0}}, CriticalPath: []int{0, 1}},
			"critical path lists step index 1"},
		{"twice", &ir.Workflow{Name: "w", Steps: []*ir.Step{step("a")}, Levels: [][]int{{0}, {0}}},
			`step "a" is in levels 0 and 1`},
		{"nil step", &ir.Workflow{Name: "w", Steps: []*ir.Step{nil}, Levels: [][]int{{0}}}, "step index 0 is missing"},
		{"slash", &ir.Workflow{Name: "w", Steps: []*ir.Step{step("a/b")}, Levels: [][]int{{0}}}, `step id "a/b" contains "/"`},
		{"bad body", &ir.Workflow{Name: "w", Levels: [][]int{{0}}, Steps: []*ir.Step{{ID: "loop", Type: ir.StepForEach,
			ForEach: &ir.ForEach{ItemVar: "x", Steps: []*ir.Step{step("in", 2)}, Levels: [][]int{{0}}}}}},
			`body of "loop": step "in" depends on index 2`},
		{"bad finally", &ir.Workflow{Name: "w", Steps: []*ir.Step{step("a")}, Levels: [][]int{{0}},
			Finally: []*ir.Step{step("f")}, FinallyLevels: [][]int{{1}}},
			`finally: level 0 lists step index 1`},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		err := plangraph.SVG(&b, tc.wf, plangraph.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SVG(%s) = %v; want an error containing %q", tc.name, err, tc.want)
		}
		if b.Len() != 0 {
			t.Errorf("SVG(%s) wrote %d bytes before failing; want none", tc.name, b.Len())
		}
	}

	// Nesting deeper than any compiler allows, built by hand.
	inner := step("leaf")
	steps := []*ir.Step{inner}
	for d := 0; d < 12; d++ {
		steps = []*ir.Step{{ID: fmt.Sprintf("loop%d", d), Type: ir.StepForEach,
			ForEach: &ir.ForEach{ItemVar: "x", Steps: steps, Levels: [][]int{{0}}}}}
	}
	err := plangraph.SVG(&bytes.Buffer{}, &ir.Workflow{Name: "deep", Steps: steps, Levels: [][]int{{0}}}, plangraph.Options{})
	if err == nil || !strings.Contains(err.Error(), "loop bodies nest more than 8 deep") {
		t.Errorf("SVG(12 nested loops) = %v; want a nesting error", err)
	}
}

// TestOnlyIR: the package links nothing of the compiler, so the server
// (vmcp run, the web console) can draw plans without it.
func TestOnlyIR(t *testing.T) {
	// Only the packages outside the standard library are listed.
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasPrefix(line, "github.com/vmcp-dev/vmcp/") && line != "github.com/vmcp-dev/vmcp/ir" && line != "github.com/vmcp-dev/vmcp/plangraph" {
			t.Errorf("plangraph depends on %s; want only ir", line)
		}
		if !strings.HasPrefix(line, "github.com/vmcp-dev/vmcp/") {
			t.Errorf("plangraph depends on %s; want only the standard library and ir", line)
		}
	}
}
