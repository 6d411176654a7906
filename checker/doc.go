// Package checker turns parsed workflow sources into checked workflows.
//
// In: the parser.File values of one compilation, and Options (a tool
// catalog, or nil, and the compiled workflows of plan.json inputs, which
// workflow steps may call). CheckPlan gives a compiled ir.Plan the checks that
// need a catalog (plan.go). Out: one ir.Workflow per workflow that has no errors,
// in file order with Steps in source order (Step.Index is the source
// index, Step.Deps the sorted indexes of direct dependencies) and Finally
// likewise (indexes within Finally; finally.go has their rules), and a
// diag.List with every problem found, each with a severity, an exact
// position, a YAML path, a stable code (the Code* constants) and a
// message. Entry points: Check, CheckPlan.
//
// Check never stops at the first error: a broken step does not hide the
// errors of the others, and one workflow's errors do not hide another's.
// The planner fills in levels, statistics, the critical path, sinks and
// dependents; the checker leaves them empty.
//
// What the checker fills in: the normalised InputSchema (both parameter
// forms become {type: object, properties, required}); templates as
// ir.Template with the position of their first character and Single set
// when the whole string is one action; argument and var trees as ir.Value;
// Output with its JSON Schema; MaySkip; tool references (a bare or
// aggregated name resolved when a catalog is known, else kept as Ref for
// vmcp run to resolve); with a catalog, Annotations derived from the steps'
// tools (annotations.go); and the defaults: workflow timeout
// 30m, step timeout 5m, maxParallel 10, failureMode abort, forEach itemVar
// "item", maxParallel 10 and maxIterations 100 (or Options.MaxIterations,
// limits.maxIterations, when that is lower), elicitation onDecline and
// onCancel abort, and retryDelay 1s when a step retries (action retry). A literal
// collection becomes ForEach.Items, an ir.Value like arguments. The retry
// tuning fields (maxDelay, multiplier, attemptTimeout, retryOn) stay zero
// when not given, which the runtime reads as their defaults.
//
// Decisions where the sources disagree:
//
//   - maxRetries retries only under action: retry, as in ToolHive (whose
//     own examples write {action: abort, maxRetries: 2}, which retries
//     nothing there either). Under another action it is a warning and is
//     dropped from the IR. action: retry without maxRetries retries 3
//     times. Values over 10 are a warning and are capped at 10.
//   - An elicitation timeout over 10m is a warning and is capped at 10m,
//     as in ToolHive.
//   - Step ids may be template field names (letters, digits, '_') or
//     workflow-style names that contain '-'. An id with '-' is a warning,
//     because templates cannot write .steps.my-id and must use
//     {{index .steps "my-id" "output"}}.
//   - A condition may be a template or the literal true/false.
//   - An elicitation's output is ToolHive's {action, content}: reads of
//     .output.content.F are checked against the fields its schema asks for
//     and, where it may continue without an answer, against
//     defaultResults.content. Reads of a forEach's output are checked
//     against ir.ForEachOutputFields (iterations, count, completed, failed,
//     skipped); reads of .steps.X.content against the keys a content map
//     can have. A forEach's inner step may have a condition, checked in the
//     iteration's scope (.forEach) like any other template.
//   - A forEach's body (steps:) is a graph of its own; bodies.go explains
//     what a body step may read and depend on, and how loops nest.
//   - Each elementary dependency cycle is reported once (deps.go explains
//     the fallback for dense tangles).
//   - Output values are computed after the run, so a step that an
//     elicitation's skip_remaining may leave unstarted also needs
//     defaultResults for the fields the output reads (refs.go).
//   - The defaultResults rule (deps.go) is conservative: a guard such as
//     {{if eq .steps.x.status "completed"}} does not exempt a read of
//     .steps.x.output.f; index is the way to read fields that may be absent.
//
// Files: checker.go (driver, workflow fields), params.go (parameters and
// JSON Schema checks), schemafast.go (schemas the meta-schema accepts
// without compiling), steps.go (per-step fields), deps.go (dependency
// graph, cycles, defaultResults rule), bodies.go (loop bodies and their
// scope), templates.go (template parsing and
// reference extraction), query.go (literal JMESPath expressions of the
// query function), refs.go (reference rules), values.go (argument
// and var trees), tools.go (catalog checks: tool names, arguments),
// annotations.go (the annotation safety floor), workflows.go (workflow
// steps: callees, their arguments and outputs, recursion), plan.go (catalog checks of
// compiled plans), output.go, errors.go (all wording; its "did you
// mean" hints come from internal/spell, the one policy the config loader
// uses too).
package checker
