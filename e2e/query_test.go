package e2e

// A query with a named input through a real vmcp run process and the
// test backend process: two steps' outputs meet in one query, and the
// composite tool returns the join.

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const queryJoinConfig = `
backends:
  tb: {command: "${TB}"}
compositeTools:
  - name: admin_users
    description: The users bound to a role that may write
    steps:
      - id: bindings
        tool: tb.echo
        arguments: {text: '[{"user": "ann", "role": "editor"}, {"user": "bob", "role": "viewer"}, {"user": "cy", "role": "admin"}]'}
      - id: roles
        tool: tb.echo
        arguments: {text: '[{"name": "admin", "verbs": ["write"]}, {"name": "editor", "verbs": ["read", "write"]}, {"name": "viewer", "verbs": ["read"]}]'}
    output:
      properties:
        users:
          type: array
          value: |-
            {{query "[?contains($writers, role)].user" (fromJson .steps.bindings.output.text)
              "writers" (query "[?contains(verbs, 'write')].name" (fromJson .steps.roles.output.text))}}
`

func TestQueryNamedInputJoin(t *testing.T) {
	cfg := writeConfig(t, queryJoinConfig, "")
	c, _ := stdioVMCP(t, cfg)
	res := mustCall(t, c, "admin_users", map[string]any{})
	if res.IsError {
		t.Fatalf("admin_users failed: %v", res.Content)
	}
	var got struct{ Users []string }
	structured(t, res, &got)
	if diff := cmp.Diff([]string{"ann", "cy"}, got.Users); diff != "" {
		t.Errorf("admin_users users (-want +got):\n%s", diff)
	}
}
