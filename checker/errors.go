package checker

// All diagnostic wording lives in this file: one constructor per kind of
// problem, each with a stable code. Messages name the offending thing and,
// where one exists, the fix. They never echo parameter values.

import (
	"fmt"
	"strings"

	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/internal/jmes"
	"github.com/vmcp-dev/vmcp/internal/spell"
	"github.com/vmcp-dev/vmcp/ir"
)

// Diagnostic codes. They are stable: tools and tests match on them.
const (
	CodeUnknownField          = "unknown_field"
	CodeMissingField          = "missing_field"
	CodeWrongType             = "wrong_type"
	CodeInvalidName           = "invalid_name"
	CodeDuplicateWorkflow     = "duplicate_workflow"
	CodeNoSteps               = "no_steps"
	CodeTooManySteps          = "too_many_steps"
	CodeInvalidStepID         = "invalid_step_id"
	CodeStepIDHyphen          = "step_id_hyphen"
	CodeDuplicateStep         = "duplicate_step"
	CodeInvalidStepType       = "invalid_step_type"
	CodeFieldNotAllowed       = "field_not_allowed"
	CodeInvalidToolRef        = "invalid_tool_ref"
	CodeUnresolvedToolRef     = "unresolved_tool_ref"
	CodeAmbiguousToolRef      = "ambiguous_tool_ref"
	CodeUnknownBackend        = "unknown_backend"
	CodeUnknownTool           = "unknown_tool"
	CodeUnknownArgument       = "unknown_argument"
	CodeMissingArgument       = "missing_argument"
	CodeArgumentType          = "argument_type"
	CodeArgumentEnum          = "argument_enum"
	CodeInvalidDuration       = "invalid_duration"
	CodeTimeoutExceeds        = "timeout_exceeds_workflow"
	CodeElicitationTimeout    = "elicitation_timeout"
	CodeInvalidAction         = "invalid_action"
	CodeTooManyRetries        = "too_many_retries"
	CodeRetriesWithoutRetry   = "retries_without_retry"
	CodeOutOfRange            = "out_of_range"
	CodeInvalidFailureMode    = "invalid_failure_mode"
	CodeInvalidSchema         = "invalid_schema"
	CodeSchemaTooLarge        = "schema_too_large"
	CodeInvalidItemVar        = "invalid_item_var"
	CodeInnerStepType         = "inner_step_type"
	CodeInnerDependsOn        = "inner_depends_on"
	CodeUnknownStep           = "unknown_step"
	CodeSelfDependency        = "self_dependency"
	CodeRepeatedDependency    = "repeated_dependency"
	CodeDependencyCycle       = "dependency_cycle"
	CodeNestingTooDeep        = "nesting_too_deep"
	CodeInvalidParameters     = "invalid_parameters"
	CodeInvalidType           = "invalid_type"
	CodeDefaultType           = "default_type"
	CodeUnknownRequired       = "unknown_required"
	CodeInvalidVarName        = "invalid_var_name"
	CodeTemplateSyntax        = "template_syntax"
	CodeUnknownTemplateRoot   = "unknown_template_root"
	CodeUnknownParam          = "unknown_param"
	CodeUnknownVar            = "unknown_var"
	CodeVarReference          = "var_reference"
	CodeForEachOutside        = "foreach_outside"
	CodeUnknownForEachVar     = "unknown_foreach_var"
	CodeUnknownWorkflowField  = "unknown_workflow_field"
	CodeUnknownStepField      = "unknown_step_field"
	CodeUnknownOutputField    = "unknown_output_field"
	CodeUnknownContentKey     = "unknown_content_key"
	CodeOptionalFieldRead     = "optional_field_read"
	CodeWholeSteps            = "whole_steps_ref"
	CodeMissingDependency     = "missing_dependency"
	CodeSelfReference         = "self_reference"
	CodeMissingDefaultResult  = "missing_default_result"
	CodeInvalidAnnotation     = "invalid_annotation"
	CodeUnsafeAnnotation      = "unsafe_annotation"
	CodeConditionNotTemplated = "condition_constant"
	CodeFinallyElicitation    = "finally_elicitation"
	CodeFinallyAbort          = "finally_abort"
	CodeDependsOnFinally      = "depends_on_finally"
	CodeFinallyDependsOnStep  = "finally_depends_on_step"
	CodeFinallyRead           = "finally_read"
	CodeUnknownWorkflow       = "unknown_workflow"
	CodeWorkflowCycle         = "workflow_cycle"
	CodeUnknownCalleeOutput   = "unknown_workflow_output"
	CodeQuerySyntax           = "query_syntax"
	CodeRetryTuning           = "retry_tuning_without_retry"
	CodeInvalidRetryOn        = "invalid_retry_on"
	CodeAttemptTimeout        = "attempt_timeout_exceeds_step"
	CodeQueryFunction         = "query_unknown_function"
	CodeQueryFuncArgument     = "query_function_argument"
	CodeQueryArguments        = "query_arguments"
	CodeQueryVariable         = "query_variable"
	CodeLoopBodyConflict      = "loop_body_conflict"
	CodeLoopTooDeep           = "loop_too_deep"
	CodeItemVarClash          = "item_var_clash"
	CodeBodyStepOutside       = "body_step_outside"
	CodeCrossBodyDependency   = "cross_body_dependency"
	CodeLoopDependency        = "missing_loop_dependency"
	CodeBodyReadsLoop         = "body_reads_own_loop"
	CodeBodyElicitation       = "body_elicitation"
	CodeInvalidIdempotent     = "invalid_idempotent"
	CodeIdempotentNoEffect    = "idempotent_no_effect"
)

func errorAt(pos ir.Pos, path, code, msg string, detail ...string) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Error, Pos: pos, Path: path, Code: code, Message: msg, Detail: detail}
}

func warnAt(pos ir.Pos, path, code, msg string, detail ...string) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Warning, Pos: pos, Path: path, Code: code, Message: msg, Detail: detail}
}

// ---- structure ----

// errUnknownField lists the object's fields when no known field is close
// enough to suggest.
func errUnknownField(pos ir.Pos, path, key, object string, known []string) diag.Diagnostic {
	hint := spell.DidYouMean(key, known)
	var detail []string
	if where, ok := nestedFields[object][spell.Snake(key)]; ok && hint == "" {
		return errorAt(pos, path, CodeUnknownField, fmt.Sprintf("unknown field %q in %s", key, object), where)
	}
	if hint == "" {
		detail = append(detail, fmt.Sprintf("the fields of %s are %s (in camelCase or snake_case)", articled(object), strings.Join(known, ", ")))
	}
	return errorAt(pos, path, CodeUnknownField, fmt.Sprintf("unknown field %q in %s%s", key, object, hint), detail...)
}

// nestedFields are fields that belong one level down, by object and
// snake_case key, with where they go.
var nestedFields = map[string]map[string]string{
	"step": {
		"retries":     "retries go under onError: {action: retry, maxRetries: N}",
		"max_retries": "maxRetries goes under onError: {action: retry, maxRetries: N}",
		"retry_count": "retryCount goes under onError: {action: retry, retryCount: N}",
		"retry_delay": "retryDelay goes under onError: {action: retry, retryDelay: 1s}",
		"retry":       "retries go under onError: {action: retry, maxRetries: N}",
		"fallback":    "a fallback is onError: {action: continue} with defaultResults: {...}",
	},
}

