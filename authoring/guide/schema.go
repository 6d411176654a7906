package guide

// The JSON Schema of the workflow source format, in two dialects: JSON
// Schema 2020-12 for agents (the vmcp://schema/workflow.json resource) and
// draft-07 for editors (`vmcpc schema`; yaml-language-server supports
// draft-07 fully). Both come from one builder and differ only in $schema,
// $id and the name of the definitions section ($defs or definitions).
//
// The schema is built from Go tables rather than kept as a hand-written
// JSON file, so that every field is listed once and gets both of its
// accepted spellings: props() adds the snake_case twin of each camelCase
// name (dependsOn and depends_on). schema_test.go holds every object's
// properties to the parser's own field tables (parser.FieldTables), so a
// field added to the language and not to the schema fails a test. The
// compiler stays the authority: the schema catches unknown fields, wrong
// types and enum values early, while cross-field rules (dependencies,
// templates, cycles, tool schemas) are the checker's.

import (
	"bytes"
	"encoding/json"

	"github.com/vmcp-dev/vmcp/internal/spell"
	"github.com/vmcp-dev/vmcp/ir"
)

// dialect is one JSON Schema draft's spelling of the schema.
type dialect struct {
	schema string // $schema
	id     string // $id
	defs   string // the key holding the definitions
}

var (
	draft2020 = dialect{schema: "https://json-schema.org/draft/2020-12/schema", id: SchemaURI, defs: "$defs"}
	draft07   = dialect{schema: "http://json-schema.org/draft-07/schema#", id: "urn:vmcp:schema:workflow:v1", defs: "definitions"}
)

// Schema returns the JSON Schema (2020-12) of workflow sources, indented
// JSON with sorted keys: the vmcp://schema/workflow.json resource.
func Schema() []byte { return encode(build(draft2020)) }

// EditorSchema returns the same schema in draft-07, for editors
// (`vmcpc schema`).
func EditorSchema() []byte { return encode(build(draft07)) }

func encode(v obj) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		// The value is built from maps, slices, strings and numbers only.
		panic("guide: schema does not encode: " + err.Error())
	}
	return b.Bytes()
}

type obj = map[string]any

// field is one property: its camelCase name and its schema.
type field struct {
	name   string
	schema obj
}

// props turns fields into a properties object holding each name in both
// spellings.
func props(fields ...field) obj {
	out := obj{}
	for _, f := range fields {
		out[f.name] = f.schema
		if s := spell.Snake(f.name); s != f.name {
			out[s] = f.schema
		}
	}
	return out
}

func str(desc string) obj { return obj{"type": "string", "description": desc} }

func intRange(desc string, lo, hi int) obj {
	o := obj{"type": "integer", "description": desc, "minimum": lo}
	if hi > 0 {
		o["maximum"] = hi
	}
	return o
}

func enum(desc string, values ...string) obj {
	return obj{"type": "string", "description": desc, "enum": values}
}

