// Package plangraph draws a compiled workflow's plan as a deterministic,
// self-contained SVG document: steps laid out by level in columns from
// left to right, dependency edges routed orthogonally between them, the
// critical path highlighted, loop bodies nested inside their forEach
// step's box (at any depth), and the finally steps in a group of their
// own.
//
// In: a planned *ir.Workflow (steps in plan order with Deps, Levels and
// CriticalPath filled in by the planner; loop bodies and Finally
// likewise). Out: SVG bytes that are the same for the same plan, with
// stable hooks for scripts and tests: data-step="PATH" on every step
// (PATH is the step id, or for a loop-body step the enclosing loop ids
// and its own joined by "/", e.g. per_namespace/per_kind/list_kind),
// data-from and data-to on every edge, and the class "critical" on the
// critical path's nodes and edges (Workflow.CriticalPath, and inside a
// loop that is on it, the body's own ForEach.CriticalPath, which extends
// it; the finally steps have no critical path in the plan and get none).
//
// Entry points: [SVG] draws a workflow; [Lay] computes the drawing's
// geometry ([Layout]) for callers that need node positions, and
// [Layout.WriteSVG] writes it. `vmcpc plan --format svg` and the web
// console's workflow page both print exactly what SVG writes. The layout
// algorithm is explained at the top of layout.go, the text measurement
// at the top of text.go.
package plangraph