// articled puts "a" or "an" before an object's name.
func articled(object string) string {
	if strings.ContainsRune("aeiouAEIOU", rune(object[0])) {
		return "an " + object
	}
	return "a " + object
}

// missingFieldFix says what to write for a missing required field.
var missingFieldFix = map[string]string{
	"name":        "add name: my_tool (lowercase letters, digits, '_' and '-')",
	"description": "add description: saying what the tool does; agents choose tools by it",
	"steps":       "add steps: with at least one step, e.g. [{id: fetch, tool: backend.tool}]",
	"id":          "add id: a name for the step (letters, digits and '_'), unique in the workflow",
	"properties":  "add properties: {field: {type: string, value: \"{{.steps.x.output.field}}\"}}",
	"action":      "add action: abort, continue or skip_remaining",
}

func errMissingField(pos ir.Pos, path, field, object string) diag.Diagnostic {
	var detail []string
	if fix, ok := missingFieldFix[field]; ok {
		detail = append(detail, fix)
	}
	return errorAt(pos, path, CodeMissingField, fmt.Sprintf("%s is missing required field %q", object, field), detail...)
}

func errWrongType(pos ir.Pos, path, field, want, got string) diag.Diagnostic {
	return errorAt(pos, path, CodeWrongType, fmt.Sprintf("%s must be %s, not %s", field, want, got))
}

// fieldOwner names the step type a type-specific field belongs to.
var fieldOwner = map[string]string{
	"tool": ir.StepTool, "arguments": ir.StepTool,
	"message": ir.StepElicitation, "schema": ir.StepElicitation, "onDecline": ir.StepElicitation, "onCancel": ir.StepElicitation,
	"collection": ir.StepForEach, "itemVar": ir.StepForEach, "maxIterations": ir.StepForEach, "step": ir.StepForEach, "steps": ir.StepForEach,
	"workflow": ir.StepWorkflow,
}

// errFieldNotAllowed: hint explains the case; without one, the fix is to
// remove the field or to change the step's type to the one that takes it.
func errFieldNotAllowed(pos ir.Pos, path, field, stepType, hint string) diag.Diagnostic {
	msg := fmt.Sprintf("field %q does not apply to %s steps", field, stepType)
	if hint != "" {
		msg += "; " + hint
	}
	var detail []string
	if owner, ok := fieldOwner[field]; ok && hint == "" && owner != stepType {
		detail = append(detail, fmt.Sprintf("remove it, or make this a type: %s step, which takes %s", owner, field))
	}
	return errorAt(pos, path, CodeFieldNotAllowed, msg, detail...)
}

// ---- workflow ----

func errInvalidName(pos ir.Pos, path, name string) diag.Diagnostic {
	why := "use lowercase letters, digits, '_' and '-', starting and ending with a letter or digit"
	if len(name) > maxNameLen {
		why = fmt.Sprintf("it is %d characters long; the limit is %d", len(name), maxNameLen)
	}
	if name == "" {
		why = "it is empty"
	}
	return errorAt(pos, path, CodeInvalidName, fmt.Sprintf("workflow name %q is not valid: %s", name, why))
}

func errDuplicateWorkflow(pos ir.Pos, path, name string, first ir.Pos) diag.Diagnostic {
	return errorAt(pos, path, CodeDuplicateWorkflow,
		fmt.Sprintf("workflow %q is already defined at %s", name, first),
		"rename one of them: workflow names are tool names and must be unique")
}

func errNoSteps(pos ir.Pos, path string) diag.Diagnostic {
	return errorAt(pos, path, CodeNoSteps, "workflow has no steps; it needs at least one")
}

func errTooManySteps(pos ir.Pos, path string, n int) diag.Diagnostic {
	return errorAt(pos, path, CodeTooManySteps, fmt.Sprintf("workflow has %d steps; the limit is %d", n, maxSteps),
		"move a part into a workflow of its own and run it with a type: workflow step, or fold repeated steps into a forEach")
}

func errInvalidFailureMode(pos ir.Pos, path, got string) diag.Diagnostic {
	return errorAt(pos, path, CodeInvalidFailureMode,
		fmt.Sprintf("failureMode %q is not valid; use abort or continue%s", got, spell.DidYouMean(got, []string{ir.FailureAbort, ir.FailureContinue})))
}

func errOutOfRange(pos ir.Pos, path, field string, got int64, lo, hi int64) diag.Diagnostic {
	if hi <= 0 {
		return errorAt(pos, path, CodeOutOfRange, fmt.Sprintf("%s is %d; it must be at least %d", field, got, lo))
	}
	return errorAt(pos, path, CodeOutOfRange, fmt.Sprintf("%s is %d; it must be between %d and %d", field, got, lo, hi))
}

func errInvalidAnnotation(pos ir.Pos, path, key string, known []string) diag.Diagnostic {
	return errorAt(pos, path, CodeInvalidAnnotation,
		fmt.Sprintf("unknown annotation %q; MCP tool annotations are %s%s", key, strings.Join(known, ", "), spell.DidYouMean(key, known)))
}

// errUnsafeAnnotation: an explicit hint (readOnlyHint: true,
// destructiveHint: false or openWorldHint: false) that the steps' tools do
// not allow. step names the first offending step (unknown: its tool does
// not declare the hint); others holds unsafeStep lines for the rest.
func errUnsafeAnnotation(pos ir.Pos, path, hint string, declared bool, step string, stepPos ir.Pos, tool string, unknown bool, others []string) diag.Diagnostic {
	detail := []string{fmt.Sprintf("step %q is at %s; a composite tool can be no safer than its steps, so remove %s (vmcp derives it from the steps' tools) or set it to %v", step, stepPos, hint, !declared)}
	if len(others) > 0 {
		detail = append(detail, "also: "+strings.Join(others, "; "))
	}
	return errorAt(pos, path, CodeUnsafeAnnotation,
		fmt.Sprintf("annotations declare %s: %v, but step %q calls %s, %s", hint, declared, step, tool, unsafeWhy(hint, unknown)), detail...)
}

// unsafeStep describes one more step that denies hint.
func unsafeStep(hint, step string, pos ir.Pos, tool string, unknown bool) string {
	return fmt.Sprintf("step %q (%s) calls %s, %s", step, pos, tool, unsafeWhy(hint, unknown))
}

// unsafeWhy says why a step's tool denies a hint's safe value.
func unsafeWhy(hint string, unknown bool) string {
	what := map[string][2]string{
		"readOnlyHint":    {"is not read-only", "is read-only (unknown counts as not read-only)"},
		"destructiveHint": {"may be destructive", "is destructive (unknown counts as destructive)"},
		"openWorldHint":   {"interacts with an open world", "interacts with an open world (unknown counts as open-world)"},
	}[hint]
	if unknown {
		return "which does not say whether it " + what[1]
	}
	return "which " + what[0]
}

// ---- durations ----

func errInvalidDuration(pos ir.Pos, path, field, got string) diag.Diagnostic {
	return errorAt(pos, path, CodeInvalidDuration,
		fmt.Sprintf("%s %q is not a Go duration; write it like 30s, 5m or 1h30m", field, got))
}

func errNonPositiveDuration(pos ir.Pos, path, field, got string) diag.Diagnostic {
	return errorAt(pos, path, CodeInvalidDuration, fmt.Sprintf("%s %q must be greater than zero", field, got))
}

