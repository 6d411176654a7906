package authoring

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/ir"
)

func testCatalog() *catalog.Catalog {
	echo := func() *catalog.Tool {
		return &catalog.Tool{Name: "echo", InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []any{"text"}}}
	}
	c := catalog.New()
	c.Backends["a"] = &catalog.Backend{Tools: []*catalog.Tool{echo()}}
	c.Backends["b"] = &catalog.Backend{Tools: []*catalog.Tool{echo()}}
	return c
}

func draft(name, call string) string {
	return fmt.Sprintf("name: %s\ndescription: test\nsteps:\n  - id: s\n    tool: %s\n    arguments: {text: hi}\n", name, call)
}

// manySteps is a draft of n one-line steps, each a call of call.
func manySteps(n int, call string) string {
	var b strings.Builder
	b.WriteString("name: big\ndescription: test\nsteps:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {id: s%d, tool: %s, arguments: {text: hi}}\n", i, call)
	}
	return b.String()
}

func codes(ch *Checked) []string {
	var out []string
	for _, d := range ch.Diagnostics {
		out = append(out, fmt.Sprintf("%d:%d %s %s", d.Pos.Line, d.Pos.Col, d.Code, d.Path))
	}
	return out
}

// TestCheckRules: the authoring rules on top of the compiler's checks.
func TestCheckRules(t *testing.T) {
	c := &Compiler{Catalog: testCatalog(), Allowed: []string{"a"}}
	tests := []struct {
		name, src string
		want      string // one diagnostic, "line:col code path"
	}{
		{"a backend authoring.backends leaves out", draft("w", "b.echo"), "5:11 backend_not_allowed steps[0].tool"},
		{"two workflows", "compositeTools:\n  - {name: one, description: d, steps: [{id: s, tool: a.echo, arguments: {text: hi}}]}\n  - {name: two, description: d, steps: [{id: s, tool: a.echo, arguments: {text: hi}}]}\n",
			"3:5 one_workflow_per_source "},
		{"empty", "  \n", "1:1 empty_source "},
		{"compiled plan", `{"version": "vmcp.plan/v3", "workflows": []}`, "1:1 plan_source "},
		{"no workflow", "compositeTools: []\n", "1:1 no_workflow "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := c.Check("", tt.src, nil)
			if got := codes(ch); len(got) != 1 || got[0] != tt.want || ch.OK() {
				t.Errorf("Check = %v (ok %v); want exactly [%s]", got, ch.OK(), tt.want)
			}
		})
	}
	ch := c.Check("", draft("w", "b.echo"), nil)
	if !strings.Contains(ch.Diagnostics[0].Message, "call a tool of a instead") {
		t.Errorf("backend_not_allowed message = %q; want it to name the allowed backends", ch.Diagnostics[0].Message)
	}
	if ch := c.Check("", draft("w", "a.echo"), nil); !ch.OK() || ch.Workflow.Name != "w" {
		t.Errorf("Check(a draft calling an allowed backend) = %v; want ok", codes(ch))
	}
	if ch := (&Compiler{Catalog: testCatalog()}).Check("", draft("w", "b.echo"), nil); !ch.OK() {
		t.Errorf("without authoring.backends, Check(b.echo) = %v; want ok", codes(ch))
	}
}

// fakeServing records what the service serves.
type fakeServing struct {
	mu    sync.Mutex
	sets  [][]string // name@version of each published set
	fail  bool
	tools []string
}

func (f *fakeServing) SetWorkflows(p *ir.Plan) error {
	if f.fail {
		return errors.New("refused")
	}
	return nil
}

func (f *fakeServing) PublishWorkflows(wfs []*ir.Workflow) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var set []string
	for _, wf := range wfs {
		set = append(set, wf.Name+"@"+wf.Version)
	}
	f.sets = append(f.sets, set)
	return nil
}

func (f *fakeServing) ToolNames() []string { return f.tools }

func (f *fakeServing) last() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sets[len(f.sets)-1]
}

func newTestService(store Store, f *fakeServing) *Service {
	files := &ir.Workflow{Name: "from_files", Version: "sha256:abc", Pos: ir.Pos{File: "vmcp.yaml", Line: 3, Col: 5}}
	return NewService(Options{Store: store, Compiler: &Compiler{Catalog: testCatalog()}, Files: []*ir.Workflow{files}, Engine: f, Server: f})
}