// objectOf is a closed object: unknown fields are errors, as in the compiler.
func objectOf(desc string, properties obj, required ...string) obj {
	o := obj{"type": "object", "description": desc, "properties": properties, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// whenType applies then to steps whose type is t. def marks the type a
// step has when it names none.
func whenType(t string, def bool, then obj) obj {
	cond := obj{"properties": obj{"type": obj{"const": t}}}
	if !def {
		cond["required"] = []string{"type"}
	}
	return obj{"if": cond, "then": then}
}

// build returns the schema as a Go value for dialect d.
func build(d dialect) obj {
	ref := func(name string) obj { return obj{"$ref": "#/" + d.defs + "/" + name} }
	const durationPattern = `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`
	defs := obj{}
	defs["duration"] = obj{"type": "string", "pattern": durationPattern,
		"description": "Go duration such as 30s, 5m or 1h30m"}
	defs["template"] = obj{"type": "string",
		"description": "Go text/template over .params, .vars, .steps.<id>.output/status/error, .workflow.id, .workflow.status and .forEach; functions json, fromJson, quote and query (JMESPath: query EXPR VALUE, then optional name-value pairs bound as $name)"}
	defs["onError"] = objectOf("What a failed step does", props(
		field{"action", enum("abort (default), continue, or retry", "abort", "continue", "retry")},
		field{"maxRetries", intRange("Retries after the first attempt, only with action retry (at most 10)", 0, 0)},
		field{"retryCount", intRange("Synonym of maxRetries", 0, 0)},
		field{"retryDelay", ref("duration")},
		field{"maxDelay", obj{"$ref": "#/" + d.defs + "/duration", "description": "Longest wait between attempts (default 60s)"}},
		field{"multiplier", obj{"type": "number", "minimum": 1, "maximum": 10,
			"description": "Growth of the wait after each attempt (default 1.5)"}},
		field{"attemptTimeout", obj{"$ref": "#/" + d.defs + "/duration", "description": "Deadline of each attempt (default none: the step timeout bounds them all)"}},
		field{"retryOn", obj{"type": "array", "minItems": 1, "uniqueItems": true,
			"items":       enum("error: transport or backend process failure; timeout: attemptTimeout hit; toolError: an isError result", ir.RetryOnKinds...),
			"description": "The failures that are retried (default all)"}},
	))
	defs["response"] = objectOf("What an elicitation does when the user declines or cancels", props(
		field{"action", enum("abort (default), continue, or skip_remaining", "abort", "continue", "skip_remaining")},
	))
	defs["innerStep"] = objectOf("The tool or workflow step a forEach runs once per item", props(
		field{"id", str("Optional; the inner step takes the forEach's id")},
		field{"type", enum("tool (default) or workflow", "tool", "workflow")},
		field{"tool", ref("toolRef")},
		field{"workflow", ref("workflowName")},
		field{"arguments", obj{"type": "object", "description": "Tool arguments (a workflow's parameters); strings are templates"}},
		field{"condition", ref("template")},
		field{"timeout", ref("duration")},
		field{"onError", ref("onError")},
		field{"defaultResults", obj{"description": "Output of an iteration that is skipped or fails with continue"}},
		field{"idempotent", idempotentField},
	))
	defs["innerStep"].(obj)["allOf"] = []any{
		whenType("tool", true, obj{"required": []string{"tool"}}),
		whenType("workflow", false, obj{"required": []string{"workflow"}}),
	}
	defs["workflowName"] = obj{"type": "string", "pattern": `^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$`, "maxLength": 64,
		"description": "Name of another composite tool compiled or served with this one; it runs as a child run"}
	defs["toolRef"] = obj{"type": "string", "pattern": `^[^.\s]+(\.[^\s]+)?$`,
		"description": "backend.tool_name, or a bare tool_name or aggregated backend_tool_name that exactly one backend tool matches"}
	defs["step"] = obj{
		"type":        "object",
		"description": "One step of the workflow",
		"properties": props(
			field{"id", obj{"type": "string", "minLength": 1, "description": "Unique step id"}},
			field{"type", enum("tool (default), elicitation, forEach or workflow", "tool", "elicitation", "forEach", "workflow")},
			field{"dependsOn", obj{"type": "array", "items": obj{"type": "string"}, "uniqueItems": true,
				"description": "Ids of the steps that must finish first"}},
			field{"condition", ref("template")},
			field{"onError", ref("onError")},
			field{"timeout", ref("duration")},
			field{"defaultResults", obj{"description": "Output used when the step is skipped or fails with continue"}},
			field{"tool", ref("toolRef")},
			field{"arguments", obj{"type": "object", "description": "Tool arguments; strings are templates at any depth"}},
			field{"message", ref("template")},
			field{"schema", obj{"type": "object", "description": "JSON Schema of the form the user fills in"}},
			field{"onDecline", ref("response")},
			field{"onCancel", ref("response")},
			field{"collection", obj{"description": "A template that yields an array, or a literal list whose strings are templates",
				"oneOf": []any{ref("template"), obj{"type": "array"}}}},
			field{"itemVar", obj{"type": "string", "pattern": `^[A-Za-z_][A-Za-z0-9_]*$`, "not": obj{"const": "index"},
				"description": "Name of the current item under .forEach (default item; index is reserved)"}},
			field{"maxParallel", intRange("Iterations running at once (default 10)", 1, 50)},
			field{"maxIterations", intRange("Most items processed (default 100; at most limits.maxIterations, default 1000)", 1, 0)},
			field{"step", ref("innerStep")},
			field{"steps", obj{"type": "array", "items": ref("step"), "minItems": 1, "maxItems": 100,
				"description": "The loop body: steps run once per item as a graph of their own; they read this iteration's body steps, every enclosing loop's item under .forEach and the steps the loop depends on. Loops nest at most 3 deep"}},
			field{"output", obj{"allOf": []any{ref("output")},
				"description": "Shapes each iteration's output from the body (default: the single sink's output, or an object keyed by sink id)"}},
			field{"workflow", ref("workflowName")},
			field{"idempotent", idempotentField},
		),
		"required":             []string{"id"},
		"additionalProperties": false,
		"allOf": []any{
			whenType("tool", true, obj{"required": []string{"tool"}}),
			whenType("elicitation", false, obj{"required": []string{"message", "schema"}}),
			whenType("forEach", false, obj{"required": []string{"collection"},
				"oneOf": []any{obj{"required": []string{"step"}}, obj{"required": []string{"steps"}}}}),
			whenType("workflow", false, obj{"required": []string{"workflow"}}),
		},
	}
	// A finally step is a step that cannot ask the user or abort.
	defs["finallyStep"] = obj{
		"description": "A step that runs after every other step has ended, whatever the outcome; it reads .workflow.status and any step, and cannot change the run's status",
		"allOf": []any{ref("step"), obj{"properties": props(
			field{"type", enum("tool (default) or forEach; a finally step cannot be an elicitation", "tool", "forEach")},
			field{"onError", obj{"properties": obj{
				"action": enum("continue or retry; a failed finally step never stops the others", "continue", "retry"),
			}}},
		)}},
	}
	defs["outputProperty"] = objectOf("One field of the composite tool's result", props(
		field{"type", enum("JSON type of the value", "string", "number", "integer", "boolean", "object", "array")},
		field{"description", str("")},
		field{"value", ref("template")},
		field{"default", obj{"description": "Used when the value template yields nothing"}},
		field{"properties", obj{"type": "object", "additionalProperties": ref("outputProperty")}},
		field{"required", obj{"type": "array", "items": obj{"type": "string"}}},
	))
	defs["output"] = objectOf("The composite tool's typed result", props(
		field{"properties", obj{"type": "object", "additionalProperties": ref("outputProperty")}},
		field{"required", obj{"type": "array", "items": obj{"type": "string"}}},
	), "properties")
	boolHint := func(d string) obj { return obj{"type": "boolean", "description": d} }
	defs["annotations"] = objectOf("MCP tool annotations", props(
		field{"title", str("Human-readable title")},
		field{"readOnlyHint", boolHint("The tool does not modify its environment")},
		field{"destructiveHint", boolHint("The tool may perform destructive updates")},
		field{"idempotentHint", boolHint("Repeated calls with the same arguments have no further effect")},
		field{"openWorldHint", boolHint("The tool interacts with an open world of external entities")},
	))
	defs["workflow"] = objectOf("A composite tool", props(
		field{"name", obj{"type": "string", "pattern": `^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$`, "minLength": 1, "maxLength": 64,
			"description": "Tool name exposed to clients"}},
		field{"description", obj{"type": "string", "minLength": 1, "description": "What the tool does (required)"}},
		field{"parameters", obj{"type": "object",
			"description": "Input parameters: a JSON Schema object, or the shorthand {name: {type, description, required, default}}"}},
		field{"timeout", ref("duration")},
		field{"failureMode", enum("abort (default) or continue", "abort", "continue")},
		field{"maxParallel", intRange("Steps running at once (default 10)", 1, 0)},
		field{"vars", obj{"type": "object", "description": "Named values (templates over .params) evaluated once at start"}},
		field{"output", ref("output")},
		field{"annotations", ref("annotations")},
		field{"steps", obj{"type": "array", "items": ref("step"), "minItems": 1, "maxItems": 100}},
		field{"finally", obj{"type": "array", "items": ref("finallyStep"), "maxItems": 100,
			"description": "Steps that run once every other step has ended (cleanup, notification), each bounded by its own timeout"}},
	), "name", "description", "steps")
	workflows := obj{"type": "array", "items": ref("workflow")}
	defs["config"] = obj{
		"type":        "object",
		"description": "A vMCP config holding composite tools",
		"properties":  props(field{"compositeTools", workflows}),
		"anyOf": []any{
			obj{"required": []string{"compositeTools"}},
			obj{"required": []string{"composite_tools"}},
		},
	}
	defs["resource"] = obj{
		"type":        "object",
		"description": "A Kubernetes resource; only VirtualMCPCompositeToolDefinition documents are workflows, others are skipped",
		"properties": obj{
			"apiVersion": obj{"type": "string"},
			"kind":       obj{"type": "string"},
			"metadata":   obj{"type": "object"},
		},
		"required": []string{"apiVersion", "kind"},
		"if":       obj{"properties": obj{"kind": obj{"const": "VirtualMCPCompositeToolDefinition"}}},
		"then": obj{
			"properties": obj{
				"apiVersion": obj{"enum": []string{"toolhive.stacklok.dev/v1alpha1", "toolhive.stacklok.dev/v1beta1"}},
				"spec":       ref("workflow"),
			},
			"required": []string{"spec"},
		},
	}
	// A document is a resource when it has a kind, a bare workflow when it
	// has steps, and otherwise a config (the parser's order).
	return obj{
		"$schema":     d.schema,
		"$id":         d.id,
		"title":       "vmcp composite tool workflow",
		"description": "A VirtualMCPCompositeToolDefinition resource, a config with compositeTools, or a bare workflow (name, description, steps)",
		"type":        "object",
		"if":          obj{"required": []string{"kind"}},
		"then":        ref("resource"),
		"else": obj{
			"if":   obj{"required": []string{"steps"}},
			"then": ref("workflow"),
			"else": ref("config"),
		},
		d.defs: defs,
	}
}

// idempotentField is the schema of a step's idempotent promise.
var idempotentField = obj{"type": "boolean",
	"description": "Calling this tool step twice has the effect of calling it once: a run resumed after a crash may call it again when its first call was in flight (default false; the tool's idempotentHint or readOnlyHint counts too)"}
