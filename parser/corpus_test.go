package parser

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// corpusDir holds published ToolHive workflow files (see its README).
const corpusDir = "../testdata/corpus/toolhive"

// corpusFiles lists the YAML and JSON files of the corpus.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(corpusDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch filepath.Ext(p) {
		case ".yaml", ".yml", ".json":
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading corpus: %v", err)
	}
	if len(files) < 50 {
		t.Fatalf("found %d corpus files under %s; want the whole corpus", len(files), corpusDir)
	}
	return files
}

// TestCorpusParses checks that every corpus file is valid YAML to us, that
// every string scalar in it maps back to the file exactly, and that every
// rune of every template maps to the same rune in the file.
func TestCorpusParses(t *testing.T) {
	for _, p := range corpusFiles(t) {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, diags := Parse(p, src)
		for _, d := range diags {
			if d.Code == CodeSyntax {
				t.Errorf("Parse(%s): %v", p, d)
			}
		}
		docs, _, inexact := parseTree(t, string(src))
		if inexact != 0 {
			t.Errorf("%s: %d string scalars have no exact position mapping", p, inexact)
		}
		templates := 0
		for _, doc := range docs {
			walk(doc, func(n *Node) {
				if s, ok := n.Str(); ok && strings.Contains(s, "{{") {
					templates++
					checkMapping(t, string(src), n)
				}
			})
		}
		if hasTemplateOutsideComments(string(src)) && templates == 0 {
			t.Errorf("%s: found no template strings, but the file has some", p)
		}
	}
}

func hasTemplateOutsideComments(src string) bool {
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") && strings.Contains(line, "{{.") {
			return true
		}
	}
	return false
}

func walk(n *Node, fn func(*Node)) {
	fn(n)
	for _, f := range n.Fields {
		walk(f.Value, fn)
	}
	for _, it := range n.Items {
		walk(it, fn)
	}
}

// TestCorpusUpstream pins what Parse finds in the whole upstream files.
func TestCorpusUpstream(t *testing.T) {
	tests := []struct {
		file string
		want summary
	}{
		{"upstream/examples/operator/virtual-mcps/composite_tool_complex.yaml", summary{
			Workflows: []string{"process_multi_source_data resource=multi-source-data-processor doc=4 steps=8"},
			Skipped: []string{"MCPGroup data-processing-services @25", "MCPServer fetch @35", "MCPServer yardstick-sse @57",
				"MCPServer yardstick-streamable @82", "VirtualMCPServer vmcp-data-processor @288"},
		}},
		{"upstream/examples/operator/virtual-mcps/composite_tool_simple.yaml", summary{
			Workflows: []string{"fetch_and_validate_data resource=fetch-and-validate doc=3 steps=3"},
			Skipped: []string{"MCPGroup my-services @18", "MCPServer fetch @28", "MCPServer yardstick-sse @50",
				"VirtualMCPServer vmcp-simple-composite @159", "empty document  @194"},
		}},
		{"upstream/examples/operator/virtual-mcps/composite_tool_with_elicitations.yaml", summary{
			Workflows: []string{"interactive_deployment resource=interactive-deploy doc=2 steps=5"},
			Skipped: []string{"MCPGroup deployment-services @26", "MCPServer yardstick-streamable @36",
				"VirtualMCPServer vmcp-interactive-deploy @201", "empty document  @238"},
		}},
		{"upstream/examples/vmcp-config.yaml", summary{Skipped: []string{SkippedConfig + "  @18"}}},
		{"upstream/test/e2e/chainsaw/operator/single-tenancy/test-scenarios/vmcp/chainsaw-test.yaml", summary{
			Skipped: []string{"Test vmcp-composite-tool-definition @1"},
		}},
	}
	for _, tc := range tests {
		p := filepath.Join(corpusDir, tc.file)
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, diags := Parse(p, src)
		if diff := cmp.Diff(tc.want, summarize(f, diags)); diff != "" {
			t.Errorf("Parse(%s) (-want +got):\n%s", tc.file, diff)
		}
		if len(f.Unknown) != 0 {
			t.Errorf("Parse(%s) found unknown keys %+v", tc.file, f.Unknown)
		}
	}
}

// TestCorpusStreams checks the two upstream streams with every resource
// kind: one workflow each, after ten other documents.
func TestCorpusStreams(t *testing.T) {
	for _, v := range []string{"v1alpha1", "v1beta1"} {
		p := filepath.Join(corpusDir, "upstream/docs/operator/upgrade-guide/crs-"+v+".yaml")
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, diags := Parse(p, src)
		s := summarize(f, diags)
		if diff := cmp.Diff([]string{"test_workflow resource=test-composite-tool doc=10 steps=1"}, s.Workflows); diff != "" || len(diags) > 0 {
			t.Errorf("Parse(%s) workflows (-want +got):\n%s\ndiagnostics: %v", p, diff, diags)
		}
		if len(f.Skipped) < 10 {
			t.Errorf("Parse(%s) skipped %d documents; want the ten other resources", p, len(f.Skipped))
		}
		for _, k := range f.Skipped {
			if k.Name == "" || k.Kind == "" || !k.Pos.IsValid() {
				t.Errorf("Parse(%s) skipped %+v without kind, name or position", p, k)
			}
		}
	}
}
