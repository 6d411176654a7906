package runtime_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// joinSource joins two steps' outputs in one query: the role bindings
// with the roles, by role name, through a named input.
const joinSource = `name: admins
description: the users bound to a role that may write
steps:
  - id: bindings
    tool: rbac.list_bindings
  - id: roles
    tool: rbac.list_roles
  - id: report
    tool: chat.post
    dependsOn: [bindings, roles]
    arguments:
      users: |-
        {{query "items[?contains($writers, roleRef.name)].subject" .steps.bindings.output
          "writers" (query "items[?contains(verbs, 'write')].name" .steps.roles.output)}}
`

// A query with a named input joins two real step outputs: the compiled
// plan makes the joining step depend on both (and keeps the template
// through the IR's encoding), and the run passes the joined list, typed,
// to the backend.
func TestQueryJoinsTwoStepOutputs(t *testing.T) {
	p, diags := compiler.Compile([]compiler.Source{{Name: "join.yaml", Src: []byte(joinSource)}}, compiler.Options{})
	if p == nil || len(diags) > 0 {
		t.Fatalf("Compile = %v", diags)
	}
	data, err := ir.Encode(p)
	if err != nil {
		t.Fatal(err)
	}
	if p, err = ir.Decode(data); err != nil {
		t.Fatal(err)
	}
	w := p.Workflows[0]
	report := w.Steps[len(w.Steps)-1]
	if report.ID != "report" || len(report.Deps) != 2 || report.Level != 1 {
		t.Fatalf("step %s: deps %v, level %d; want report after both lists (2 deps, level 1)", report.ID, report.Deps, report.Level)
	}
	be := newScripted(map[string]func(M, int) (*runtime.ToolResult, error){
		"rbac.list_bindings": returns(M{"items": A{
			M{"subject": "ann", "roleRef": M{"name": "editor"}},
			M{"subject": "bob", "roleRef": M{"name": "viewer"}},
			M{"subject": "cy", "roleRef": M{"name": "admin"}},
		}}),
		"rbac.list_roles": returns(M{"items": A{
			M{"name": "admin", "verbs": A{"read", "write", "delete"}},
			M{"name": "editor", "verbs": A{"read", "write"}},
			M{"name": "viewer", "verbs": A{"read"}},
		}}),
		"chat.post": echo,
	})
	e, err := runtime.New(p, runtime.Options{Backend: be})
	if err != nil {
		t.Fatal(err)
	}
	run, err := e.Run(context.Background(), "admins", nil, runtime.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != runtime.RunCompleted {
		t.Fatalf("run %s: %v", run.Status, run.Error)
	}
	if diff := cmp.Diff([]M{{"users": A{"ann", "cy"}}}, be.argsOf("report")); diff != "" {
		t.Errorf("report's arguments (-want +got):\n%s", diff)
	}
}
