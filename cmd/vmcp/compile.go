package main

import (
	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
)

// compilePlan compiles the workflow sources (YAML or plan.json) with the
// backends' live tool schemas, so tool references and argument types are
// checked against what the backends really offer, bare and aggregated tool
// names are resolved, and annotations are derived from the steps' tools
// (plan.json included: compiler.Compile runs checker.CheckPlan on it). It
// returns the source texts for printing diagnostics with excerpts.
// maxIterations is the server-wide forEach cap, limits.maxIterations.
// With a nil catalog nothing is checked against the backends.
func compilePlan(paths []string, tools *catalog.Catalog, maxIterations int) (*ir.Plan, diag.List, diag.Sources) {
	inputs, err := compiler.Load(paths)
	if err != nil {
		var l diag.List
		l.Errorf(ir.Pos{}, "", "load", "%v", err)
		return nil, l, nil
	}
	plan, diags := compiler.Compile(inputs, compiler.Options{Tools: tools, MaxIterations: maxIterations})
	return plan, diags, compiler.Sources(inputs)
}