func warnTimeoutExceeds(pos ir.Pos, path, stepID string, step, workflow string) diag.Diagnostic {
	return warnAt(pos, path, CodeTimeoutExceeds,
		fmt.Sprintf("step %q has timeout %s, longer than the workflow timeout %s; the workflow timeout will cut it short", stepID, step, workflow))
}

func warnElicitationTimeout(pos ir.Pos, path, got string) diag.Diagnostic {
	return warnAt(pos, path, CodeElicitationTimeout,
		fmt.Sprintf("elicitation timeout %s is over the limit of %s; the wait is capped at %s, as in ToolHive", got, ir.MaxElicitationTimeout, ir.MaxElicitationTimeout))
}

// ---- steps ----

func errInvalidStepID(pos ir.Pos, path, id string) diag.Diagnostic {
	why := "use letters, digits and '_' (so templates can read it as .steps." + "<id>" + "), starting with a letter or '_'"
	if len(id) > maxNameLen {
		why = fmt.Sprintf("it is %d characters long; the limit is %d", len(id), maxNameLen)
	}
	if id == "" {
		why = "it is empty"
	}
	return errorAt(pos, path, CodeInvalidStepID, fmt.Sprintf("step id %q is not valid: %s", id, why))
}

func warnStepIDHyphen(pos ir.Pos, path, id string) diag.Diagnostic {
	return warnAt(pos, path, CodeStepIDHyphen,
		fmt.Sprintf("step id %q contains '-', so templates cannot read it as .steps.%s (text/template stops at '-'); read it with {{index .steps %q \"output\"}} or rename it %s",
			id, id, id, strings.ReplaceAll(id, "-", "_")))
}

func errDuplicateStep(pos ir.Pos, path, id string, firstLine int) diag.Diagnostic {
	return errorAt(pos, path, CodeDuplicateStep,
		fmt.Sprintf("duplicate step id %q; the first step with this id is on line %d", id, firstLine),
		"rename one of them: step ids are unique across the workflow, loop bodies and finally included; dependsOn entries and templates that name it are checked once it is unique")
}

func errInvalidStepType(pos ir.Pos, path, got string) diag.Diagnostic {
	return errorAt(pos, path, CodeInvalidStepType,
		fmt.Sprintf("step type %q is not valid; use tool, elicitation, forEach or workflow%s", got, spell.DidYouMean(got, []string{ir.StepTool, ir.StepElicitation, ir.StepForEach, ir.StepWorkflow})))
}

func errInvalidToolRef(pos ir.Pos, path, got string) diag.Diagnostic {
	return errorAt(pos, path, CodeInvalidToolRef,
		fmt.Sprintf("tool %q is not a tool reference; write backend.tool (e.g. github.create_issue), or a tool's bare or backend_tool name", got))
}

func warnUnresolvedToolRef(pos ir.Pos, path, ref string) diag.Diagnostic {
	return warnAt(pos, path, CodeUnresolvedToolRef,
		fmt.Sprintf("tool %q is not of the form backend.tool; it will be resolved at startup, where it must name exactly one backend tool (by its bare name or as backend_tool)", ref),
		"to resolve it now, compile with --tools tools.lock.json or --config vmcp.yaml, or write backend.tool")
}

func errNoToolNamed(pos ir.Pos, path, ref string, known []string) diag.Diagnostic {
	return errorAt(pos, path, CodeUnknownTool,
		fmt.Sprintf("no backend has a tool %q, by its bare name or as backend_tool%s", ref, spell.DidYouMean(ref, known)),
		"write backend.tool to name a tool of one backend")
}

func errAmbiguousToolRef(pos ir.Pos, path, ref string, candidates []string) diag.Diagnostic {
	return errorAt(pos, path, CodeAmbiguousToolRef,
		fmt.Sprintf("tool %q matches %d backend tools: %s; write the one you mean as backend.tool", ref, len(candidates), strings.Join(candidates, ", ")))
}

func errUnknownBackend(pos ir.Pos, path, backend string, known []string) diag.Diagnostic {
	return errorAt(pos, path, CodeUnknownBackend,
		fmt.Sprintf("unknown backend %q%s", backend, spell.DidYouMean(backend, known)),
		"known backends: "+listOrNone(known))
}

// errUnknownTool lists the backend's tools when none is close enough to
// suggest.
func errUnknownTool(pos ir.Pos, path, backend, tool string, known []string) diag.Diagnostic {
	hint := spell.DidYouMean(tool, known)
	var detail []string
	if hint == "" {
		detail = append(detail, fmt.Sprintf("the tools of %s are %s", backend, capList(known, maxListed)))
	}
	return errorAt(pos, path, CodeUnknownTool, fmt.Sprintf("backend %q has no tool %q%s", backend, tool, hint), detail...)
}

// maxListed is how many names a diagnostic lists before it says how many
// more there are.
const maxListed = 30

// capList lists names, at most limit of them.
func capList(names []string, limit int) string {
	if len(names) <= limit {
		return listOrNone(names)
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:limit], ", "), len(names)-limit)
}

// The argument errors name their callee as "tool backend.name" or
// "workflow \"name\"" (a workflow step's arguments are its callee's
// parameters).

// errUnknownArgument: known are the argument names, described the same
// names with their types ("channel (string, required)").
func errUnknownArgument(pos ir.Pos, path, callee, arg string, known, described []string) diag.Diagnostic {
	return errorAt(pos, path, CodeUnknownArgument,
		fmt.Sprintf("%s has no argument %q%s", callee, arg, spell.DidYouMean(arg, known)),
		"its arguments are: "+listOrNone(described))
}

// errMissingArgument: typ is the argument's declared type ("" when the
// schema gives none), name the key to write (its last path element).
func errMissingArgument(pos ir.Pos, path, callee, arg, name, typ string) diag.Diagnostic {
	if typ == "" {
		return errorAt(pos, path, CodeMissingArgument, fmt.Sprintf("%s requires argument %q", callee, arg),
			fmt.Sprintf("add %s: ... to the arguments", name))
	}
	return errorAt(pos, path, CodeMissingArgument, fmt.Sprintf("%s requires argument %q (%s)", callee, arg, typ),
		fmt.Sprintf("add %s: %s to the arguments", name, literalOf(typ)))
}

func errArgumentType(pos ir.Pos, path, callee, arg, want, got string) diag.Diagnostic {
	return errorAt(pos, path, CodeArgumentType,
		fmt.Sprintf("argument %q of %s must be %s, not %s", arg, callee, want, got),
		fmt.Sprintf("write %s, or a template that yields one, such as \"{{.params.x}}\"", exampleOf(want)))
}

// literalOf is a YAML placeholder for a value of a JSON Schema type (or
// "a or b"), to show where the value goes.
func literalOf(typ string) string {
	switch strings.SplitN(typ, " or ", 2)[0] {
	case "string":
		return `"..."`
	case "integer":
		return "10"
	case "number":
		return "1.5"
	case "boolean":
		return "true"
	case "array":
		return "[...]"
	case "object":
		return "{...}"
	}
	return "..."
}

// exampleOf shows a value of a JSON Schema type (or "a or b") in YAML.
func exampleOf(typ string) string {
	first := strings.SplitN(typ, " or ", 2)[0]
	switch first {
	case "string":
		return "a string such as \"text\""
	case "integer":
		return "an integer such as 10"
	case "number":
		return "a number such as 1.5"
	case "boolean":
		return "true or false"
	case "array":
		return "a list such as [a, b]"
	case "object":
		return "a mapping such as {key: value}"
	case "null":
		return "null"
	}
	return "a " + typ
}

