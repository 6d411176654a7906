package main

// The JSON Schema of the workflow source format, for editors
// (yaml-language-server, VS Code) to complete and check files as they are
// typed. It is draft-07, the newest draft yaml-language-server fully
// supports; authoring/guide builds it, together with the 2020-12 dialect
// that vmcp serves to agents as vmcp://schema/workflow.json.

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/vmcp-dev/vmcp/authoring/guide"
)

func newSchemaCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of the workflow source format",
		Long: `schema prints a JSON Schema (draft-07) of workflow files: Kubernetes
VirtualMCPCompositeToolDefinition resources, compositeTools configs and bare
workflows, with every field in camelCase and snake_case. Save it and point your editor at it,
for example with a first line in each workflow file:

  # yaml-language-server: $schema=./vmcp.schema.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := writeSchema(cmd.OutOrStdout()); err != nil {
				return failed(err)
			}
			return nil
		},
	}
}

func writeSchema(w io.Writer) error {
	_, err := w.Write(guide.EditorSchema())
	return err
}
