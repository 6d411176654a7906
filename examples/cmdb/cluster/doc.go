// Package cluster generates the synthetic Kubernetes cluster of the CMDB
// sync example (examples/cmdb): the shape of the cluster in the paper's
// evaluation (13 nodes, 38 namespaces, 22 resource kinds), with every
// object and every reference between objects derived from a hash of its
// names, so the same Config always yields the same cluster.
//
// In: a Config. Out: a *Cluster (Generate), whose List answers the fake
// Kubernetes API's list calls (examples/cmdb/k8s) and whose Expected gives
// the graph that a complete sync must produce, counted from the same
// objects (the e2e test and bench/cmdb compare the graph store against
// it).
package cluster
