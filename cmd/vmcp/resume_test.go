package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/sqlite"
)

// fakeResumer stands in for the engine: it serves workflows and records
// the runs it is asked to resume, finishing each as completed.
type fakeResumer struct {
	wfs     map[string]*ir.Workflow
	store   runtime.Store
	mu      sync.Mutex
	resumed []string
}

func (f *fakeResumer) Workflow(name string) (*ir.Workflow, bool) {
	wf, ok := f.wfs[name]
	return wf, ok
}

func (f *fakeResumer) Resume(ctx context.Context, run *runtime.Run, opts runtime.RunOptions) (*runtime.Run, error) {
	f.mu.Lock()
	f.resumed = append(f.resumed, run.ID+" as "+opts.RunID)
	f.mu.Unlock()
	run.Status, run.EndedAt = runtime.RunCompleted, time.Now()
	return run, f.store.FinishRun(ctx, run)
}

// noResume is an engine without Resume.
type noResume struct{ wfs map[string]*ir.Workflow }

func (n noResume) Workflow(name string) (*ir.Workflow, bool) {
	wf, ok := n.wfs[name]
	return wf, ok
}

func compileWorkflow(t *testing.T, src string) *ir.Workflow {
	t.Helper()
	plan, diags := compiler.Compile([]compiler.Source{{Name: "wf.yaml", Src: []byte(src)}}, compiler.Options{})
	if diags.HasErrors() {
		t.Fatalf("Compile: %v", diags)
	}
	return plan.Workflows[0]
}

const resumeWF = `compositeTools:
  - name: chain
    description: two steps
    steps:
      - id: a
        tool: b.one
      - id: b
        tool: b.two
        dependsOn: [a]
`

