// Package guide holds what an authoring agent reads: the workflow
// authoring guide (the vmcp://docs/workflows resource), the JSON Schema of
// the workflow format (vmcp://schema/workflow.json) and the text of the
// design_workflow prompt.
//
// In: nothing at run time; the guide is embedded markdown (guide.md) and
// the schema is built from Go tables. Out: [Markdown], [Schema] (JSON
// Schema 2020-12), [EditorSchema] (the same in draft-07, for `vmcpc
// schema`), [PromptArguments] and [DesignPrompt]. The MCP server
// (mcpserver, through authoring) registers them; this package knows
// nothing of MCP.
//
// None of it can go stale silently. The tests hold the guide and the
// schema to the language itself: every field of the parser's tables
// (parser.FieldTables) appears in the guide's field tables and in the
// schema, and nothing else does; every example in the guide compiles with
// the compiler against testdata/catalog.json; every "mistake" example
// yields exactly the diagnostic code the guide names next to it, on the
// line it marks; an example followed by a ```json run block runs on the
// engine against the backend answers the block gives and returns the
// block's result; the JMESPath function table lists exactly the functions
// the engine registers (runtime.QueryFunctions), and each query row (of
// functions, literals and traps) gives its result when the engine runs it
// (run_test.go); every example under examples/ and every corpus file the
// compiler accepts validates against the schema.
package guide
