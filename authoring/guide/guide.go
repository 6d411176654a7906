package guide

import _ "embed"

// The MCP names under which the server publishes what this package holds.
const (
	DocsURI    = "vmcp://docs/workflows"
	DocsMIME   = "text/markdown"
	SchemaURI  = "vmcp://schema/workflow.json"
	SchemaMIME = "application/schema+json"
	PromptName = "design_workflow"
)

//go:embed guide.md
var markdown string

// Markdown returns the authoring guide: every workflow and step field with
// its type and default, a small working example of each construct and the
// common mistakes with their diagnostic codes and fixes.
func Markdown() string { return markdown }
