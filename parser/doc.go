// Package parser reads composite-tool workflow sources into a syntax tree
// with exact positions.
//
// In: one file's name and bytes, in any of the source formats of the design
// (a multi-document YAML stream is normal):
//   - Kubernetes VirtualMCPCompositeToolDefinition resources
//     (apiVersion toolhive.stacklok.dev/v1alpha1 or v1beta1), the workflow
//     under spec; documents of other kinds are recorded in File.Skipped;
//   - vMCP configs with a compositeTools (or composite_tools) list, whose
//     other keys are ignored;
//   - bare workflow definitions (a top-level mapping with steps);
//   - JSON of any of these.
//
// Documents that are none of these (an empty document, a config without
// composite tools, a mapping without kind, compositeTools or steps) are
// recorded in File.Skipped with a description as their Kind.
//
// Out: a File holding one Workflow per definition, in source order. Every
// field of a Workflow, Step, OnError, ... is the raw Node of its value (nil
// when absent): the parser accepts each field in camelCase and snake_case
// (and retryCount for maxRetries) but does not judge kinds or values; the
// checker does. An object written as something other than a mapping (a step
// that is a string, say) keeps only its Node. Keys that name no field are
// listed in File.Unknown, in file order, for the checker to report with a
// hint. Each Node knows its position, its YAML path relative to the
// workflow (steps[2].arguments.body) and, for strings, how to map an offset
// inside the value back to a file line and column (Node.OffsetPos), whatever
// the scalar style; the table behind it (Node.Segments) is an
// []ir.Segment, which the compiler keeps in ir.Template so that the runtime
// maps offsets with the same function, ir.OffsetPos. Scalars hold nil, bool, int64, float64 or string; dates,
// durations and .inf stay the strings the user wrote.
//
// Alongside the File, Parse returns diagnostics (codes in errors.go) for what
// stopped it from building the tree: YAML syntax errors (one per broken
// document; the other documents are still parsed), documents that are not
// mappings, duplicate keys and duplicate spellings of one field, aliases
// that name no anchor or expand beyond 100,000 values, nesting deeper than
// 200 levels, and files that are not UTF-8. Parse never panics, and its
// cost stays close to linear in the size of the input.
//
// Entry point: [Parse]. The algorithms are explained at the top of
// split.go (documents), node.go (conversion, aliases, limits), fields.go
// (field matching) and scalar.go (template positions).
package parser