// TestServiceServesVersions: save, replace and delete change the served
// set at once; a new service over the same store serves what was saved.
func TestServiceServesVersions(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryStore()
	f := &fakeServing{tools: []string{"tb_echo"}}
	svc := newTestService(store, f)
	if _, err := svc.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Save(ctx, draft("w", "a.echo"), false); err != nil {
		t.Fatal(err)
	}
	if got := f.last(); fmt.Sprint(got) != "[from_files@sha256:abc w@1]" {
		t.Fatalf("served after save = %v; want from_files and w@1", got)
	}
	if _, _, err := svc.Save(ctx, draft("w", "a.echo"), false); !errors.Is(err, ErrExists) {
		t.Fatalf("save over w without replace = %v; want ErrExists", err)
	}
	if _, _, err := svc.Save(ctx, draft("w", "b.echo"), true); err != nil {
		t.Fatal(err)
	}
	if got := f.last(); fmt.Sprint(got) != "[from_files@sha256:abc w@2]" {
		t.Fatalf("served after replace = %v; want w@2", got)
	}
	for _, name := range []string{"from_files", "tb_echo", "vmcp_mine"} {
		_, ch, err := svc.Save(ctx, draft(name, "a.echo"), true)
		if !errors.Is(err, ErrInvalid) || len(ch.Diagnostics) != 1 {
			t.Errorf("save of %s = %v %v; want refused with one diagnostic (a name that is taken)", name, err, codes(ch))
		}
	}
	// A workflow another one calls cannot be deleted.
	caller := "name: caller\ndescription: d\nsteps:\n  - {id: c, type: workflow, workflow: w}\n"
	if _, ch, err := svc.Save(ctx, caller, false); err != nil {
		t.Fatalf("save caller = %v %v", err, codes(ch))
	}
	if _, err := svc.Delete(ctx, "w"); err == nil || !strings.Contains(err.Error(), "caller") {
		t.Errorf("delete w while caller calls it = %v; want an error naming caller", err)
	}
	if _, err := svc.Delete(ctx, "from_files"); err == nil {
		t.Error("delete of a workflow from files = nil; want an error")
	}

	// Another service over the store (a restart) serves the same set.
	f2 := &fakeServing{}
	svc2 := newTestService(store, f2)
	if problems, err := svc2.Load(ctx); err != nil || len(problems) != 0 {
		t.Fatalf("Load = %v, %v", problems, err)
	}
	if got := f2.last(); fmt.Sprint(got) != "[from_files@sha256:abc caller@1 w@2]" {
		t.Fatalf("served after a restart = %v; want caller@1 and w@2 too", got)
	}
	var names []string
	for _, e := range svc2.List() {
		names = append(names, e.Name+"/"+e.Origin+"/"+e.Version)
	}
	if fmt.Sprint(names) != "[caller/authored/1 from_files/files/sha256:abc w/authored/2]" {
		t.Errorf("List = %v", names)
	}
	if _, err := svc2.Delete(ctx, "caller"); err != nil {
		t.Fatal(err)
	}
	if got := f2.last(); fmt.Sprint(got) != "[from_files@sha256:abc w@2]" {
		t.Errorf("served after delete = %v; want caller gone", got)
	}
}

// TestLoadSkipsWhatNoLongerCompiles: a stored version that the backends
// no longer accept is reported and not served; the others are.
func TestLoadSkipsWhatNoLongerCompiles(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryStore()
	store.Save(ctx, "good", draft("good", "a.echo"), false)
	store.Save(ctx, "gone", draft("gone", "c.echo"), false)
	f := &fakeServing{}
	problems, err := newTestService(store, f).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || problems["gone"] == nil {
		t.Errorf("Load problems = %v; want gone only", problems)
	}
	if got := f.last(); fmt.Sprint(got) != "[from_files@sha256:abc good@1]" {
		t.Errorf("served = %v; want good only", got)
	}
}

