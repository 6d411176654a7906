// Package compiler is the driver of the vmcp toolchain: it turns workflow
// sources into one execution plan.
//
// In: [Source] values (a name and bytes), usually from [Load], which
// expands files, directories and globs. A source is a workflow file in any
// of the accepted forms (Kubernetes resources, a compositeTools config, JSON
// of either) or a compiled plan (JSON whose version is ir.Version,
// "vmcp.plan/v3"), whose workflows are merged in; with a tool catalog
// (Options.Tools) they first get the checker's catalog checks
// (checker.CheckPlan: tool names resolved, unknown tools, arguments, the
// annotation floor). Out: an *ir.Plan and a sorted,
// de-duplicated, capped diag.List; the plan is nil when there are errors.
//
// Entry point: [Compile], which reads like a recipe: parse everything, stop
// on errors; check everything together, stop on errors; plan; merge
// precompiled plans and reject duplicate workflow names. [Sources] gives
// diag.Print the text it needs to show source lines and carets.
package compiler
