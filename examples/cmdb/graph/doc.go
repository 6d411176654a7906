// Command graph is the CMDB example's graph database: an MCP server on
// stdio (mark3labs/mcp-go) holding a property graph in memory.
//
// Merging follows Cypher's MERGE: a node is identified by its uid and a
// relationship by (from, type, to), so merging the same data twice changes
// nothing, and the order of the merges does not matter. A relationship
// whose end is not a node yet creates that node without a label; merging
// the node later gives it its label, so the final graph is the same
// whichever arrives first.
//
// Tools:
//   - merge_nodes {nodes: [{uid, label, name, namespace?}]}: {merged, created}.
//   - merge_relationships {relationships: [{from, type, to}]}: {merged, created}.
//   - counts {}: {nodes, relationships, unlabeled, byLabel, byType}.
//
// Flags: -latency (a Go duration added to every call; default
// $CMDB_GRAPH_LATENCY).
package main
