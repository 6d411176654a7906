package compiler

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/diag"
)

// corpusOutcome is the end-to-end result of compiling one published file:
// the workflows it yields ("name: N steps, L levels"), or the distinct
// diagnostic codes that stop it. Warnings are listed with a "warning:"
// prefix.
type corpusOutcome struct {
	Workflows []string
	Codes     []string
}

const corpusDir = "../testdata/corpus/toolhive"

// corpusWant covers every file under upstream/ and every snippet that is a
// complete definition (a VirtualMCPCompositeToolDefinition document, or a
// config with a top-level composite tools list). The other snippets are
// fragments (a few steps, a spec: without its header); the parser and
// checker tests cover them.
var corpusWant = map[string]corpusOutcome{
	// The upgrade guide's sample resources: valid, with a warning that a
	// hyphenated step id cannot be read as .steps.step-1.
	"upstream/docs/operator/upgrade-guide/crs-v1alpha1.yaml": {
		Workflows: []string{"test_workflow: 1 steps, 1 levels"}, Codes: []string{"warning:step_id_hyphen"}},
	"upstream/docs/operator/upgrade-guide/crs-v1beta1.yaml": {
		Workflows: []string{"test_workflow: 1 steps, 1 levels"}, Codes: []string{"warning:step_id_hyphen"}},
	// ToolHive's own examples name tools without a backend prefix (bare
	// names, or the aggregated yardstick-streamable_echo), which without a
	// catalog are warnings resolved at startup; two read .timestamp, which
	// no template context provides, and write {action: abort, maxRetries: 2},
	// which retries nothing (in ToolHive as in vmcp): a warning.
	"upstream/examples/operator/virtual-mcps/composite_tool_complex.yaml": {
		Codes: []string{"unknown_template_root", "warning:retries_without_retry", "warning:unresolved_tool_ref"}},
	"upstream/examples/operator/virtual-mcps/composite_tool_simple.yaml": {
		Codes: []string{"unknown_template_root", "warning:retries_without_retry", "warning:unresolved_tool_ref"}},
	"upstream/examples/operator/virtual-mcps/composite_tool_with_elicitations.yaml": {
		Workflows: []string{"interactive_deployment: 5 steps, 5 levels"}, Codes: []string{"warning:unresolved_tool_ref"}},
	// The composite section of this config is commented out.
	"upstream/examples/vmcp-config.yaml": {Codes: []string{"warning:no_workflows"}},
	// The e2e scenario embeds its definitions inside script strings, so
	// the file itself holds no workflow documents.
	"upstream/test/e2e/chainsaw/operator/single-tenancy/test-scenarios/vmcp/chainsaw-test.yaml": {
		Codes: []string{"warning:no_workflows"}},

	"snippets/docs__operator__advanced-workflow-patterns.md__L34.yaml": {
		Workflows: []string{"investigate_incident: 5 steps, 3 levels"}},
	"snippets/docs__operator__advanced-workflow-patterns.md__L310.yaml": {
		Codes: []string{"missing_field"}}, // no description
	"snippets/docs__operator__composite-tools-quick-reference.md__L8.yaml": {
		Workflows: []string{"my_workflow_name: 1 steps, 1 levels"}},
	"snippets/docs__operator__virtualmcpcompositetooldefinition-guide.md__L30.yaml": {
		Codes: []string{"missing_field"}}, // no steps
	"snippets/docs__operator__virtualmcpcompositetooldefinition-guide.md__L504.yaml": {
		Workflows: []string{"deploy_app: 1 steps, 1 levels"}},
	"snippets/docs__operator__virtualmcpcompositetooldefinition-guide.md__L537.yaml": {
		Workflows: []string{"deploy_and_verify: 4 steps, 4 levels"}},
	"snippets/docs__operator__virtualmcpcompositetooldefinition-guide.md__L611.yaml": {
		Workflows: []string{"investigate_incident: 5 steps, 3 levels"}},
	"snippets/docs__operator__virtualmcpcompositetooldefinition-guide.md__L695.yaml": {
		Workflows: []string{"canary_deployment: 7 steps, 7 levels"}},
	"snippets/pkg__vmcp__config__yaml_loader_test.go__L222.yaml": {
		Workflows: []string{"deploy_workflow: 2 steps, 2 levels"}},
	"snippets/pkg__vmcp__config__yaml_loader_test.go__L329.yaml": {
		Workflows: []string{"test_tool: 1 steps, 1 levels"}},
}

// isCompleteDefinition says whether a snippet is a whole source file.
func isCompleteDefinition(src []byte) bool {
	s := string(src)
	return strings.Contains(s, "kind: VirtualMCPCompositeToolDefinition") ||
		strings.HasPrefix(s, "compositeTools:") || strings.Contains(s, "\ncompositeTools:") ||
		strings.HasPrefix(s, "composite_tools:") || strings.Contains(s, "\ncomposite_tools:")
}

func TestCorpus(t *testing.T) {
	// The table must cover exactly the files on disk that qualify.
	var found []string
	err := filepath.WalkDir(filepath.Join(corpusDir, "upstream"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(corpusDir, p)
			found = append(found, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	snippets, _ := filepath.Glob(filepath.Join(corpusDir, "snippets", "*.yaml"))
	for _, p := range snippets {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if isCompleteDefinition(src) {
			found = append(found, "snippets/"+filepath.Base(p))
		}
	}
	sort.Strings(found)
	var listed []string
	for k := range corpusWant {
		listed = append(listed, k)
	}
	sort.Strings(listed)
	if diff := cmp.Diff(listed, found); diff != "" {
		t.Fatalf("corpus files and corpusWant disagree (-table +disk):\n%s", diff)
	}

	for _, name := range found {
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(filepath.Join(corpusDir, filepath.FromSlash(name)))
			if err != nil {
				t.Fatal(err)
			}
			in := []Source{{Name: name, Src: src}}
			p, diags := Compile(in, Options{})
			var got corpusOutcome
			seen := map[string]bool{}
			for _, d := range diags {
				code := d.Code
				if d.Severity == diag.Warning {
					code = "warning:" + code
				}
				if !seen[code] {
					seen[code] = true
					got.Codes = append(got.Codes, code)
				}
			}
			sort.Strings(got.Codes)
			if p != nil {
				for _, w := range p.Workflows {
					got.Workflows = append(got.Workflows, fmt.Sprintf("%s: %d steps, %d levels", w.Name, w.Stats.TotalSteps, w.Stats.TotalLevels))
				}
				roundTrip(t, p)
			}
			want := corpusWant[name]
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Compile(%s) outcome mismatch (-want +got):\n%s\ndiagnostics:\n%s", name, diff, printed(diags, in))
			}
			if (p == nil) != diags.HasErrors() {
				t.Errorf("Compile(%s) plan = %v with errors = %v; want a plan exactly when there are no errors", name, p != nil, diags.HasErrors())
			}
		})
	}
}
