// Package authoring lets agents write workflows over MCP: the vmcp_*
// authoring tools that `vmcp run` serves with authoring.enabled, and the
// versioned store that keeps what they save.
//
// In: a Service (NewService) built from a Store (MemoryStore, FileStore
// for authoring.dir, SQLiteStore for state.store: sqlite), the backends'
// live tool catalog, the workflows that came from files, the engine and
// the MCP server. Out: Tools, the seven tool handlers
// (vmcp_backend_tools, vmcp_workflow_check, _save, _run, _list, _get,
// _delete), and Register, which also adds the authoring guide, the
// workflow JSON Schema and the design_workflow prompt.
//
// Every draft goes through Compiler.Check: the compiler with the live
// catalog (the checks `vmcp run` applies to its files at startup), plus
// the authoring rules of errors.go (one workflow per source, the backends
// authoring.backends allows, names that workflows from files keep). A
// saved version is served at once: the engine gets the new workflow set
// (runtime.Engine.SetWorkflows) and the server the new tools
// (server.PublishWorkflows, which sends notifications/tools/list_changed).
// Service.List gives every served workflow with its version, for the
// console and the CLI.
package authoring