// errArgumentEnum: got is the literal as written in the workflow (never a
// parameter value, which is not known at compile time).
func errArgumentEnum(pos ir.Pos, path, callee, arg string, allowed []string, got string) diag.Diagnostic {
	return errorAt(pos, path, CodeArgumentEnum,
		fmt.Sprintf("argument %q of %s must be one of %s%s", arg, callee, strings.Join(allowed, ", "), spell.DidYouMean(got, allowed)))
}

// ---- workflow steps ----

func errUnknownWorkflow(pos ir.Pos, path, name string, known []string) diag.Diagnostic {
	return errorAt(pos, path, CodeUnknownWorkflow,
		fmt.Sprintf("unknown workflow %q%s", name, spell.DidYouMean(name, known)),
		"a workflow step runs another composite tool compiled or served together with this one; known workflows: "+listOrNone(known))
}

// errWorkflowCycle: cycle names the workflows from the first back to it;
// links say where each call is.
func errWorkflowCycle(pos ir.Pos, path string, cycle, links []string) diag.Diagnostic {
	msg := "workflow recursion: " + strings.Join(cycle, " -> ")
	if len(cycle) == 2 {
		msg = fmt.Sprintf("workflow %q calls itself", cycle[0])
	}
	msg += "; a workflow step may not run its own workflow, directly or through other workflows"
	return errorAt(pos, path, CodeWorkflowCycle, msg, links...)
}

func errUnknownCalleeOutput(pos ir.Pos, path, step, callee, field string, known []string) diag.Diagnostic {
	return errorAt(pos, path, CodeUnknownCalleeOutput,
		fmt.Sprintf("step %q runs workflow %q, whose output has no field %q%s", step, callee, field, spell.DidYouMean(field, known)),
		"its output declares: "+listOrNone(known))
}

func errInvalidAction(pos ir.Pos, path, field, got string, valid []string) diag.Diagnostic {
	return errorAt(pos, path, CodeInvalidAction,
		fmt.Sprintf("%s action %q is not valid; use %s%s", field, got, joinOr(valid), spell.DidYouMean(got, valid)))
}

func warnTooManyRetries(pos ir.Pos, path string, got int64) diag.Diagnostic {
	return warnAt(pos, path, CodeTooManyRetries,
		fmt.Sprintf("maxRetries %d is over the limit of %d; it is capped at %d", got, maxRetries, maxRetries))
}

// warnRetriesWithoutRetry: action is "" when onError has no action.
func warnRetriesWithoutRetry(pos ir.Pos, path, action string) diag.Diagnostic {
	return warnAt(pos, path, CodeRetriesWithoutRetry,
		fmt.Sprintf("maxRetries has no effect: %s, and only action: retry retries (as in ToolHive)", onErrorAction(action)),
		"to retry before giving up, write onError: {action: retry, maxRetries: N}; the workflow's failureMode decides after the last attempt")
}

// ---- resume ----

// errInvalidIdempotent: idempotent is not a boolean; got names what it
// is (a string is quoted back, since "true" in quotes is the usual slip).
func errInvalidIdempotent(pos ir.Pos, path, got string) diag.Diagnostic {
	return errorAt(pos, path, CodeInvalidIdempotent,
		fmt.Sprintf("idempotent must be true or false, not %s", got),
		"idempotent: true promises that calling the step's tool twice has the same effect as calling it once, so a run resumed after a crash may call it again when its first call was in flight; write it unquoted")
}

// warnIdempotentNoEffect: idempotent on a step type that makes no backend
// call of its own.
func warnIdempotentNoEffect(pos ir.Pos, path, stepType string) diag.Diagnostic {
	why := map[string]string{
		ir.StepElicitation: "a question that was waiting when vmcp stopped is always asked again on resume",
		ir.StepForEach:     "a loop makes no call of its own: put idempotent on its inner step (step:) or its body steps (steps:)",
		ir.StepWorkflow:    "the child run's own steps decide: put idempotent on the steps of the called workflow",
	}[stepType]
	return warnAt(pos, path, CodeIdempotentNoEffect,
		fmt.Sprintf("idempotent has no effect on %s steps; %s", stepType, why))
}

// warnRetryTuningWithoutRetry: action is "" when onError has no action.
func warnRetryTuningWithoutRetry(pos ir.Pos, path, field, action string) diag.Diagnostic {
	return warnAt(pos, path, CodeRetryTuning,
		fmt.Sprintf("%s has no effect: %s, and it only shapes the retries of action: retry", field, onErrorAction(action)),
		"write onError: {action: retry, maxRetries: N, "+field+": ...}")
}

// onErrorAction describes an onError's action; "" when it has none.
func onErrorAction(action string) string {
	if action == "" {
		return "onError has no action"
	}
	return "the action is " + action
}

func warnAttemptTimeoutExceeds(pos ir.Pos, path, stepID, attempt, step string) diag.Diagnostic {
	return warnAt(pos, path, CodeAttemptTimeout,
		fmt.Sprintf("step %q has attemptTimeout %s, not shorter than its timeout %s, which bounds all attempts together; no retry would start", stepID, attempt, step),
		"make attemptTimeout shorter than the step timeout, or raise the step timeout")
}

func errMaxDelayBelowRetryDelay(pos ir.Pos, path, maxDelay, retryDelay string) diag.Diagnostic {
	return errorAt(pos, path, CodeOutOfRange,
		fmt.Sprintf("maxDelay %s is shorter than retryDelay %s; the first retry already waits retryDelay", maxDelay, retryDelay),
		"make maxDelay at least retryDelay, or lower retryDelay")
}

func errMultiplierRange(pos ir.Pos, path string, got float64) diag.Diagnostic {
	return errorAt(pos, path, CodeOutOfRange,
		fmt.Sprintf("multiplier is %g; it must be between 1 (a constant delay) and %d", got, maxMultiplier))
}

func errRetryOnEmpty(pos ir.Pos, path string) diag.Diagnostic {
	return errorAt(pos, path, CodeInvalidRetryOn,
		"retryOn is empty, so nothing would be retried; list any of "+strings.Join(ir.RetryOnKinds, ", ")+", or leave it out to retry every failure")
}

func errInvalidRetryOn(pos ir.Pos, path, got string) diag.Diagnostic {
	return errorAt(pos, path, CodeInvalidRetryOn,
		fmt.Sprintf("retryOn %q is not a failure kind; use %s%s", got, joinOr(ir.RetryOnKinds), spell.DidYouMean(got, ir.RetryOnKinds)),
		"error: a transport or backend process failure; timeout: an attempt that hit attemptTimeout; toolError: a result with isError")
}

func errMaxIterations(pos ir.Pos, path string, got int64, limit int) diag.Diagnostic {
	return errorAt(pos, path, CodeOutOfRange,
		fmt.Sprintf("maxIterations is %d; it must be between 1 and %d", got, limit),
		fmt.Sprintf("%d is the server-wide cap, limits.maxIterations in vmcp.yaml (default %d)", limit, ir.DefaultIterationLimit))
}

func errLiteralCollectionTooLong(pos ir.Pos, path string, n, max int) diag.Diagnostic {
	return errorAt(pos, path, CodeOutOfRange,
		fmt.Sprintf("collection has %d items, more than maxIterations (%d)", n, max),
		"raise the step's maxIterations, or split the list")
}

