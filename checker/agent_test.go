package checker_test

// Diagnostics for an agent to act on (issue 12): an authoring agent reads
// them from vmcp_workflow_check and must be able to fix its draft from
// them alone. These tests pin, for the mistakes agents make most, the whole
// diagnostic (position, YAML path, code, message and fix), all of them from
// one check of one draft; and, over the checker's whole error corpus, that
// every diagnostic has a position, a code and (where the problem is inside
// a workflow) a YAML path.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/diag"
)

func toolsCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	data, err := os.ReadFile("testdata/tools.json")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Read(data)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// agentDiag is a diagnostic as vmcp_workflow_check returns it.
type agentDiag struct {
	Severity, Code string
	Line, Col      int
	Path, Message  string
	Detail         []string
}

func agentView(l diag.List) []agentDiag {
	out := make([]agentDiag, len(l))
	for i, d := range l {
		out[i] = agentDiag{d.Severity.String(), d.Code, d.Pos.Line, d.Pos.Col, d.Path, d.Message, d.Detail}
	}
	return out
}

// One draft with the two mistakes (a racy read and a wrong
// argument name) and four more: every one comes back from one check, with
// its line, path and fix.
func TestAgentDraftDiagnostics(t *testing.T) {
	const draft = `name: file_bug
description: Search for duplicates, then file an issue
parameters:
  title: {type: string, required: true}
steps:
  - id: fetch
    tool: github.search
    arguments: {q: "{{.params.title}}"}
  - id: file
    tool: github.create_issue
    arguments:
      owner: acme
      repo: app
      titel: "{{.params.title}}"
      body: "duplicates: {{.steps.fetch.output.total_count}}"
      milestone: soon
  - id: ping
    tool: yardstick-streamable.echo
    arguments: {}
    dependsOn: [fech]
  - id: tell
    tool: github.serch
`
	_, diags := compiler.Compile([]compiler.Source{{Name: "draft.yaml", Src: []byte(draft)}}, compiler.Options{Tools: toolsCatalog(t)})
	want := []agentDiag{
		{"error", "missing_argument", 11, 5, "steps[1].arguments", `tool github.create_issue requires argument "title" (string)`,
			[]string{`add title: "..." to the arguments`}},
		{"error", "unknown_argument", 14, 7, "steps[1].arguments.titel", `tool github.create_issue has no argument "titel"; did you mean title?`,
			[]string{"its arguments are: body (string), draft (boolean), labels (array), meta (object), milestone (integer), owner (string, required), repo (string, required), title (string, required)"}},
		{"error", "missing_dependency", 15, 28, "steps[1].arguments.body", `step "file" reads the output of "fetch" but does not depend on it, so it may run first`,
			[]string{"add dependsOn: [fetch]"}},
		{"error", "argument_type", 16, 18, "steps[1].arguments.milestone", `argument "milestone" of tool github.create_issue must be integer, not a string`,
			[]string{`write an integer such as 10, or a template that yields one, such as "{{.params.x}}"`}},
		{"error", "missing_argument", 19, 5, "steps[2].arguments", `tool yardstick-streamable.echo requires argument "input" (string)`,
			[]string{`add input: "..." to the arguments`}},
		{"error", "unknown_step", 20, 17, "steps[2].dependsOn[0]", `unknown step "fech"; did you mean fetch?`, nil},
		{"error", "unknown_tool", 22, 11, "steps[3].tool", `backend "github" has no tool "serch"; did you mean search?`, nil},
	}
	if diff := cmp.Diff(want, agentView(diags)); diff != "" {
		t.Errorf("diagnostics of the draft differ (-want +got):\n%s", diff)
	}
}

// The fixes an agent needs when no close name exists: the list to choose
// from, and the declaration to add.
func TestAgentDiagnosticsWithoutSuggestion(t *testing.T) {
	const draft = `name: lists
description: Names nothing close to a real one
parameters:
  n: {type: integer, default: lots}
steps:
  - id: a
    tool: github.frobnicate
    arguments: {q: "{{.params.zzz}}"}
    wibble: 1
  - id: b
    tool: github.search
    dependsOn: [qqqq]
    collection: [1]
  - id: c
    type: elicitation
    message: ok?
`
	_, diags := compiler.Compile([]compiler.Source{{Name: "draft.yaml", Src: []byte(draft)}}, compiler.Options{Tools: toolsCatalog(t)})
	wantDetail := map[string]string{
		"unknown_tool":      "the tools of github are create_issue, search",
		"unknown_field":     "the fields of a step are id, type, tool, arguments, dependsOn,",
		"unknown_step":      "the steps are a, b, c",
		"unknown_param":     "declared parameters: n\nor declare it: parameters: {zzz: {type: string, required: true}}",
		"missing_field":     "add schema: {type: object, properties: {answer: {type: string}}}",
		"field_not_allowed": "remove it, or make this a type: forEach step, which takes collection",
		"default_type":      "make the default an integer such as 10, or change the type",
	}
	seen := map[string]bool{}
	for _, d := range diags {
		want, ok := wantDetail[d.Code]
		if !ok {
			t.Errorf("unexpected %s: %s", d.Code, d.Message)
			continue
		}
		seen[d.Code] = true
		if got := strings.Join(d.Detail, "\n"); !strings.Contains(got, want) {
			t.Errorf("%s detail = %q; want it to contain %q", d.Code, got, want)
		}
	}
	for code := range wantDetail {
		if !seen[code] {
			t.Errorf("no %s diagnostic; want one", code)
		}
	}
}

// Codes reported for a whole file or document, which have no YAML path
// inside a workflow.
var documentLevel = map[string]bool{
	"yaml_syntax": true, "not_a_mapping": true, "invalid_utf8": true, "missing_spec": true,
	"no_workflows": true, "duplicate_workflow": true, "workflow_cycle": true,
}

// Every diagnostic of the error corpus has a position and a code, and a
// YAML path unless it is about a whole document.
func TestEveryDiagnosticIsPositioned(t *testing.T) {
	files, err := filepath.Glob("testdata/errors/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no error corpus: %v", err)
	}
	cat := toolsCatalog(t)
	n := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		opts := compiler.Options{}
		if strings.HasPrefix(filepath.Base(f), "catalog") {
			opts.Tools = cat
		}
		_, diags := compiler.Compile([]compiler.Source{{Name: f, Src: src}}, opts)
		for _, d := range diags {
			n++
			if d.Pos.Line < 1 || d.Pos.Col < 1 || d.Code == "" {
				t.Errorf("%s: %s diagnostic without a position or code: %+v", f, d.Code, d)
			}
			// A field missing from the workflow mapping itself is at the
			// workflow's root, whose path is empty.
			rootField := d.Code == "missing_field" && strings.HasPrefix(d.Message, "workflow is missing")
			if d.Path == "" && !documentLevel[d.Code] && !rootField {
				t.Errorf("%s: %s: %s diagnostic has no YAML path: %s", f, d.Pos, d.Code, d.Message)
			}
		}
	}
	if n < 100 {
		t.Errorf("the error corpus gave %d diagnostics; want the whole corpus (over 100)", n)
	}
}
