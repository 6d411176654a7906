// Command k8s is the CMDB example's fake Kubernetes API: an MCP server on
// stdio (mark3labs/mcp-go) over the deterministic synthetic cluster of
// package cluster.
//
// Tools:
//   - get_cluster {}: the Cluster object {kind, uid, name, refs}.
//   - api_resources {}: the kinds, {kinds: [{name, namespaced}]}.
//   - list_resources {kind, namespace?}: {kind, namespace, count, items:
//     [{kind, uid, name, namespace, refs: [{type, kind, uid}]}]}. A
//     namespaced kind needs namespace; a cluster-scoped one refuses it.
//     Lists are not paginated: the largest (Pod in one namespace) holds
//     about a dozen objects.
//
// Flags: -kinds (22 or up to 40, as cluster.Config.Kinds), -namespaces,
// -nodes, and -latency (a Go duration added to every call; default
// $CMDB_K8S_LATENCY).
package main