func errInvalidItemVar(pos ir.Pos, path, got string) diag.Diagnostic {
	if got == "index" {
		return errorAt(pos, path, CodeInvalidItemVar,
			"itemVar cannot be \"index\": .forEach.index is the iteration number; choose another name such as item")
	}
	return errorAt(pos, path, CodeInvalidItemVar,
		fmt.Sprintf("itemVar %q is not a valid identifier; use letters, digits and '_', starting with a letter or '_'", got))
}

func errInnerStepType(pos ir.Pos, path, got string) diag.Diagnostic {
	return errorAt(pos, path, CodeInnerStepType,
		fmt.Sprintf("the inner step of a forEach must be of type tool or workflow, not %s (loops nest through a body: write steps: instead of step:)", got))
}

func errInnerDependsOn(pos ir.Pos, path string) diag.Diagnostic {
	return errorAt(pos, path, CodeInnerDependsOn,
		"the inner step of a forEach cannot have dependsOn; put dependsOn on the forEach step itself")
}

// errUnknownStep lists the steps when none is close enough to suggest.
func errUnknownStep(pos ir.Pos, path, id string, known []string) diag.Diagnostic {
	hint := spell.DidYouMean(id, known)
	var detail []string
	if hint == "" {
		detail = append(detail, "the steps are "+capList(known, maxListed))
	}
	return errorAt(pos, path, CodeUnknownStep, fmt.Sprintf("unknown step %q%s", id, hint), detail...)
}

func warnRepeatedDependency(pos ir.Pos, path, id string) diag.Diagnostic {
	return warnAt(pos, path, CodeRepeatedDependency, fmt.Sprintf("dependsOn lists %q more than once; the repeat has no effect", id))
}

func errSelfDependency(pos ir.Pos, path, id string) diag.Diagnostic {
	return errorAt(pos, path, CodeSelfDependency, fmt.Sprintf("step %q depends on itself", id),
		fmt.Sprintf("remove %s from its dependsOn", id))
}

func errDependencyCycle(pos ir.Pos, path string, cycle []string, links []string, members []string) diag.Diagnostic {
	msg := "dependency cycle: " + strings.Join(cycle, " -> ")
	if len(members) > len(cycle)-1 {
		msg += fmt.Sprintf(" (steps %s all depend on each other)", strings.Join(members, ", "))
	}
	detail := append(append([]string{}, links...), "break the cycle: remove one of these dependsOn entries, or the template read that needs it")
	return errorAt(pos, path, CodeDependencyCycle, msg, detail...)
}

func errNestingTooDeep(pos ir.Pos, path, what string) diag.Diagnostic {
	return errorAt(pos, path, CodeNestingTooDeep,
		fmt.Sprintf("%s are nested more than %d levels deep", what, maxNesting))
}

// missingStepFieldFix says what to write for a step's missing field.
var missingStepFieldFix = map[string]string{
	"tool":            "add tool: backend.tool_name, as vmcp_backend_tools lists it",
	"message":         "add message: the question to ask (a template)",
	"schema":          "add schema: {type: object, properties: {answer: {type: string}}}, the form the user fills in",
	"collection":      "add collection: \"{{.steps.x.output.items}}\" (a template that yields a list) or a literal list",
	"step (or steps)": "add step: {tool: backend.tool, arguments: {...}} for one call per item, or steps: [...] for a small graph per item",
	"workflow":        "add workflow: the name of another composite tool",
}

func errMissingStepField(pos ir.Pos, path, stepID, stepType, field string) diag.Diagnostic {
	var detail []string
	if fix, ok := missingStepFieldFix[field]; ok {
		detail = append(detail, fix)
	}
	return errorAt(pos, path, CodeMissingField,
		fmt.Sprintf("%s step %q is missing required field %q", stepType, stepID, field), detail...)
}

// ---- schemas, parameters, output ----

func errInvalidParameters(pos ir.Pos, path, why string) diag.Diagnostic {
	return errorAt(pos, path, CodeInvalidParameters, "parameters: "+why)
}

// typeAliases maps type names from other languages to JSON Schema's.
var typeAliases = map[string]string{
	"str": "string", "text": "string", "bool": "boolean", "int": "integer", "long": "integer",
	"float": "number", "double": "number", "list": "array", "dict": "object", "map": "object",
}

func errInvalidType(pos ir.Pos, path, what, got string) diag.Diagnostic {
	hint := spell.DidYouMean(got, jsonTypes)
	if alias, ok := typeAliases[strings.ToLower(got)]; ok {
		hint = "; did you mean " + alias + "?"
	}
	return errorAt(pos, path, CodeInvalidType,
		fmt.Sprintf("%s has type %q, which is not a JSON Schema type; use %s%s", what, got, joinOr(jsonTypes), hint))
}

func errDefaultType(pos ir.Pos, path, what, want, got string) diag.Diagnostic {
	return errorAt(pos, path, CodeDefaultType,
		fmt.Sprintf("the default of %s is %s, but its type is %s", what, got, want),
		fmt.Sprintf("make the default %s, or change the type", exampleOf(want)))
}

func errUnknownRequired(pos ir.Pos, path, what, name string, known []string) diag.Diagnostic {
	return errorAt(pos, path, CodeUnknownRequired,
		fmt.Sprintf("%s requires %q, which is not one of its properties%s", what, name, spell.DidYouMean(name, known)))
}

func errParamsNotObject(pos ir.Pos, path, got string) diag.Diagnostic {
	return errInvalidParameters(pos, path, fmt.Sprintf("the schema must have type object, not %q", got))
}

func errEnumType(pos ir.Pos, path, what, value, types string) diag.Diagnostic {
	return errInvalidSchema(pos, path, what, fmt.Sprintf("enum value %s is not of type %s", value, types))
}

// errElicitationNotObject: got is "" when the schema has no type at all.
func errElicitationNotObject(pos ir.Pos, path, got string) diag.Diagnostic {
	if got == "" {
		return errInvalidSchema(pos, path, "elicitation schema", "it must have type: object (a form of named fields)")
	}
	return errInvalidSchema(pos, path, "elicitation schema", "its type must be object, not "+got)
}

func errElicitationFieldType(pos ir.Pos, path, field, typ string) diag.Diagnostic {
	return errInvalidSchema(pos, path, "elicitation schema",
		fmt.Sprintf("property %q has type %s; MCP elicitation forms hold only string, number, integer and boolean fields, and multi-select arrays of strings", field, typ))
}

func errUnknownRef(pos ir.Pos, path, what, ref, section string, defined []string) diag.Diagnostic {
	name := ref[strings.LastIndex(ref, "/")+1:]
	why := fmt.Sprintf("$ref %q names no definition: the parameters have no %s", ref, section)
	if len(defined) > 0 {
		why = fmt.Sprintf("$ref %q names no definition; the parameters' %s are %s%s", ref, section, strings.Join(defined, ", "), spell.DidYouMean(name, defined))
	}
	return errInvalidSchema(pos, path, what, why)
}

func errElicitationArrayField(pos ir.Pos, path, field string) diag.Diagnostic {
	return errInvalidSchema(pos, path, "elicitation schema",
		fmt.Sprintf("property %q is an array but not a multi-select; an array field needs items: {type: string, enum: [...]} "+
			"or items: {anyOf: [{const: ..., title: ...}]} (MCP 2025-11-25)", field))
}

func errUndefinedTemplate(pos ir.Pos, path, name string) diag.Diagnostic {
	return errTemplateSyntax(pos, path, fmt.Sprintf("no template named %q is defined", name))
}

