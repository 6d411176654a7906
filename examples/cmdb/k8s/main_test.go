package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/examples/cmdb/cluster"
	"github.com/vmcp-dev/vmcp/examples/cmdb/fake"
)

func newAPI(t *testing.T) *api {
	t.Helper()
	cl, err := cluster.Generate(cluster.Paper)
	if err != nil {
		t.Fatal(err)
	}
	return &api{cl: cl, delay: &fake.Delay{}}
}

func list(t *testing.T, a *api, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = "list_resources"
	req.Params.Arguments = args
	res, err := a.listResources(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestListResourcesAnswersFromTheCluster(t *testing.T) {
	a := newAPI(t)
	res := list(t, a, map[string]any{"kind": "Pod", "namespace": "payments"})
	if res.IsError {
		t.Fatalf("list Pod in payments: %s", mcp.GetTextFromContent(res.Content[0]))
	}
	// The answer as a client decodes it: JSON.
	b, _ := json.Marshal(res.StructuredContent)
	var got struct {
		Count int              `json:"count"`
		Items []cluster.Object `json:"items"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := a.cl.List("Pod", "payments")
	if got.Count != len(want) || len(want) == 0 {
		t.Errorf("count = %d; want %d (and more than 0)", got.Count, len(want))
	}
	if d := cmp.Diff(want, got.Items); d != "" {
		t.Errorf("items (-cluster +answer):\n%s", d)
	}
}

func TestListResourcesRefusesBadRequests(t *testing.T) {
	a := newAPI(t)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"kind": "Pods", "namespace": "payments"}, `unknown kind "Pods"; the API serves Node, Namespace`},
		{map[string]any{"kind": "Pod"}, "Pod is namespaced: give a namespace"},
		{map[string]any{"kind": "Node", "namespace": "payments"}, "Node is cluster-scoped: leave namespace out"},
		{map[string]any{"kind": "Pod", "namespace": "nope"}, `namespace "nope" not found`},
		{map[string]any{}, "kind"},
	} {
		res := list(t, a, tc.args)
		if !res.IsError {
			t.Errorf("list %v succeeded; want an error", tc.args)
			continue
		}
		if msg := mcp.GetTextFromContent(res.Content[0]); !strings.Contains(msg, tc.want) {
			t.Errorf("list %v = %q; want it to say %q", tc.args, msg, tc.want)
		}
	}
}