// TestServiceConcurrentSaves: concurrent saves through the service give
// every version once, and the served version is the newest.
func TestServiceConcurrentSaves(t *testing.T) {
	ctx := context.Background()
	f := &fakeServing{}
	svc := newTestService(NewMemoryStore(), f)
	const n = 20
	var wg sync.WaitGroup
	versions := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, _, err := svc.Save(ctx, draft("w", "a.echo"), true)
			if err != nil {
				t.Error(err)
			}
			versions[i] = v.Version
		}()
	}
	wg.Wait()
	sort.Ints(versions)
	for i, v := range versions {
		if v != i+1 {
			t.Fatalf("versions = %v; want 1..%d each once", versions, n)
		}
	}
	if got := f.last(); fmt.Sprint(got) != fmt.Sprintf("[from_files@sha256:abc w@%d]", n) {
		t.Errorf("served = %v; want w@%d", got, n)
	}
}

// TestSaveNotServedIsRolledBack: when the engine refuses the new set,
// the save says so and the old version stays served.
func TestSaveNotServedIsRolledBack(t *testing.T) {
	ctx := context.Background()
	f := &fakeServing{}
	svc := newTestService(NewMemoryStore(), f)
	if _, _, err := svc.Save(ctx, draft("w", "a.echo"), false); err != nil {
		t.Fatal(err)
	}
	f.fail = true
	if _, _, err := svc.Save(ctx, draft("w", "a.echo"), true); err == nil || !strings.Contains(err.Error(), "could not be served") {
		t.Fatalf("save when serving fails = %v; want an error", err)
	}
	if got := svc.List(); got[len(got)-1].Version != "1" {
		t.Errorf("List after a failed publish = %+v; want w at version 1", got)
	}
}

// TestCheckHugeDraft: a draft past the parser's node limit is refused
// before it is parsed, at the line where the limit was crossed; one with
// too many steps but under the node limit is refused with too_many_steps,
// and only its first 100 steps are checked.
func TestCheckHugeDraft(t *testing.T) {
	c := &Compiler{Catalog: testCatalog(), Allowed: []string{"a"}}
	ch := c.Check("", manySteps(100_000, "a.echo"), nil)
	if got := codes(ch); len(got) != 1 || !strings.HasSuffix(got[0], " document_too_large ") {
		t.Fatalf("check(100,000 steps) = %v; want one document_too_large", got)
	}
	// The root and the three header lines estimate at 7 nodes and each
	// step's line at
	// 10 (the line, "-", two braces, two commas, four ": "), so the
	// 2,000th step's line crosses 20,000.
	if line := ch.Diagnostics[0].Pos.Line; line != 3+2000 {
		t.Errorf("document_too_large at line %d; want %d, the first line past the limit", line, 3+2000)
	}

	ch = c.Check("", manySteps(150, "a.nope"), nil)
	var tooMany, unknown int
	for _, d := range ch.Diagnostics {
		switch {
		case d.Code == "too_many_steps":
			tooMany++
		case d.Pos.Line > 3+100:
			t.Errorf("check(150 steps) reported %s at line %d, past the 100th step", d.Code, d.Pos.Line)
		default:
			unknown++
		}
	}
	if tooMany != 1 || unknown == 0 {
		t.Errorf("check(150 steps) = %v; want too_many_steps once and the first steps' unknown tool", codes(ch))
	}
}

// callDraft is a draft whose one step runs the served workflow callee.
func callDraft(name, callee string) string {
	return fmt.Sprintf("name: %s\ndescription: test\nsteps:\n  - id: w\n    type: workflow\n    workflow: %s\n", name, callee)
}