func errInvalidSchema(pos ir.Pos, path, what, why string) diag.Diagnostic {
	return errorAt(pos, path, CodeInvalidSchema, fmt.Sprintf("%s is not a valid JSON Schema: %s", what, why))
}

func errSchemaTooLarge(pos ir.Pos, path string, size int) diag.Diagnostic {
	return errorAt(pos, path, CodeSchemaTooLarge,
		fmt.Sprintf("elicitation schema is %d bytes as JSON; the limit is %d", size, maxElicitationSchema))
}

func errInvalidVarName(pos ir.Pos, path, name string) diag.Diagnostic {
	return errorAt(pos, path, CodeInvalidVarName,
		fmt.Sprintf("var name %q is not valid: use letters, digits and '_', starting with a letter or '_', so templates can read it as .vars.<name>", name))
}

func errValueAndProperties(pos ir.Pos, path, what string) diag.Diagnostic {
	return errorAt(pos, path, CodeFieldNotAllowed,
		fmt.Sprintf("%s has both value and properties; an object property takes its fields from properties", what))
}

func errNestedNotObject(pos ir.Pos, path, what, got string) diag.Diagnostic {
	return errorAt(pos, path, CodeInvalidType,
		fmt.Sprintf("%s has nested properties, so its type must be object, not %s", what, got))
}

func errOutputNoValue(pos ir.Pos, path, what string) diag.Diagnostic {
	return errorAt(pos, path, CodeMissingField, fmt.Sprintf("%s needs a value template (or nested properties)", what))
}

// ---- templates ----

func errTemplateSyntax(pos ir.Pos, path, msg string, detail ...string) diag.Diagnostic {
	return errorAt(pos, path, CodeTemplateSyntax, "template syntax error: "+msg, detail...)
}

// hyphenHint explains how to read a name with '-' in a template.
func hyphenHint(root, name string) string {
	rename := strings.ReplaceAll(name, "-", "_")
	switch root {
	case "steps":
		return fmt.Sprintf("step ids containing '-' cannot be written as fields; use {{index .steps %q \"output\"}} or rename the step %s", name, rename)
	case "params":
		return fmt.Sprintf("parameter names containing '-' cannot be written as fields; use {{index .params %q}} or rename the parameter %s", name, rename)
	}
	return fmt.Sprintf("var names containing '-' cannot be written as fields; use {{index .%s %q}} or rename it %s", root, name, rename)
}

func errUnknownTemplateRoot(pos ir.Pos, path, root string) diag.Diagnostic {
	var detail []string
	switch strings.ToLower(root) {
	case "timestamp", "time", "now", "date":
		detail = append(detail, "templates have no clock; pass the time in as a parameter and read it as .params."+root)
	}
	return errorAt(pos, path, CodeUnknownTemplateRoot,
		fmt.Sprintf(".%s is not available in templates; the valid roots are .params, .vars, .steps, .workflow and .forEach%s",
			root, spell.DidYouMean(root, templateRoots)), detail...)
}

func errUnknownParam(pos ir.Pos, path, name string, known []string) diag.Diagnostic {
	declare := fmt.Sprintf("declare it: parameters: {%s: {type: string, required: true}}", name)
	if len(known) == 0 {
		return errorAt(pos, path, CodeUnknownParam,
			fmt.Sprintf("parameter %q is not declared; the workflow declares no parameters", name), declare)
	}
	hint := spell.DidYouMean(name, known)
	detail := []string{"declared parameters: " + strings.Join(known, ", ")}
	if hint == "" {
		detail = append(detail, "or "+declare)
	}
	return errorAt(pos, path, CodeUnknownParam, fmt.Sprintf("parameter %q is not declared%s", name, hint), detail...)
}

func errUnknownVar(pos ir.Pos, path, name string, known []string) diag.Diagnostic {
	declare := fmt.Sprintf("declare it: vars: {%s: \"{{.params.x}}\"}", name)
	if len(known) == 0 {
		return errorAt(pos, path, CodeUnknownVar,
			fmt.Sprintf("var %q is not declared; the workflow declares no vars", name), declare)
	}
	hint := spell.DidYouMean(name, known)
	detail := []string{"declared vars: " + strings.Join(known, ", ")}
	if hint == "" {
		detail = append(detail, "or "+declare)
	}
	return errorAt(pos, path, CodeUnknownVar, fmt.Sprintf("var %q is not declared%s", name, hint), detail...)
}

func errVarReference(pos ir.Pos, path, root string) diag.Diagnostic {
	return errorAt(pos, path, CodeVarReference,
		fmt.Sprintf("vars are evaluated once when the run starts, before any step, so they can read only .params and .workflow, not .%s", root))
}

func errForEachOutside(pos ir.Pos, path string) diag.Diagnostic {
	return errorAt(pos, path, CodeForEachOutside,
		".forEach is only available inside the inner step of a forEach or the steps of its body")
}

// errUnknownForEachVar: itemVars are the enclosing loops' item names,
// outermost first.
func errUnknownForEachVar(pos ir.Pos, path, name string, itemVars []string) diag.Diagnostic {
	known := append(append([]string{}, itemVars...), "index")
	has := make([]string, len(known))
	for i, k := range known {
		has[i] = ".forEach." + k
	}
	what := "this forEach has"
	if len(itemVars) > 1 {
		what = "the enclosing loops have"
	}
	return errorAt(pos, path, CodeUnknownForEachVar,
		fmt.Sprintf(".forEach.%s is not defined; %s %s%s", name, what, joinAnd(has), spell.DidYouMean(name, known)))
}

func errUnknownWorkflowField(pos ir.Pos, path, name string, known []string) diag.Diagnostic {
	return errorAt(pos, path, CodeUnknownWorkflowField,
		fmt.Sprintf(".workflow.%s is not defined; .workflow has %s%s", name, joinOr(known), spell.DidYouMean(name, known)))
}

func errUnknownStepField(pos ir.Pos, path, id, field string) diag.Diagnostic {
	return errorAt(pos, path, CodeUnknownStepField,
		fmt.Sprintf(".steps.%s.%s is not defined; a step has %s%s", id, field, joinOr(stepFields), spell.DidYouMean(field, stepFields)))
}

func errUnknownForEachOutput(pos ir.Pos, path, id, field string) diag.Diagnostic {
	known := ir.ForEachOutputFields
	return errorAt(pos, path, CodeUnknownOutputField,
		fmt.Sprintf("forEach step %q has no output field %q; its output has %s%s", id, field, joinAnd(known), spell.DidYouMean(field, known)))
}

func errUnknownAnswerField(pos ir.Pos, path, id, field string, known []string) diag.Diagnostic {
	return errorAt(pos, path, CodeUnknownOutputField,
		fmt.Sprintf("elicitation %q asks only for %s, so its answer has no field %q%s", id, strings.Join(known, ", "), field, spell.DidYouMean(field, known)))
}

// errUnknownElicitationOutput: answers are the fields the schema asks for,
// so that a ToolHive-era read of .output.F can point at .output.content.F.
func errUnknownElicitationOutput(pos ir.Pos, path, id, field string, answers []string) diag.Diagnostic {
	var detail []string
	if contains(answers, field) {
		detail = append(detail, fmt.Sprintf("the answer is under content: write .steps.%s.output.content.%s", id, field))
	}
	return errorAt(pos, path, CodeUnknownOutputField,
		fmt.Sprintf("elicitation %q has no output field %q; its output is {action, content} (content holds the answer)%s", id, field, spell.DidYouMean(field, elicitationOutputFields)), detail...)
}

