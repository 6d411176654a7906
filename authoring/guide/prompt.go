package guide

// The design_workflow prompt: the steps of the paper's design phase,
// written for an agent, with the tools named as vmcp serves them.

import (
	"fmt"
	"strings"
)

// PromptDescription is the prompt's one-line description for prompts/list.
const PromptDescription = "Design, check and save a vmcp workflow (one composite MCP tool) for a goal, using the backends' real tools"

// PromptArgument is one argument of the design_workflow prompt.
type PromptArgument struct {
	Name        string
	Description string
	Required    bool
}

// PromptArguments returns the prompt's arguments, in order.
func PromptArguments() []PromptArgument {
	return []PromptArgument{
		{Name: "goal", Required: true,
			Description: "What the workflow must do, in plain words, e.g. \"gather logs, metrics and traces of an incident and file a ticket\""},
		{Name: "backends", Required: false,
			Description: "Comma-separated backend names to use (default: any backend vmcp_backend_tools lists)"},
	}
}

// The authoring tools' served names: the prompt walks through them and
// package authoring serves them (one list).
const (
	ToolBackendTools = "vmcp_backend_tools"
	ToolCheck        = "vmcp_workflow_check"
	ToolSave         = "vmcp_workflow_save"
	ToolRun          = "vmcp_workflow_run"
	ToolList         = "vmcp_workflow_list"
	ToolGet          = "vmcp_workflow_get"
	ToolDelete       = "vmcp_workflow_delete"
)

// DesignPrompt returns the prompt's text for a goal and an optional list
// of backends (comma-separated; "" means all). The caller checks that goal
// is not empty.
func DesignPrompt(goal, backends string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Design a vmcp workflow for this goal:\n\n%s\n\n", strings.TrimSpace(goal))
	fmt.Fprintf(&b, "A workflow is one MCP tool made of backend tool calls. You design it once; every later run is one call of the tool it becomes, with no reasoning per step. vmcp's compiler reviews each draft before it is saved.\n\n")
	var names []string
	for _, n := range strings.Split(backends, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	discover := fmt.Sprintf("Call %s to get the tools of every backend, with their input schemas.", ToolBackendTools)
	if len(names) > 0 {
		calls := make([]string, len(names))
		for i, n := range names {
			calls[i] = fmt.Sprintf("%s {backend: %q}", ToolBackendTools, n)
		}
		discover = fmt.Sprintf("Use only the backends %s. Call %s to get their tools, with their input schemas.", strings.Join(names, ", "), strings.Join(calls, " and "))
	}
	steps := []string{
		fmt.Sprintf("Read %s (the authoring guide: every field, an example of each construct, the common mistakes) and, when you need the exact format, %s.", DocsURI, SchemaURI),
		discover + " Use the tool names and argument names exactly as listed; do not guess them.",
		"Write a draft in YAML: name (lowercase, digits, _ or -), description, parameters for what changes between runs, and steps. Steps that do not depend on each other run in parallel; give a step dependsOn for every step whose output it reads. Use forEach for lists, condition with defaultResults for optional steps, onError for flaky calls, and output for a typed result.",
		fmt.Sprintf("Call %s {source: <the draft>}. It returns every diagnostic at once, each with line, column, YAML path, code and a fix. Fix all of them in one revision and check again, until ok is true and no warning is left that you do not mean.", ToolCheck),
		fmt.Sprintf("Optionally call %s {source: <the draft>, arguments: {...}} to run it once without saving it, and read the result.", ToolRun),
		fmt.Sprintf("Call %s {source: <the draft>} (with replace: true to make a new version of a workflow you saved before). It answers {name, version}, and the tool is served at once.", ToolSave),
		"Call the new tool by its name with the arguments of the task. From now on, call it instead of repeating the steps yourself.",
	}
	for i, s := range steps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	fmt.Fprintf(&b, "\n%s lists the saved workflows, %s {name, version?} returns one's source, %s {name} removes one.\n", ToolList, ToolGet, ToolDelete)
	return b.String()
}
