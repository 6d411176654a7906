package checker

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/parser"
)

const corpusDir = "../testdata/corpus/toolhive/upstream"

// corpusCodes is the exact set of diagnostic codes each published ToolHive
// file produces, worked out by reading each file:
//
//   - chainsaw-test.yaml is a chainsaw Test document, which the parser
//     skips as a whole; its embedded definitions are checked one by one in
//     TestCorpusChainsaw.
//   - the simple and complex examples call tools without a backend
//     (tool: fetch, tool: echo), which without a catalog are warnings
//     (resolved at startup), and read {{.timestamp}}, which no template
//     context provides.
//   - the simple and complex examples write {action: abort, maxRetries: 2},
//     which retries nothing (in ToolHive as in vmcp): a warning.
//   - the elicitation example writes yardstick-streamable_echo, the
//     aggregated name of a backend tool, also resolved at startup.
//   - the upgrade-guide streams name a step "step-1": valid, but templates
//     could only read it through index, hence the warning.
//   - vmcp-config.yaml has its composite tools commented out.
var corpusCodes = map[string][]string{
	"test/e2e/chainsaw/operator/single-tenancy/test-scenarios/vmcp/chainsaw-test.yaml": nil,
	"examples/operator/virtual-mcps/composite_tool_with_elicitations.yaml":             {"unresolved_tool_ref"},
	"examples/operator/virtual-mcps/composite_tool_simple.yaml":                        {"retries_without_retry", "unknown_template_root", "unresolved_tool_ref"},
	"examples/operator/virtual-mcps/composite_tool_complex.yaml":                       {"retries_without_retry", "unknown_template_root", "unresolved_tool_ref"},
	"examples/vmcp-config.yaml":                                                        nil,
	"docs/operator/upgrade-guide/crs-v1alpha1.yaml":                                    {"step_id_hyphen"},
	"docs/operator/upgrade-guide/crs-v1beta1.yaml":                                     {"step_id_hyphen"},
}

func TestCorpus(t *testing.T) {
	var files []string
	err := filepath.WalkDir(corpusDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".yaml") {
			files = append(files, path)
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("corpus not found in %s: %v", corpusDir, err)
	}
	for _, path := range files {
		rel, _ := filepath.Rel(corpusDir, path)
		rel = filepath.ToSlash(rel)
		want, listed := corpusCodes[rel]
		if !listed {
			t.Errorf("corpus file %s has no entry in corpusCodes", rel)
			continue
		}
		_, diags := checkFile(t, path, Options{})
		set := map[string]bool{}
		for _, d := range diags {
			set[d.Code] = true
		}
		var got []string
		for c := range set {
			got = append(got, c)
		}
		sort.Strings(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("codes of %s differ (-want +got):\n%s", rel, diff)
			for _, d := range diags {
				t.Logf("  %s: %s: %s", d.Pos, d.Code, d.Message)
			}
		}
	}
}

// TestCorpusWithCatalog checks the elicitation example against the tools
// its own MCPServer provides: the aggregated name yardstick-streamable_echo
// resolves to yardstick-streamable.echo, as in ToolHive, and the example
// compiles without a diagnostic.
func TestCorpusWithCatalog(t *testing.T) {
	cat := catalog.New()
	cat.Backends["yardstick-streamable"] = &catalog.Backend{Tools: []*catalog.Tool{{Name: "echo", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"input": map[string]any{"type": "string"}}, "required": []any{"input"}}}}}
	path := filepath.Join(corpusDir, "examples/operator/virtual-mcps/composite_tool_with_elicitations.yaml")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := parser.Parse("composite_tool_with_elicitations.yaml", src)
	wfs, diags := Check([]*parser.File{f}, Options{Tools: cat})
	for _, d := range diags {
		t.Errorf("%s: %s: %s: %s; want no diagnostics", d.Pos, d.Severity, d.Code, d.Message)
	}
	var refs []string
	for _, wf := range wfs {
		for _, s := range wf.Steps {
			if s.Tool != nil {
				refs = append(refs, fmt.Sprintf("%d: %s (%s)", s.Tool.Pos.Line, s.Tool, s.Tool.Ref))
			}
		}
	}
	want := []string{
		"97: yardstick-streamable.echo (yardstick-streamable_echo)",
		"175: yardstick-streamable.echo (yardstick-streamable_echo)",
		"192: yardstick-streamable.echo (yardstick-streamable_echo)",
	}
	if diff := cmp.Diff(want, refs); diff != "" {
		t.Errorf("resolved tool references differ (-want +got):\n%s", diff)
	}
}