func errSkippedFlag(pos ir.Pos, path, id string) diag.Diagnostic {
	return errorAt(pos, path, CodeOptionalFieldRead,
		fmt.Sprintf("the output of elicitation %q has skipped only when skip_remaining ended the run", id),
		fmt.Sprintf("read it with {{index .steps.%s.output \"skipped\"}}", id))
}

// errMissingDefaultContent: field is "" for a read of the whole content.
func errMissingDefaultContent(pos ir.Pos, path, id, field, why string) diag.Diagnostic {
	if field == "" {
		return errorAt(pos, path, CodeMissingDefaultResult,
			fmt.Sprintf("elicitation %q %s, and then its output has no content: its defaultResults have no content", id, why),
			fmt.Sprintf("give %q defaultResults: {content: {...}}, or read the answer with index", id))
	}
	return errorAt(pos, path, CodeMissingDefaultResult,
		fmt.Sprintf("elicitation %q %s, and then its output's content is its defaultResults.content, which has no field %q", id, why, field),
		fmt.Sprintf("give %q defaultResults: {content: {%s: ...}}, or read it with {{index .steps.%s.output.content %q}}", id, field, id, field))
}

// errNoContent: rest is what the template reads under .content.
func errNoContent(pos ir.Pos, path, id, typ string, rest []string) diag.Diagnostic {
	var detail []string
	if typ == ir.StepElicitation && len(rest) > 0 {
		detail = append(detail, fmt.Sprintf("the answer is in the output: write .steps.%s.output.content.%s", id, strings.Join(rest, ".")))
	}
	return errorAt(pos, path, CodeUnknownContentKey,
		fmt.Sprintf("%s step %q has no content map; only tool steps have one", typ, id), detail...)
}

func errUnknownContentKey(pos ir.Pos, path, id, key string) diag.Diagnostic {
	known := []string{"text", "text_1", "image_0", "resource", "resource_1", "audio_0", "link_0"}
	return errorAt(pos, path, CodeUnknownContentKey,
		fmt.Sprintf(".steps.%s.content has no key %q; its keys are text, text_N, image_N, resource, resource_N, audio_N and link_N%s", id, key, spell.DidYouMean(key, known)))
}

func errContentMayBeAbsent(pos ir.Pos, path, id, key, why string) diag.Diagnostic {
	return errorAt(pos, path, CodeOptionalFieldRead,
		fmt.Sprintf("step %q %s, and then its content map is empty", id, why),
		fmt.Sprintf("read it with {{index .steps.%s.content %q}}", id, key))
}

func errUnknownDefaultAnswer(pos ir.Pos, path, id, field string, known []string) diag.Diagnostic {
	return errorAt(pos, path, CodeUnknownOutputField,
		fmt.Sprintf("defaultResults.content of elicitation %q has %q, which its schema does not ask for (it asks for %s)%s", id, field, strings.Join(known, ", "), spell.DidYouMean(field, known)))
}

func errWholeSteps(pos ir.Pos, path string) diag.Diagnostic {
	return errorAt(pos, path, CodeWholeSteps,
		"a template cannot read all of .steps at once; name a step it depends on: .steps.<id>.output")
}

func errMissingDependency(pos ir.Pos, path, reader, target, what string, deps []string) diag.Diagnostic {
	hint := fmt.Sprintf("add dependsOn: [%s]", target)
	if len(deps) > 0 {
		hint = fmt.Sprintf("add it: dependsOn: [%s, %s]", strings.Join(deps, ", "), target)
	}
	return errorAt(pos, path, CodeMissingDependency,
		fmt.Sprintf("step %q reads the %s of %q but does not depend on it, so it may run first", reader, what, target), hint)
}

func errSelfReference(pos ir.Pos, path, id, what string) diag.Diagnostic {
	return errorAt(pos, path, CodeSelfReference, fmt.Sprintf("step %q reads its own %s", id, what),
		"a step's output exists only once it has ended; read it in a later step that has dependsOn: ["+id+"]")
}

func errMissingDefaultResult(pos ir.Pos, path, target, field, why string, hasDefaults bool) diag.Diagnostic {
	if field == "" {
		return errorAt(pos, path, CodeMissingDefaultResult,
			fmt.Sprintf("step %q %s, and then its output is its defaultResults, which are empty", target, why),
			fmt.Sprintf("give %q defaultResults, or read single fields with index", target))
	}
	detail := fmt.Sprintf("add %s to the defaultResults of %q, or read it with {{index .steps.%s.output %q}}", field, target, target, field)
	if !hasDefaults {
		detail = fmt.Sprintf("give %q defaultResults: {%s: ...}, or read it with {{index .steps.%s.output %q}}", target, field, target, field)
	}
	return errorAt(pos, path, CodeMissingDefaultResult,
		fmt.Sprintf("step %q %s, and its defaultResults have no field %q", target, why, field), detail)
}

func errConditionConstant(pos ir.Pos, path, got string) diag.Diagnostic {
	return errorAt(pos, path, CodeConditionNotTemplated,
		fmt.Sprintf("condition %q is neither a template nor true/false", got),
		`write a template that yields true or false, such as "{{eq .params.mode \"fast\"}}"`)
}

// ---- helpers ----

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

func joinOr(names []string) string { return joinLast(names, " or ") }

func joinAnd(names []string) string { return joinLast(names, " and ") }

// joinLast joins names with commas and last before the final one.
func joinLast(names []string, last string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + last + names[len(names)-1]
}

func errFinallyElicitation(pos ir.Pos, path, id string) diag.Diagnostic {
	return errorAt(pos, path, CodeFinallyElicitation,
		fmt.Sprintf("finally step %q is an elicitation; finally steps cannot ask the user, because a cancelled or timed-out run has no client left to answer", id),
		"ask before the run ends, in a top-level step, and let the finally step read its answer")
}

func errFinallyAbort(pos ir.Pos, path, id string) diag.Diagnostic {
	return errorAt(pos, path, CodeFinallyAbort,
		fmt.Sprintf("finally step %q cannot abort: the run has already ended, and a failed finally step never stops the others", id),
		"use onError action continue or retry; a failed finally step is recorded and named in the result's _meta")
}

func errDependsOnFinally(pos ir.Pos, path, reader, target string) diag.Diagnostic {
	return errorAt(pos, path, CodeDependsOnFinally,
		fmt.Sprintf("step %q depends on finally step %q, which runs only after every top-level step has ended", reader, target),
		"move the step into finally too, or make the finally step a top-level step")
}

func warnFinallyDependsOnStep(pos ir.Pos, path, reader, target string) diag.Diagnostic {
	return warnAt(pos, path, CodeFinallyDependsOnStep,
		fmt.Sprintf("finally step %q depends on top-level step %q; this has no effect, as every top-level step has ended before finally steps start", reader, target),
		"remove it: finally steps read any top-level step without dependsOn")
}

func errFinallyRead(pos ir.Pos, path, reader, target string) diag.Diagnostic {
	return errorAt(pos, path, CodeFinallyRead,
		fmt.Sprintf("%s reads finally step %q, which runs only after every top-level step has ended and the output is built", reader, target),
		"only finally steps may read finally steps")
}

