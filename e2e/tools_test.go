package e2e

// Tool references and annotations against a real `vmcp run`: bare and
// aggregated tool names are resolved at startup against the live backends
// and the resolved tool is what runs; the advertised tools carry the
// annotations derived from their steps' tools; and a compiled plan.json
// gets the same startup checks as YAML.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/ir"
)

// TestBareToolNamesRun serves a workflow whose steps name their tools
// without a backend (add, tb_echo) and calls it: vmcp resolved them to
// tb.add and tb.echo at startup.
func TestBareToolNamesRun(t *testing.T) {
	cfg := writeConfig(t, `
backends:
  tb: {command: "${TB}"}
compositeTools:
  - name: bare_names
    description: Add, then echo, named without the backend
    parameters: {a: {type: number, required: true}}
    steps:
      - {id: add, tool: add, arguments: {a: "{{.params.a}}", b: 2}}
      - {id: say, tool: tb_echo, dependsOn: [add], arguments: {text: "sum is {{.steps.add.output.sum}}"}}
`, "")
	c, _ := stdioVMCP(t, cfg)
	res := mustCall(t, c, "bare_names", map[string]any{"a": 40})
	if res.IsError {
		t.Fatalf("bare_names failed: %s", testenv.ResultText(res))
	}
	if got, want := res.StructuredContent, any(map[string]any{"text": "sum is 42"}); !cmp.Equal(got, want) {
		t.Errorf("bare_names result = %v; want %v", got, want)
	}
}

// TestAmbiguousToolNameFailsStartup starts vmcp with two backends that
// both have echo: a bare echo is refused at startup with the candidates.
func TestAmbiguousToolNameFailsStartup(t *testing.T) {
	cfg := writeConfig(t, `
backends:
  tb: {command: "${TB}"}
  tb2: {command: "${TB}"}
compositeTools:
  - name: which_echo
    description: echo on which backend?
    steps:
      - {id: say, tool: echo, arguments: {text: hi}}
`, "")
	_, stderr, code := run(t, 60*time.Second, filepath.Dir(cfg), bins.vmcp, "run", "--config", cfg)
	want := `vmcp.yaml:9:25: error: tool "echo" matches 2 backend tools: tb.echo, tb2.echo; write the one you mean as backend.tool`
	if code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("vmcp run exit %d, stderr:\n%s\nwant exit 1 and %s", code, stderr, want)
	}
}

const annotationsConfig = `
backends:
  tb: {command: "${TB}"}
  logs: {command: "${DEMO}", args: [-role, logs]}
  jira: {command: "${DEMO}", args: [-role, jira]}
compositeTools:
  - name: look
    description: Reads logs and echoes (read-only steps)
    annotations: {title: Look}
    steps:
      - {id: logs, tool: fetch_logs, arguments: {incident_id: i1}}
      - {id: say, tool: tb.echo, arguments: {text: hi}}
  - name: pure
    description: Only closed-world, read-only steps
    annotations: {idempotentHint: true}
    steps:
      - {id: sum, tool: tb.add, arguments: {a: 1, b: 2}}
  - name: file
    description: Files a ticket (a tool with mcp-go's default annotations)
    steps:
      - {id: logs, tool: logs.fetch_logs, arguments: {incident_id: i1}}
      - {id: ticket, tool: create_issue, arguments: {title: t, body: b}}
`

// annotationLine prints a tool's annotations compactly.
func annotationLine(a mcp.ToolAnnotation) string {
	show := func(name string, b *bool) string {
		if b == nil {
			return name + "=unset"
		}
		if *b {
			return name + "=true"
		}
		return name + "=false"
	}
	return strings.Join([]string{"title=" + a.Title, show("readOnly", a.ReadOnlyHint), show("destructive", a.DestructiveHint),
		show("idempotent", a.IdempotentHint), show("openWorld", a.OpenWorldHint)}, " ")
}

var wantAnnotations = map[string]string{
	// fetch_logs is read-only (mcp-go's default openWorldHint: true stays).
	"look": "title=Look readOnly=true destructive=false idempotent=unset openWorld=true",
	"pure": "title= readOnly=true destructive=false idempotent=true openWorld=false",
	// create_issue keeps mcp-go's defaults: not read-only, destructive.
	"file": "title= readOnly=false destructive=true idempotent=unset openWorld=true",
}

