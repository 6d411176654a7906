package authoring

// The diagnostics the authoring rules add to the compiler's, one
// constructor each, with stable codes. Each says what is wrong and how to
// fix it, for an agent to act on.

import (
	"fmt"
	"strings"

	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
)

// Codes of the authoring diagnostics.
const (
	CodeEmptySource       = "empty_source"
	CodeNotAWorkflow      = "plan_source"
	CodeNoWorkflow        = "no_workflow"
	CodeOneWorkflow       = "one_workflow_per_source"
	CodeBackendNotAllowed = "backend_not_allowed"
	CodeFileWorkflow      = "file_workflow"
	CodeReservedName      = "reserved_name"
)

func errEmptySource(file string) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Error, Pos: ir.Pos{File: file, Line: 1, Col: 1}, Code: CodeEmptySource,
		Message: "the source is empty: send one workflow as YAML or JSON (name, description, steps)"}
}

func errPlanSource(file string) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Error, Pos: ir.Pos{File: file, Line: 1, Col: 1}, Code: CodeNotAWorkflow,
		Message: "the source is a compiled plan: send the workflow's YAML or JSON source instead"}
}

func errNoWorkflow(file string) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Error, Pos: ir.Pos{File: file, Line: 1, Col: 1}, Code: CodeNoWorkflow,
		Message: "the source defines no workflow: write one mapping with name, description and steps (or a compositeTools list of one)"}
}

func errOneWorkflow(pos ir.Pos, path string, first string) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Error, Pos: pos, Path: path, Code: CodeOneWorkflow,
		Message: fmt.Sprintf("a source holds exactly one workflow, and %q came first: save this one with a source of its own", first)}
}

func errBackendNotAllowed(pos ir.Pos, path, backend string, allowed []string) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Error, Pos: pos, Path: path, Code: CodeBackendNotAllowed,
		Message: fmt.Sprintf("authored workflows may not call backend %q: call a tool of %s instead (authoring.backends), or ask the operator to add %s there",
			backend, strings.Join(allowed, ", "), backend)}
}

func errCalleeNotAllowed(pos ir.Pos, path, callee, backend string, allowed []string) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Error, Pos: pos, Path: path, Code: CodeBackendNotAllowed,
		Message: fmt.Sprintf("workflow %q calls backend %q, which authored workflows may not reach (authoring.backends: %s): "+
			"call the tools of %s yourself, or ask the operator to add %s there", callee, backend, strings.Join(allowed, ", "), strings.Join(allowed, ", "), backend)}
}

func errFileWorkflow(pos ir.Pos, path, name string, from ir.Pos) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Error, Pos: pos, Path: path, Code: CodeFileWorkflow,
		Message: fmt.Sprintf("workflow %q comes from files (%s) and cannot be replaced by an authored one: choose another name", name, from)}
}

func errDeviceName(pos ir.Pos, path, name string) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Error, Pos: pos, Path: path, Code: CodeReservedName,
		Message: fmt.Sprintf("the name %q is a device name on Windows, where its file in authoring.dir could not be checked out: choose another name (%s_check, say)", name, name)}
}

func errReservedName(pos ir.Pos, path, name string) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Error, Pos: pos, Path: path, Code: CodeReservedName,
		Message: fmt.Sprintf("the name %q is taken by another tool of this server (names starting with vmcp_ are reserved): choose another name", name)}
}
