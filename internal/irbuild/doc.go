// Package irbuild builds IR workflows for tests in a few lines: tool,
// forEach and elicitation steps with their dependencies, conditions,
// defaults, error handling and timeouts, and a one-workflow plan. The
// runtime's own tests and its shared semantics suite (runtime/semantictest)
// state their plans with it. Each workflow it builds goes through the
// planner, as a compiled one does, since the runtime trusts the graph
// facts the planner writes.
package irbuild