// TestAdvertisedAnnotationsDerived lists the tools with mcp-go's client
// and with the MCP Inspector: each composite carries the annotations
// derived from its steps' tools, merged with its explicit ones.
func TestAdvertisedAnnotationsDerived(t *testing.T) {
	cfg := writeConfig(t, annotationsConfig, "")
	c, _ := stdioVMCP(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tool := range list.Tools {
		got[tool.Name] = annotationLine(tool.Annotations)
	}
	if diff := cmp.Diff(wantAnnotations, got); diff != "" {
		t.Errorf("mcp-go tools/list annotations differ (-want +got):\n%s", diff)
	}

	out, errOut, code := inspector(t, "--method", "tools/list", "--", bins.vmcp, "run", "--config", cfg, "--log-level", "warn")
	if code != 0 {
		t.Fatalf("inspector tools/list exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var seen struct {
		Tools []struct {
			Name        string             `json:"name"`
			Annotations mcp.ToolAnnotation `json:"annotations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &seen); err != nil {
		t.Fatalf("tools/list output is not JSON: %v\n%s", err, out)
	}
	got = map[string]string{}
	for _, tool := range seen.Tools {
		got[tool.Name] = annotationLine(tool.Annotations)
	}
	if diff := cmp.Diff(wantAnnotations, got); diff != "" {
		t.Errorf("inspector tools/list annotations differ (-want +got):\n%s", diff)
	}
}

// compilePlanFile compiles src (as wf.yaml) without a catalog, as `vmcpc
// compile -o` does, and writes plan.json next to a vmcp.yaml that serves
// it with the test backend. It returns the config's path.
func compilePlanFile(t *testing.T, src string) string {
	t.Helper()
	p, diags := compiler.Compile([]compiler.Source{{Name: "wf.yaml", Src: []byte(src)}}, compiler.Options{})
	if diags.HasErrors() {
		t.Fatalf("compile: %v", diags)
	}
	data, err := ir.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "backends:\n  tb: {command: \"${TB}\"}\nworkflows: [plan.json]\n", "")
	if err := os.WriteFile(filepath.Join(filepath.Dir(cfg), "plan.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestPlanStartupChecks serves compiled plans that were checked without a
// catalog: vmcp run checks them against the live backends before it
// serves anything, with positions from the plan.
func TestPlanStartupChecks(t *testing.T) {
	for _, tt := range []struct{ name, src, want string }{
		{"unknown tool", `
name: p
description: d
steps:
  - {id: a, tool: tb.nope}
`, `wf.yaml:5:19: error: backend "tb" has no tool "nope"`},
		{"unknown backend", `
name: p
description: d
steps:
  - {id: a, tool: tbb.echo, arguments: {text: x}}
`, `wf.yaml:5:19: error: unknown backend "tbb"; did you mean tb?`},
		{"argument schema", `
name: p
description: d
steps:
  - {id: a, tool: tb.add, arguments: {a: one, b: 2, c: 3}}
`, `wf.yaml:5:19: error: argument "a" of tool tb.add must be number, not a string`},
		{"bare name nobody has", `
name: p
description: d
steps:
  - {id: a, tool: ehco, arguments: {text: x}}
`, `wf.yaml:5:19: error: no backend has a tool "ehco", by its bare name or as backend_tool; did you mean echo?`},
		{"unsafe annotation", `
name: p
description: d
annotations: {readOnlyHint: true}
steps:
  - {id: a, tool: echo, arguments: {text: x}}
  - {id: nap, tool: tb.sleep, arguments: {ms: 1, label: x}}
`, `wf.yaml:2:1: error: annotations declare readOnlyHint: true, but step "nap" calls tb.sleep, which is not read-only`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := compilePlanFile(t, tt.src)
			_, stderr, code := run(t, 60*time.Second, filepath.Dir(cfg), bins.vmcp, "run", "--config", cfg)
			if code != 1 || !strings.Contains(stderr, tt.want) {
				t.Errorf("vmcp run exit %d, stderr:\n%s\nwant exit 1 and %s", code, stderr, tt.want)
			}
		})
	}
}

// TestPlanBareNameRuns serves a plan.json compiled without a catalog whose
// step says only echo: vmcp run resolves it to tb.echo, runs it, and
// advertises the derived annotations.
func TestPlanBareNameRuns(t *testing.T) {
	cfg := compilePlanFile(t, `
name: planned
description: d
steps:
  - {id: say, tool: echo, arguments: {text: from a plan}}
`)
	c, _ := stdioVMCP(t, cfg)
	res := mustCall(t, c, "planned", nil)
	if res.IsError || !cmp.Equal(res.StructuredContent, any(map[string]any{"text": "from a plan"})) {
		t.Errorf("planned = %v (%s); want {text: from a plan}", res.StructuredContent, testenv.ResultText(res))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil || len(list.Tools) != 1 {
		t.Fatalf("tools/list = %v, %v; want one tool", list, err)
	}
	if got, want := annotationLine(list.Tools[0].Annotations), "title= readOnly=true destructive=false idempotent=unset openWorld=false"; got != want {
		t.Errorf("planned annotations = %s; want %s", got, want)
	}
}
