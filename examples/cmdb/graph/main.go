package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/examples/cmdb/fake"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cmdb graph:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("graph", flag.ContinueOnError)
	delay, err := fake.Flag(fs, "latency", "CMDB_GRAPH_LATENCY")
	if err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	g := &graphServer{store: newStore(), delay: delay}
	s, err := fake.NewServer("cmdb-graph")
	if err != nil {
		return err
	}
	object := func(props map[string]any, required ...string) map[string]any {
		return map[string]any{"type": "object", "properties": props, "required": required}
	}
	str := map[string]any{"type": "string"}
	s.AddTool(mcp.NewTool("merge_nodes",
		mcp.WithDescription("Merge nodes by uid (Cypher MERGE): new ones are created, existing ones updated"),
		mcp.WithArray("nodes", mcp.Required(), mcp.Items(object(map[string]any{"uid": str, "label": str, "name": str, "namespace": str}, "uid", "label"))),
		mcp.WithIdempotentHintAnnotation(true),
	), g.mergeNodes)
	s.AddTool(mcp.NewTool("merge_relationships",
		mcp.WithDescription("Merge relationships by (from, type, to); a missing end becomes an unlabeled node"),
		mcp.WithArray("relationships", mcp.Required(), mcp.Items(object(map[string]any{"from": str, "type": str, "to": str}, "from", "type", "to"))),
		mcp.WithIdempotentHintAnnotation(true),
	), g.mergeRelationships)
	s.AddTool(mcp.NewTool("counts",
		mcp.WithDescription("Count the graph's nodes and relationships, by label and by type"),
		mcp.WithReadOnlyHintAnnotation(true),
	), g.counts)
	return fake.ServeStdio(s)
}

type graphServer struct {
	store *store
	delay *fake.Delay
}

// decode reads the argument key into out (a pointer to a slice).
func decode(req mcp.CallToolRequest, key string, out any) error {
	v, ok := req.GetArguments()[key]
	if !ok {
		return fmt.Errorf("argument %q is required", key)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("argument %q: %v", key, err)
	}
	return nil
}

func (g *graphServer) mergeNodes(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if err := g.delay.Wait(ctx); err != nil {
		return nil, err
	}
	var nodes []Node
	if err := decode(req, "nodes", &nodes); err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	created, err := g.store.mergeNodes(nodes)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultStructuredOnly(map[string]any{"merged": len(nodes), "created": created}), nil
}

func (g *graphServer) mergeRelationships(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if err := g.delay.Wait(ctx); err != nil {
		return nil, err
	}
	var rels []Relationship
	if err := decode(req, "relationships", &rels); err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	created, err := g.store.mergeRelationships(rels)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultStructuredOnly(map[string]any{"merged": len(rels), "created": created}), nil
}

func (g *graphServer) counts(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if err := g.delay.Wait(ctx); err != nil {
		return nil, err
	}
	return mcp.NewToolResultStructuredOnly(g.store.counts()), nil
}
