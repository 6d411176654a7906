package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/ir"
)

// toolsConfig writes a vmcp.yaml with two real npm backends and the given
// extra YAML, in a new temp directory, and returns its path.
func toolsConfig(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	src := "backends:\n" +
		"  ev: {command: " + testenv.NodeBin(t, "mcp-server-everything") + ", args: [stdio], timeout: 60s}\n" +
		"  memory: {command: " + testenv.NodeBin(t, "mcp-server-memory") + ", env: {MEMORY_FILE_PATH: " + filepath.Join(dir, "mem.jsonl") + "}}\n" +
		extra
	path := filepath.Join(dir, "vmcp.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runVmcpc(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

const badWorkflow = `compositeTools:
  - name: add_things
    description: Adds numbers.
    parameters: {a: {type: number, required: true}}
    steps:
      - id: sum
        tool: ev.get-sum
        arguments: {a: "{{.params.a}}", b: 2, c: 3}
      - id: typo
        tool: ev.get-summ
        arguments: {a: 1, b: 2}
      - id: wrong_type
        tool: ev.get-sum
        arguments: {a: "x", b: 2}
      - id: nobackend
        tool: evv.echo
        arguments: {message: hi}
      - id: missing
        tool: memory.create_entities
        arguments: {}
`

func TestToolsPullThenCompileOfflineMatchesOnline(t *testing.T) {
	cfg := toolsConfig(t, badWorkflow)
	lock := filepath.Join(filepath.Dir(cfg), "tools.lock.json")

	code, _, stderr := runVmcpc("tools", "pull", "--config", cfg, "-o", lock)
	if code != 0 {
		t.Fatalf("vmcpc tools pull exit %d; stderr:\n%s", code, stderr)
	}
	if want := "wrote " + lock + ": 2 backends, "; !strings.HasPrefix(stderr, want) {
		t.Errorf("tools pull stderr = %q; want it to start with %q", stderr, want)
	}
	data, err := os.ReadFile(lock)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Read(data)
	if err != nil {
		t.Fatalf("catalog.Read(lock file): %v", err)
	}
	if got := strings.Join(cat.BackendNames(), ","); got != "ev,memory" {
		t.Errorf("lock file backends = %s; want ev,memory", got)
	}
	for _, ref := range [][2]string{{"ev", "get-sum"}, {"ev", "get-structured-content"}, {"memory", "create_entities"}, {"memory", "read_graph"}} {
		if _, ok := cat.Tool(ref[0], ref[1]); !ok {
			t.Errorf("lock file lacks %s.%s; has %v", ref[0], ref[1], cat.ToolNames(ref[0]))
		}
	}
	// Pulling again gives the same bytes: the lock file diffs cleanly.
	code, again, _ := runVmcpc("tools", "pull", "--config", cfg)
	if code != 0 || again != string(data) {
		t.Errorf("second pull to stdout (exit %d) differs from the lock file", code)
	}

	onCode, _, online := runVmcpc("compile", "--config", cfg)
	offCode, _, offline := runVmcpc("compile", "--tools", lock, cfg)
	if onCode != 1 || offCode != 1 {
		t.Fatalf("compile --config exit %d, compile --tools exit %d; want 1 and 1\nonline:\n%s\noffline:\n%s", onCode, offCode, online, offline)
	}
	if online != offline {
		t.Errorf("compile --config and compile --tools disagree:\nonline:\n%s\noffline:\n%s", online, offline)
	}
	for _, want := range []string{
		// (the config's first three lines are the backends)
		`vmcp.yaml:11:47: error: tool ev.get-sum has no argument "c"`,
		`vmcp.yaml:13:15: error: backend "ev" has no tool "get-summ"; did you mean get-sum?`,
		`vmcp.yaml:17:24: error: argument "a" of tool ev.get-sum must be number, not a string`,
		`vmcp.yaml:19:15: error: unknown backend "evv"; did you mean ev?`,
		`vmcp.yaml:23:9: error: tool memory.create_entities requires argument "entities"`,
	} {
		if !strings.Contains(online, want) {
			t.Errorf("compile --config stderr lacks %q; got:\n%s", want, online)
		}
	}
}

func TestCompileConfigGoodWorkflow(t *testing.T) {
	cfg := toolsConfig(t, `compositeTools:
  - name: remember
    description: Stores a fact and reads the graph back.
    parameters: {fact: {type: string, required: true}}
    steps:
      - id: store
        tool: memory.create_entities
        arguments:
          entities: [{name: fact, entityType: note, observations: ["{{.params.fact}}"]}]
      - id: graph
        tool: memory.read_graph
        dependsOn: [store]
      - id: sum
        tool: ev.get-sum
        arguments: {a: 1, b: "2"}
`)
	code, stdout, stderr := runVmcpc("compile", "--config", cfg)
	if code != 0 {
		t.Fatalf("compile --config exit %d; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "ok  remember") {
		t.Errorf("compile --config stdout = %q; want ok  remember", stdout)
	}
}

func TestToolsPullErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     []string
	}{
		{"backend cannot start",
			[]string{"tools", "pull", "--config", write("broken.yaml", "backends:\n  broken: {command: /nonexistent/vmcp-no-server}\n")},
			1, []string{`vmcpc: backend "broken": cannot start "/nonexistent/vmcp-no-server"`}},
		{"missing environment variable",
			[]string{"tools", "pull", "--config", write("env.yaml", "backends:\n  gh: {command: gh, env: {GITHUB_TOKEN: \"${VMCPC_TEST_NO_SUCH_VAR}\"}}\n")},
			1, []string{`env.yaml:2:42: error: backend "gh" field env.GITHUB_TOKEN: environment variable VMCPC_TEST_NO_SUCH_VAR is not set`, "^"}},
		{"missing config", []string{"tools", "pull", "--config", filepath.Join(dir, "nope.yaml")},
			1, []string{"nope.yaml: no such file or directory"}},
		{"config and tools together", []string{"compile", "--config", "a.yaml", "--tools", "b.json"},
			2, []string{"--config and --tools both supply tool schemas"}},
		{"tools without subcommand", []string{"tools"}, 2, []string{"pull"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runVmcpc(tt.args...)
			if code != tt.wantCode {
				t.Errorf("vmcpc %v exit %d; want %d; stderr:\n%s", tt.args, code, tt.wantCode, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("vmcpc %v stderr =\n%s\nwant it to contain %q", tt.args, stderr, w)
				}
			}
		})
	}
}

// TestCompileConfigNamesAndAnnotations compiles against the real npm
// backends: bare and aggregated names resolve to the one tool they name,
// and the annotations are derived from what the servers declare
// (everything's echo and memory's read_graph are read-only and
// closed-world; delete_entities is destructive).
func TestCompileConfigNamesAndAnnotations(t *testing.T) {
	cfg := toolsConfig(t, `compositeTools:
  - name: look
    description: Reads the graph and echoes.
    annotations: {title: Look}
    steps:
      - {id: graph, tool: read_graph}
      - {id: say, tool: ev_echo, arguments: {message: hi}}
  - name: wipe
    description: Claims to be read-only but deletes.
    annotations: {readOnlyHint: true}
    steps:
      - {id: graph, tool: memory_read_graph}
      - {id: wipe, tool: delete_entities, arguments: {entityNames: [x]}}
`)
	plan := filepath.Join(filepath.Dir(cfg), "plan.json")
	code, _, stderr := runVmcpc("compile", "--config", cfg, "-o", plan)
	if code != 1 {
		t.Fatalf("compile --config exit %d; want 1 for the wipe workflow; stderr:\n%s", code, stderr)
	}
	want := `vmcp.yaml:13:19: error: annotations declare readOnlyHint: true, but step "wipe" calls memory.delete_entities, which is not read-only`
	if !strings.Contains(stderr, want) || strings.Count(stderr, "error:") != 1 {
		t.Errorf("compile --config stderr =\n%s\nwant exactly one error: %s", stderr, want)
	}

	// Without the unsafe workflow the plan is written, names resolved.
	src, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	good := string(src[:strings.Index(string(src), "  - name: wipe")])
	if err := os.WriteFile(cfg, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runVmcpc("compile", "--config", cfg, "-o", plan)
	if code != 0 || stderr != "" {
		t.Fatalf("compile --config exit %d; want 0 and no diagnostics; stderr:\n%s", code, stderr)
	}
	data, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ir.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	wf := p.Workflows[0]
	var refs []string
	for _, s := range wf.Steps {
		refs = append(refs, s.Tool.String()+" (written "+s.Tool.Ref+")")
	}
	if diff := cmp.Diff([]string{"memory.read_graph (written read_graph)", "ev.echo (written ev_echo)"}, refs); diff != "" {
		t.Errorf("resolved references differ (-want +got):\n%s", diff)
	}
	a := wf.Annotations
	if a == nil || a.Title != "Look" || !is(a.ReadOnlyHint, true) || !is(a.DestructiveHint, false) || !is(a.OpenWorldHint, false) || a.IdempotentHint != nil {
		t.Errorf("annotations = %+v; want title Look, read-only, not destructive, closed-world, idempotence not derived", a)
	}
}

func is(b *bool, want bool) bool { return b != nil && *b == want }
