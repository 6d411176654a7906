// Package catalog holds the tool schemas of backend MCP servers: what vmcp
// learns by listing each backend's tools, and what `vmcpc tools pull` saves
// as a lock file so `vmcpc compile --tools` can check tool references offline.
//
// In: tool lists from backends, or a lock file. Out: a [Catalog] that the
// checker queries for backend and tool names, input schemas and MCP tool
// annotations, and that resolves bare and aggregated tool names
// ([Catalog.Resolve], resolve.go). Entry points: [Read], [Catalog.Encode],
// [Catalog.Tool], [Catalog.Resolve].
package catalog
