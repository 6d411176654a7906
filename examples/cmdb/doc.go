// Package cmdb is the paper's Kubernetes CMDB sync as a vmcp example: a
// cluster of 13 nodes, 38 namespaces and 22 resource kinds synced into a
// graph database through two MCP servers.
//
//   - cluster/: the deterministic synthetic cluster (the generator).
//   - k8s/ and graph/: the two MCP servers (stdio), a fake Kubernetes API
//     over that cluster and an in-memory graph store.
//   - cmdb_sync.yaml: the sync workflow (nested loops with multi-step
//     bodies); cmdb_sync_40kinds.yaml the same for a 40-kind cluster;
//     cmdb_sync_flat.yaml the same without loop bodies, for comparison;
//     vmcp.yaml serves cmdb_sync.
//   - fake/: what the two servers share (latency flag, stdio serving).
//   - cmdbtest/: builds the binaries and writes configs for the e2e test
//     and bench/cmdb.
//
// This package has no code of its own. Its test, e2e_test.go, runs the
// real `vmcp call` with the two servers as stdio processes and checks the
// graph's node and relationship counts, by label and by type, against
// the counts the generator gives for the same cluster. Entry point:
// go test ./examples/cmdb.
package cmdb