// chainsawCodes lists, per definition embedded in the chainsaw scenario,
// the diagnostics it must produce (code and line in chainsaw-test.yaml):
// deploy_and_verify reads .params.manifest and .params.namespace without
// declaring parameters; invalid_duplicate and circular_workflow are invalid
// on purpose (the scenario's TODOs say a webhook should reject them);
// invalid_tool_ref's "invalid-no-dot" is a bare tool name, which without a
// catalog is a warning (resolved at startup, as in ToolHive); parameterized_deploy gives the integer
// "replicas" the string default "3"; resilient_deploy (retryCount) is valid.
var chainsawCodes = map[string][]string{
	"deploy_and_verify":    {"unknown_param@37:30", "unknown_param@38:31", "unknown_param@45:31"},
	"invalid_duplicate":    {"duplicate_step@94:19"},
	"invalid_tool_ref":     {"unresolved_tool_ref@132:21"},
	"circular_workflow":    {"dependency_cycle@166:17"},
	"parameterized_deploy": {"default_type@208:26"},
	"resilient_deploy":     nil,
}

// TestCorpusChainsaw checks the definitions that the chainsaw scenario
// embeds under "resource:". Each block is cut out of the file as text,
// de-indented and parsed on its own; positions are shifted back so they
// name lines and columns of chainsaw-test.yaml.
func TestCorpusChainsaw(t *testing.T) {
	path := filepath.Join(corpusDir, "test/e2e/chainsaw/operator/single-tenancy/test-scenarios/vmcp/chainsaw-test.yaml")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	got := map[string][]string{}
	for i, l := range lines {
		if strings.TrimSpace(l) != "resource:" {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " "))
		first := i + 1
		inner := len(lines[first]) - len(strings.TrimLeft(lines[first], " "))
		var block []string
		for j := first; j < len(lines); j++ {
			lj := lines[j]
			if strings.TrimSpace(lj) != "" && len(lj)-len(strings.TrimLeft(lj, " ")) <= indent {
				break
			}
			if len(lj) >= inner {
				lj = lj[inner:]
			}
			block = append(block, lj)
		}
		text := strings.Join(block, "\n")
		if !strings.Contains(text, "kind: VirtualMCPCompositeToolDefinition") || !strings.Contains(text, "steps:") {
			continue
		}
		f, pd := parser.Parse("chainsaw-test.yaml", []byte(text))
		wfs, cd := Check([]*parser.File{f}, Options{})
		if len(f.Workflows) != 1 {
			t.Fatalf("block at line %d holds %d workflows; want 1", first+1, len(f.Workflows))
		}
		name, _ := f.Workflows[0].Name.Str()
		got[name] = nil
		for _, d := range append(pd, cd...) {
			got[name] = append(got[name], fmt.Sprintf("%s@%d:%d", d.Code, d.Pos.Line+first, d.Pos.Col+inner))
		}
		sort.Strings(got[name])
		if len(wfs) == 0 && len(got[name]) == 0 {
			t.Errorf("%s: dropped without a diagnostic", name)
		}
	}
	if diff := cmp.Diff(chainsawCodes, got); diff != "" {
		t.Errorf("chainsaw definitions differ (-want +got):\n%s", diff)
	}
}

// TestSnippetsWellFormed runs the documentation snippets (many are
// fragments) through parse and check: whatever they produce, every
// diagnostic must name a code, a message and a position in the snippet.
func TestSnippetsWellFormed(t *testing.T) {
	files, _ := filepath.Glob("../testdata/corpus/toolhive/snippets/*.yaml")
	if len(files) == 0 {
		t.Fatal("no snippets found")
	}
	for _, path := range files {
		_, diags := checkFile(t, path, Options{})
		name := filepath.Base(path)
		for _, d := range diags {
			if d.Code == "" || d.Message == "" || d.Pos.File != name || d.Pos.Line < 1 || d.Pos.Col < 1 {
				t.Errorf("%s: malformed diagnostic %+v", name, d)
			}
			if strings.Contains(d.Message, "<no value>") || strings.Contains(d.Message, "%!") {
				t.Errorf("%s: garbled message %q", name, d.Message)
			}
		}
	}
}
