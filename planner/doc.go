// Package planner turns checked workflows into an execution plan.
//
// In: []*ir.Workflow from checker.Check, with steps in source order,
// Step.Index equal to the source index and Step.Deps holding sorted source
// indexes. Out: an *ir.Plan whose workflows have their steps in a stable
// topological order (Index, Deps remapped), with Dependents, Level and
// Remaining on every step and Levels, Stats, CriticalPath and Sinks on every
// workflow (the finally steps are planned the same way, as a graph of their
// own, with FinallyLevels and FinallyBound), plus diagnostics for graphs the checker should have rejected.
// Entry point: [Plan]. The algorithms are explained at the top of
// planner.go.
package planner