// errQuery words a problem with a call of query (see query.go).
func errQuery(pos ir.Pos, path string, p queryProblem) diag.Diagnostic {
	if d, ok := errQueryExpr(pos, path, p); ok {
		return d
	}
	switch p.kind {
	case queryUnknownFunc:
		return errorAt(pos, path, CodeQueryFunction,
			fmt.Sprintf("JMESPath function %q is not defined%s", p.text, spell.DidYouMean(p.text, jmespathFuncs)),
			"the functions are those of JMESPath Community: "+strings.Join(jmespathFuncs, ", "))
	case queryNotString:
		return errorAt(pos, path, CodeQueryArguments,
			"the first argument of query is the JMESPath expression, a string",
			`write {{query "items[].name" .steps.x.output}}`)
	case queryArity:
		return errorAt(pos, path, CodeQueryArguments,
			fmt.Sprintf("query takes an expression and a value, then optionally name-value pairs, not %d argument%s", p.args, plural(p.args)),
			`write {{query "items[].name" .steps.x.output}} or {{.steps.x.output | query "items[].name"}}; `+
				`named inputs follow in pairs: {{query "items[?contains($roles, role)]" .steps.x.output "roles" .steps.y.output.names}}`)
	case queryInputName, queryInputTwice, queryInputUnused:
		return errQueryInput(pos, path, p)
	}
	return errorAt(pos, path, CodeQuerySyntax, "JMESPath syntax error in the query expression: "+p.text)
}

// errQueryExpr words a literal expression's syntax error or a variable
// that no let and no named input defines, with the fix internal/jmes
// gives (and, for a variable, the named input it may be a typo of).
func errQueryExpr(pos ir.Pos, path string, p queryProblem) (diag.Diagnostic, bool) {
	var detail []string
	if p.fix != "" {
		detail = append(detail, p.fix)
	}
	switch p.kind {
	case querySyntax:
		return errorAt(pos, path, CodeQuerySyntax, "JMESPath syntax error in the query expression: "+p.text, detail...), true
	case queryFuncArgument:
		return errorAt(pos, path, CodeQueryFuncArgument, "JMESPath "+p.text, detail...), true
	case queryUndefinedVar:
		return errorAt(pos, path, CodeQueryVariable, fmt.Sprintf("JMESPath variable %s is not defined here%s", p.text, didYouMeanVar(p.text, p.inputs)), detail...), true
	}
	return diag.Diagnostic{}, false
}

// ---- loop bodies ----

func errLoopBodyConflict(pos ir.Pos, path, id string) diag.Diagnostic {
	return errorAt(pos, path, CodeLoopBodyConflict,
		fmt.Sprintf("forEach step %q has both step and steps; a loop body is either one inner step (step:) or a small graph of steps (steps:)", id),
		"keep one of them")
}

func errLoopTooDeep(pos ir.Pos, path, id string, depth int) diag.Diagnostic {
	return errorAt(pos, path, CodeLoopTooDeep,
		fmt.Sprintf("forEach step %q is a loop nested %d deep; loops nest at most %d deep", id, depth, ir.MaxLoopDepth),
		"move the innermost loop into a workflow step (type: workflow) or flatten its collection with query")
}

func errItemVarClash(pos ir.Pos, path, id, itemVar, outer string, outerPos ir.Pos) diag.Diagnostic {
	return errorAt(pos, path, CodeItemVarClash,
		fmt.Sprintf("forEach step %q names its items %q, as the enclosing loop %q does (%s); .forEach.%s could then mean either", id, itemVar, outer, outerPos, itemVar),
		"give one of the loops another itemVar")
}

func errBodyStepOutside(pos ir.Pos, path, reader, target, loop string) diag.Diagnostic {
	return errorAt(pos, path, CodeBodyStepOutside,
		fmt.Sprintf("%s reads step %q, which is in the body of forEach %q and runs once per item there", reader, target, loop),
		fmt.Sprintf("read the iterations instead: .steps.%s.output.iterations (each has index, item, status, output, error and steps)", loop))
}

func errCrossBodyDependency(pos ir.Pos, path, from, to, fromScope, toScope string) diag.Diagnostic {
	return errorAt(pos, path, CodeCrossBodyDependency,
		fmt.Sprintf("step %q (%s) depends on step %q (%s); dependsOn names steps of the same list", from, fromScope, to, toScope),
		"a body step that needs a step outside its loop reads it directly; make the loop step depend on that step")
}

// errMissingLoopDependency: reader says who reads (readerName), loop is
// the enclosing loop that sits beside target.
func errMissingLoopDependency(pos ir.Pos, path, reader, loop, target, what string) diag.Diagnostic {
	return errorAt(pos, path, CodeLoopDependency,
		fmt.Sprintf("%s reads the %s of %q, but the loop %q it runs in does not depend on it, so it may run first", reader, what, target, loop),
		fmt.Sprintf("add dependsOn: [%s] to %q", target, loop))
}

func errBodyReadsLoop(pos ir.Pos, path, reader, loop string) diag.Diagnostic {
	return errorAt(pos, path, CodeBodyReadsLoop,
		fmt.Sprintf("step %q reads forEach %q, the loop it runs in, which has no output until every iteration has ended", reader, loop),
		"read this iteration's item with .forEach and the body's steps with .steps")
}

func errBodyElicitation(pos ir.Pos, path, id string) diag.Diagnostic {
	return errorAt(pos, path, CodeBodyElicitation,
		fmt.Sprintf("elicitation step %q is in a loop body; a loop cannot ask the user once per item", id),
		"ask before the loop and read the answer in the body")
}

func errNoBodySteps(pos ir.Pos, path, id string) diag.Diagnostic {
	return errorAt(pos, path, CodeNoSteps, fmt.Sprintf("the body of forEach step %q has no steps; it needs at least one", id))
}

// errQueryInput words a problem with a query call's named inputs (see
// query_inputs.go and query_scope.go).
func errQueryInput(pos ir.Pos, path string, p queryProblem) diag.Diagnostic {
	const example = `{{query "items[?contains($roles, role)]" .steps.x.output "roles" .steps.y.output.names}}`
	switch p.kind {
	case queryInputName:
		if strings.HasPrefix(p.text, "$") && jmes.IsVarName(p.text[1:]) {
			return errorAt(pos, path, CodeQueryArguments,
				fmt.Sprintf("the name of a query input is written without $: %q", p.text),
				fmt.Sprintf("write %q; the expression reads it as %s", p.text[1:], p.text))
		}
		return errorAt(pos, path, CodeQueryArguments,
			fmt.Sprintf("argument %d of query must be the name of a named input in quotes (letters, digits and _, not starting with a digit)", p.args),
			"named inputs follow the value in name-value pairs: "+example)
	case queryInputTwice:
		return errorAt(pos, path, CodeQueryArguments,
			fmt.Sprintf("query input %q is given twice", p.text),
			"give each named input once, or rename one")
	}
	return errorAt(pos, path, CodeQueryVariable,
		fmt.Sprintf("query input %q is not read by the expression", p.text),
		fmt.Sprintf("read it as $%s in the expression, or remove the input (a let that defines $%s hides it)", p.text, p.text))
}

// didYouMeanVar suggests the named input that variable v (with its $) may
// be a typo of: "; did you mean $roles?", or "".
func didYouMeanVar(v string, inputs []string) string {
	if s := spell.Suggest(strings.TrimPrefix(v, "$"), inputs); s != "" {
		return "; did you mean $" + s + "?"
	}
	return ""
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
