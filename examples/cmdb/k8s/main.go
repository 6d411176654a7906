package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/examples/cmdb/cluster"
	"github.com/vmcp-dev/vmcp/examples/cmdb/fake"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cmdb k8s:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("k8s", flag.ContinueOnError)
	var c cluster.Config
	fs.IntVar(&c.Kinds, "kinds", cluster.Paper.Kinds, "resource kinds (22 to 40)")
	fs.IntVar(&c.Namespaces, "namespaces", cluster.Paper.Namespaces, "namespaces")
	fs.IntVar(&c.Nodes, "nodes", cluster.Paper.Nodes, "worker nodes")
	delay, err := fake.Flag(fs, "latency", "CMDB_K8S_LATENCY")
	if err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	cl, err := cluster.Generate(c)
	if err != nil {
		return err
	}
	api := &api{cl: cl, delay: delay}
	s, err := fake.NewServer("cmdb-k8s")
	if err != nil {
		return err
	}
	s.AddTool(mcp.NewTool("get_cluster",
		mcp.WithDescription("The cluster itself: its uid and name"),
		mcp.WithReadOnlyHintAnnotation(true),
	), api.getCluster)
	s.AddTool(mcp.NewTool("api_resources",
		mcp.WithDescription("The resource kinds the API serves, and whether each is namespaced"),
		mcp.WithReadOnlyHintAnnotation(true),
	), api.apiResources)
	s.AddTool(mcp.NewTool("list_resources",
		mcp.WithDescription("List the objects of one kind, in one namespace for a namespaced kind"),
		mcp.WithString("kind", mcp.Required(), mcp.Description("Resource kind, e.g. Pod")),
		mcp.WithString("namespace", mcp.Description("Namespace; required for a namespaced kind, refused for a cluster-scoped one")),
		mcp.WithReadOnlyHintAnnotation(true),
	), api.listResources)
	return fake.ServeStdio(s)
}

type api struct {
	cl    *cluster.Cluster
	delay *fake.Delay
}

func (a *api) getCluster(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if err := a.delay.Wait(ctx); err != nil {
		return nil, err
	}
	return mcp.NewToolResultStructuredOnly(a.cl.Self), nil
}

func (a *api) apiResources(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if err := a.delay.Wait(ctx); err != nil {
		return nil, err
	}
	kinds := make([]map[string]any, len(a.cl.Kinds))
	for i, k := range a.cl.Kinds {
		kinds[i] = map[string]any{"name": k.Name, "namespaced": k.Namespaced}
	}
	return mcp.NewToolResultStructuredOnly(map[string]any{"kinds": kinds}), nil
}

func (a *api) listResources(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if err := a.delay.Wait(ctx); err != nil {
		return nil, err
	}
	kindName, err := req.RequireString("kind")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	ns := req.GetString("namespace", "")
	kind, ok := a.cl.Kind(kindName)
	if !ok {
		names := make([]string, len(a.cl.Kinds))
		for i, k := range a.cl.Kinds {
			names[i] = k.Name
		}
		return mcp.NewToolResultError(fmt.Sprintf("unknown kind %q; the API serves %s", kindName, strings.Join(names, ", "))), nil
	}
	switch {
	case kind.Namespaced && ns == "":
		return mcp.NewToolResultError(fmt.Sprintf("%s is namespaced: give a namespace", kind.Name)), nil
	case !kind.Namespaced && ns != "":
		return mcp.NewToolResultError(fmt.Sprintf("%s is cluster-scoped: leave namespace out", kind.Name)), nil
	case ns != "" && !a.hasNamespace(ns):
		return mcp.NewToolResultError(fmt.Sprintf("namespace %q not found", ns)), nil
	}
	items := a.cl.List(kind.Name, ns)
	return mcp.NewToolResultStructuredOnly(map[string]any{
		"kind": kind.Name, "namespace": ns, "count": len(items), "items": items,
	}), nil
}

func (a *api) hasNamespace(ns string) bool {
	for _, n := range a.cl.NamespaceNames() {
		if n == ns {
			return true
		}
	}
	return false
}