// TestResumeDecisions: of the runs a killed vmcp left running, the
// resumable one is handed to Resume under its own id, and every other one
// ends interrupted with an error that says why it could not resume.
func TestResumeDecisions(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	wf := compileWorkflow(t, resumeWF)
	changed := compileWorkflow(t, strings.Replace(resumeWF, "tool: b.two", "tool: b.three", 1))
	s, err := sqlite.Open(path, sqlite.Options{MaxOutputBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	mk := func(id, workflow, digest string, i int) *runtime.Run {
		r := &runtime.Run{ID: id, Workflow: workflow, Status: runtime.RunRunning, StartedAt: t0.Add(time.Duration(i) * time.Second),
			PlanDigest: digest, Params: map[string]any{}, Steps: []runtime.StepState{{ID: "a", Status: runtime.StepPending}, {ID: "b", Status: runtime.StepPending}}}
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	good := ir.Digest(wf)
	mk("ok", "chain", good, 0)
	mk("gone", "removed", good, 1)
	mk("changed", "chain", ir.Digest(changed), 2)
	mk("old", "chain", "", 3)
	cut := mk("cut", "chain", good, 4)
	if err := s.UpdateStep(ctx, cut.ID, 0, runtime.StepState{ID: "a", Status: runtime.StepCompleted, Output: map[string]any{"x": strings.Repeat("y", 100)}}); err != nil {
		t.Fatal(err)
	}
	kid := &runtime.Run{ID: "kid", Workflow: "chain", Status: runtime.RunRunning, StartedAt: t0.Add(6 * time.Second), PlanDigest: good,
		ParentID: "ok", ParentStep: "a", Steps: []runtime.StepState{{ID: "a", Status: runtime.StepRunning}}}
	if err := s.CreateRun(ctx, kid); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = sqlite.Open(path, sqlite.Options{KeepUnfinished: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids := s.Unfinished
	if len(ids) != 6 {
		t.Fatalf("Unfinished = %v; want the 6 runs left running", ids)
	}

	var logs bytes.Buffer
	eng := &fakeResumer{wfs: map[string]*ir.Workflow{"chain": wf}, store: s}
	rs := &resumeSet{store: s, engine: eng, runs: newRunTracker(nil), log: slog.New(slog.NewTextHandler(&logs, nil))}
	select {
	case <-rs.resumeRuns(ctx, ids):
	case <-time.After(10 * time.Second):
		t.Fatal("the resumed runs did not end within 10s")
	}
	if got := strings.Join(eng.resumed, ";"); got != "ok as ok" {
		t.Errorf("runs resumed = %q; want only ok, under its own id", got)
	}
	for id, want := range map[string]string{
		"gone":    `cannot resume: the workflow "removed" is no longer served`,
		"changed": `cannot resume: the workflow "chain" changed since the run started`,
		"old":     "cannot resume: it was recorded by a vmcp that did not keep what a resume needs",
		"cut":     `cannot resume: the store truncated the recorded output of step "a" (state.maxOutputBytes)`,
		"kid":     `cannot resume: it is the child run of step "a" of run ok, and a child run is not resumed on its own`,
	} {
		r, err := s.GetRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != runtime.RunInterrupted || r.Error == nil || !strings.Contains(r.Error.Msg, want) {
			t.Errorf("run %s = %s, %+v; want interrupted with %q", id, r.Status, r.Error, want)
		}
	}
	if r, _ := s.GetRun(ctx, "ok"); r.Status != runtime.RunCompleted {
		t.Errorf("resumed run ok = %s; want completed (as the engine finished it)", r.Status)
	}
	if n := strings.Count(logs.String(), "resuming run left unfinished by the previous stop"); n != 1 || !strings.Contains(logs.String(), "run_id=ok") {
		t.Errorf("log has %d resume lines; want one for run ok:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "resumed run ended") {
		t.Errorf("log does not say how the resumed run ended:\n%s", logs.String())
	}
}

// TestResumeWithoutEngineSupport: an engine that cannot resume leaves no
// run hanging: each ends interrupted, saying so.
func TestResumeWithoutEngineSupport(t *testing.T) {
	ctx := context.Background()
	wf := compileWorkflow(t, resumeWF)
	s, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := &runtime.Run{ID: "r", Workflow: "chain", Status: runtime.RunRunning, StartedAt: time.Now(), PlanDigest: ir.Digest(wf),
		Steps: []runtime.StepState{{ID: "a", Status: runtime.StepPending}}}
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	rs := &resumeSet{store: s, engine: noResume{wfs: map[string]*ir.Workflow{"chain": wf}}, runs: newRunTracker(nil), log: slog.New(slog.DiscardHandler)}
	<-rs.resumeRuns(ctx, []string{"r"})
	got, _ := s.GetRun(ctx, "r")
	if got.Status != runtime.RunInterrupted || got.Error == nil || !strings.Contains(got.Error.Msg, "this vmcp build has no run resume") {
		t.Errorf("run = %s, %+v; want interrupted, saying the build cannot resume", got.Status, got.Error)
	}
}

// TestCatalogHints: the engine learns a backend tool's idempotentHint and
// readOnlyHint from the live catalog; an unknown tool or one without
// annotations has no hints.
func TestCatalogHints(t *testing.T) {
	yes, no := true, false
	cat := catalog.New()
	cat.Backends["b"] = &catalog.Backend{Tools: []*catalog.Tool{
		{Name: "get", Annotations: &ir.Annotations{ReadOnlyHint: &yes}},
		{Name: "put", Annotations: &ir.Annotations{IdempotentHint: &yes, ReadOnlyHint: &no}},
		{Name: "post", Annotations: &ir.Annotations{IdempotentHint: &no}},
		{Name: "bare"},
	}}
	h := newCatalogHints(cat)
	for _, tc := range []struct {
		tool string
		want runtime.ToolHints
		ok   bool
	}{
		{"get", runtime.ToolHints{ReadOnly: true}, true},
		{"put", runtime.ToolHints{Idempotent: true}, true},
		{"post", runtime.ToolHints{}, true},
		{"bare", runtime.ToolHints{}, false},
		{"nope", runtime.ToolHints{}, false},
	} {
		if got, ok := h.ToolHints("b", tc.tool); got != tc.want || ok != tc.ok {
			t.Errorf("ToolHints(b, %s) = %+v, %v; want %+v, %v", tc.tool, got, ok, tc.want, tc.ok)
		}
	}
}

// TestCatalogHintsInputSchema: the index answers what catalog.InputSchema
// answers, for every tool of every backend, and misses alike.
func TestCatalogHintsInputSchema(t *testing.T) {
	cat := wideCatalog(3, 50)
	cat.Backends["b1"].Tools = append(cat.Backends["b1"].Tools, &catalog.Tool{Name: "noschema"})
	h := newCatalogHints(cat)
	for name, b := range cat.Backends {
		for _, tool := range append(b.Tools, &catalog.Tool{Name: "missing"}) {
			want, wantOK := cat.InputSchema(name, tool.Name)
			got, ok := h.InputSchema(name, tool.Name)
			if ok != wantOK || fmt.Sprintf("%p", got) != fmt.Sprintf("%p", want) {
				t.Errorf("InputSchema(%s, %s) = %p, %v; the catalog's %p, %v", name, tool.Name, got, ok, want, wantOK)
			}
		}
	}
	if _, ok := h.InputSchema("nobackend", "t0"); ok {
		t.Error("a backend that is not there has a schema")
	}
}

// wideCatalog is backends b0..b(n-1) of tools t0..t(m-1), each with a schema.
func wideCatalog(n, m int) *catalog.Catalog {
	cat := catalog.New()
	for i := range n {
		b := &catalog.Backend{}
		for j := range m {
			b.Tools = append(b.Tools, &catalog.Tool{Name: fmt.Sprintf("t%d", j), InputSchema: map[string]any{"type": "object"}})
		}
		cat.Backends[fmt.Sprintf("b%d", i)] = b
	}
	return cat
}

// BenchmarkCatalogSchema is the schema lookup the engine makes on every
// call, for the last of a backend's 100 tools: the catalog's scan against
// catalogHints' index.
func BenchmarkCatalogSchema(b *testing.B) {
	cat := wideCatalog(4, 100)
	for name, src := range map[string]runtime.SchemaSource{"catalog": cat, "index": newCatalogHints(cat)} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, ok := src.InputSchema("b2", "t99"); !ok {
					b.Fatal("no schema")
				}
			}
		})
	}
}

// TestOpenOpsKeepsUnfinished: with the SQLite store, opening vmcp's ops
// (as vmcp run and vmcp call both do) leaves a run the previous process
// left running as it is, listed for resume, instead of interrupting it;
// the memory store lists nothing.
func TestOpenOpsKeepsUnfinished(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := &runtime.Run{ID: "left", Workflow: "chain", Status: runtime.RunRunning, StartedAt: time.Now(),
		Steps: []runtime.StepState{{ID: "a", Status: runtime.StepRunning}}}
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	s.Close()

	var logs bytes.Buffer
	o, err := openOps(&config.Config{State: config.State{Store: "sqlite", Path: path}}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if len(o.unfinishedIDs) != 1 || o.unfinishedIDs[0] != "left" {
		t.Errorf("unfinished runs = %v; want [left]", o.unfinishedIDs)
	}
	if got, err := o.store.GetRun(ctx, "left"); err != nil || got.Status != runtime.RunRunning {
		t.Errorf("run left = %+v, %v; want it still running, for vmcp run to resume", got, err)
	}
	if !strings.Contains(logs.String(), "runs left unfinished by the previous stop; vmcp run resumes them") {
		t.Errorf("log does not mention the unfinished run:\n%s", logs.String())
	}

	m, err := openOps(&config.Config{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if rs, ids := m.newResumeSet(nil, nil); rs != nil || ids != nil {
		t.Errorf("memory store resume set = %v, %v; want none", rs, ids)
	}
}