// TestCheckReachThroughWorkflows: a draft may not reach a backend outside
// authoring.backends through a workflow step, however deep the callee
// calls it; what it reaches through allowed callees is listed in Callees.
func TestCheckReachThroughWorkflows(t *testing.T) {
	open := &Compiler{Catalog: testCatalog()}
	compile := func(src string, served ...*ir.Workflow) *ir.Workflow {
		ch := open.Check("", src, served)
		if !ch.OK() {
			t.Fatalf("served workflow does not compile: %v", codes(ch))
		}
		return ch.Workflow
	}
	usesB := compile(draft("uses_b", "b.echo"))
	usesA := compile(draft("uses_a", "a.echo"))
	mid := compile(callDraft("mid", "uses_b"), usesB) // reaches b one workflow down
	served := []*ir.Workflow{usesB, usesA, mid}

	c := &Compiler{Catalog: testCatalog(), Allowed: []string{"a"}}
	for _, callee := range []string{"uses_b", "mid"} {
		ch := c.Check("", callDraft("d", callee), served)
		got := codes(ch)
		if len(got) != 1 || got[0] != "6:15 backend_not_allowed steps[0].workflow" {
			t.Errorf("draft calling %s: diagnostics %v; want backend_not_allowed at its workflow: (6:15)", callee, got)
			continue
		}
		if msg := ch.Diagnostics[0].Message; !strings.Contains(msg, `workflow "`+callee+`" calls backend "b"`) {
			t.Errorf("draft calling %s: message %q; want it to name the callee and backend b", callee, msg)
		}
	}
	ch := c.Check("", callDraft("d", "uses_a"), served)
	if !ch.OK() || len(ch.Callees) != 1 || ch.Callees[0] != "uses_a" {
		t.Errorf("draft calling uses_a: ok %v, callees %v, diagnostics %v; want ok with callees [uses_a]", ch.OK(), ch.Callees, codes(ch))
	}
	// Without authoring.backends every backend is allowed, and the
	// callees are still listed (the run tool checks their scopes).
	if ch := open.Check("", callDraft("d", "mid"), served); !ch.OK() || !slices.Equal(ch.Callees, []string{"mid", "uses_b"}) {
		t.Errorf("draft calling mid, no authoring.backends: ok %v, callees %v; want ok with [mid uses_b]", ch.OK(), ch.Callees)
	}
}

// TestServiceLimits: authoring.limits hold at every save: a save past the
// workflow count or the stored bytes is refused with ErrLimit and stores
// nothing, and a name keeps its newest versions only.
func TestServiceLimits(t *testing.T) {
	ctx := context.Background()
	store := NewMemoryStore()
	svc := newTestService(store, &fakeServing{})
	svc.limits = Limits{Workflows: 2, Versions: 3, Bytes: 1000}
	for _, name := range []string{"one", "two"} {
		if _, _, err := svc.Save(ctx, draft(name, "a.echo"), false); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := svc.Save(ctx, draft("three", "a.echo"), false)
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "authoring.limits.workflows") {
		t.Errorf("third workflow past workflows: 2 = %v; want ErrLimit naming authoring.limits.workflows", err)
	}
	for range 5 { // replacing a served name is within the count
		if _, _, err := svc.Save(ctx, draft("two", "a.echo"), true); err != nil {
			t.Fatal(err)
		}
	}
	if vs, _ := store.Versions(ctx, "two"); len(vs) != 3 || vs[0].Version != 4 || vs[2].Version != 6 {
		t.Errorf("versions of two after 6 saves = %d (first %d); want the newest 3, versions 4 to 6", len(vs), vs[0].Version)
	}
	big := draft("two", "a.echo") + "# " + strings.Repeat("x", 1000) + "\n"
	_, _, err = svc.Save(ctx, big, true)
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "authoring.limits.bytes") {
		t.Errorf("save past bytes: 1000 = %v; want ErrLimit naming authoring.limits.bytes", err)
	}
	if vs, _ := store.Versions(ctx, "two"); vs[len(vs)-1].Version != 6 {
		t.Errorf("a refused save stored version %d", vs[len(vs)-1].Version)
	}
}

// TestWindowsDeviceNames: con, nul, aux, com1, lpt9... are refused as
// names (their files could not be checked out on Windows); names that only
// start with one are fine.
func TestWindowsDeviceNames(t *testing.T) {
	svc := newTestService(NewMemoryStore(), &fakeServing{})
	for _, name := range []string{"con", "prn", "aux", "nul", "com1", "lpt9"} {
		_, ch, err := svc.Save(context.Background(), draft(name, "a.echo"), false)
		if !errors.Is(err, ErrInvalid) || len(ch.Diagnostics) != 1 || !strings.Contains(ch.Diagnostics[0].Message, "device name on Windows") {
			t.Errorf("save %s = %v %v; want reserved_name: a device name on Windows", name, err, codes(ch))
		}
	}
	for _, name := range []string{"console", "con_check", "com10", "nul-safe"} {
		if _, ch, err := svc.Save(context.Background(), draft(name, "a.echo"), false); err != nil {
			t.Errorf("save %s = %v %v; want it saved", name, err, codes(ch))
		}
	}
}
