package checker

import (
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
//   - chainsaw-test.yaml embeds six definitions. deploy_and_verify reads
//     .params.manifest and .params.namespace without declaring parameters;
//     invalid_duplicate, invalid_tool_ref and circular_workflow are invalid
//     on purpose; parameterized_deploy gives the integer "replicas" the
//     string default "3"; resilient_deploy (retryCount) is valid.
//   - the simple and complex examples call tools without a backend
//     (tool: fetch, tool: echo) and read {{.timestamp}}, which no template
//     context provides.
//   - the elicitation example writes yardstick-streamable_echo, the
//     prefixed name of a re-exported tool, not backend.tool.
//   - the upgrade-guide streams name a step "step-1": valid, but templates
//     could only read it through index, hence the warning.
//   - vmcp-config.yaml has its composite tools commented out.
var corpusCodes = map[string][]string{
	"test/e2e/chainsaw/operator/single-tenancy/test-scenarios/vmcp/chainsaw-test.yaml": {
		"default_type", "dependency_cycle", "duplicate_step", "invalid_tool_ref", "unknown_param"},
	"examples/operator/virtual-mcps/composite_tool_with_elicitations.yaml": {"invalid_tool_ref"},
	"examples/operator/virtual-mcps/composite_tool_simple.yaml":            {"invalid_tool_ref", "unknown_template_root"},
	"examples/operator/virtual-mcps/composite_tool_complex.yaml":           {"invalid_tool_ref", "unknown_template_root"},
	"examples/vmcp-config.yaml":                                            nil,
	"docs/operator/upgrade-guide/crs-v1alpha1.yaml":                        {"step_id_hyphen"},
	"docs/operator/upgrade-guide/crs-v1beta1.yaml":                         {"step_id_hyphen"},
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
// its own MCPServer provides: the prefixed tool name gets a precise hint.
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
	_, diags := Check([]*parser.File{f}, Options{Tools: cat})
	var lines []int
	for _, d := range diags {
		if d.Code != CodeInvalidToolRef || !strings.Contains(d.Message, "did you mean yardstick-streamable.echo?") {
			t.Errorf("%s: %s: %s; want only invalid_tool_ref with the yardstick-streamable.echo hint", d.Pos, d.Code, d.Message)
		}
		lines = append(lines, d.Pos.Line)
	}
	if diff := cmp.Diff([]int{97, 175, 192}, lines); diff != "" {
		t.Errorf("invalid_tool_ref lines differ (-want +got):\n%s", diff)
	}
}
