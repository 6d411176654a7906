// Package checker turns parsed workflow sources into checked workflows.
//
// In: the parser.File values of one compilation, and Options (a tool
// catalog, or nil). Out: one ir.Workflow per workflow that has no errors,
// in file order with Steps in source order (Step.Index is the source
// index, Step.Deps the sorted indexes of direct dependencies), and a
// diag.List with every problem found, each with a severity, an exact
// position, a YAML path, a stable code (the Code* constants) and a
// message. Entry point: Check.
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
// Output with its JSON Schema; MaySkip; and the defaults: workflow timeout
// 30m, step timeout 5m, maxParallel 10, failureMode abort, forEach itemVar
// "item", maxParallel 10 and maxIterations 100 (or Options.MaxIterations,
// limits.maxIterations, when that is lower), elicitation onDecline and
// onCancel abort, and retryDelay 1s when a step retries. A literal
// collection becomes ForEach.Items, an ir.Value like arguments. The retry
// tuning fields (maxDelay, multiplier, attemptTimeout, retryOn) stay zero
// when not given, which the runtime reads as their defaults.
//
// Decisions where the sources disagree:
//
//   - maxRetries is accepted with every onError action. ToolHive's own
//     examples write {action: abort, maxRetries: 2}; it means "retry up to
//     maxRetries times, then apply the action" (abort or continue), and
//     with action retry, "retry, then let the workflow's failureMode
//     decide". action: retry without maxRetries retries 3 times. Values
//     over 10 are a warning and are capped at 10.
//   - Step ids may be template field names (letters, digits, '_') or
//     workflow-style names that contain '-'. An id with '-' is a warning,
//     because templates cannot write .steps.my-id and must use
//     {{index .steps "my-id" "output"}}.
//   - A condition may be a template or the literal true/false.
//   - Reads of an elicitation's output are checked against the fields its
//     schema asks for, and reads of a forEach's output against iterations,
//     count, completed and failed.
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
// graph, cycles, defaultResults rule), templates.go (template parsing and
// reference extraction), query.go (literal JMESPath expressions of the
// query function), refs.go (reference rules), values.go (argument
// and var trees), tools.go (catalog checks), output.go, errors.go (all
// wording), suggest.go ("did you mean").
package checker
