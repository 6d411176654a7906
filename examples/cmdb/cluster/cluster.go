package cluster

// The generator. A cluster is built in one deterministic pass:
//
//  1. cluster-scoped objects: the Cluster itself, the nodes, storage
//     classes, cluster roles, CRDs and, with more than 22 kinds, the extra
//     cluster-scoped kinds;
//  2. per namespace, in order: service accounts, config maps, secrets,
//     roles and role bindings, then workloads (deployments with their
//     replica sets and pods, stateful sets with their pods, claims and
//     volumes, daemon sets, cron jobs with their jobs and pods), services
//     selecting the workloads' pods, ingresses routing to services, and the
//     extra namespaced kinds;
//  3. cluster role bindings, which bind service accounts of any namespace.
//
// How many objects of a kind a namespace holds, and which node a pod runs
// on, come from an FNV-1a hash of the names involved (pick), never from a
// random generator, so the cluster depends on the Config alone. Every
// reference points at an object that was generated, so a sync that merges
// every object and every reference yields exactly Expected().

import (
	"fmt"
	"hash/fnv"
	"sort"
)

// Kind is a resource kind of the synthetic cluster's API.
type Kind struct {
	Name       string
	Namespaced bool
}

// BaseKinds are the 22 kinds of the paper's cluster, in API order.
var BaseKinds = []Kind{
	{"Node", false}, {"Namespace", false}, {"StorageClass", false}, {"PersistentVolume", false},
	{"ClusterRole", false}, {"ClusterRoleBinding", false}, {"CustomResourceDefinition", false},
	{"Pod", true}, {"Deployment", true}, {"ReplicaSet", true}, {"StatefulSet", true},
	{"DaemonSet", true}, {"Job", true}, {"CronJob", true}, {"Service", true}, {"Ingress", true},
	{"ConfigMap", true}, {"Secret", true}, {"ServiceAccount", true}, {"Role", true},
	{"RoleBinding", true}, {"PersistentVolumeClaim", true},
}

// ExtraKinds take the cluster to 40 kinds (Config.Kinds = 40). Their
// objects reference only base kinds, so a 22-kind sync is complete
// without them.
var ExtraKinds = []Kind{
	{"PriorityClass", false}, {"IngressClass", false}, {"ValidatingWebhookConfiguration", false},
	{"MutatingWebhookConfiguration", false}, {"CSIDriver", false}, {"RuntimeClass", false},
	{"APIService", false}, {"VolumeSnapshotClass", false},
	{"HorizontalPodAutoscaler", true}, {"PodDisruptionBudget", true}, {"NetworkPolicy", true},
	{"LimitRange", true}, {"ResourceQuota", true}, {"Endpoints", true}, {"EndpointSlice", true},
	{"Lease", true}, {"ControllerRevision", true}, {"PodTemplate", true},
}

// MaxKinds is the number of kinds the generator knows.
var MaxKinds = len(BaseKinds) + len(ExtraKinds)

// Config is the shape of a cluster.
type Config struct {
	Name       string // the cluster's name (default atlas-prod)
	Nodes      int    // worker nodes (default 13)
	Namespaces int    // namespaces (default 38, at most len(NamespaceNames))
	Kinds      int    // 22 (default) to 40 resource kinds
}

// Paper is the cluster of the paper's evaluation.
var Paper = Config{Name: "atlas-prod", Nodes: 13, Namespaces: 38, Kinds: 22}

// NamespaceNames are the names of the first namespaces, in order.
var NamespaceNames = []string{
	"platform-core", "data-services", "ml-workloads", "ingress-system", "monitoring", "logging",
	"cert-manager", "payments", "checkout", "catalog", "search", "recommendations", "identity",
	"notifications", "billing", "inventory", "shipping", "analytics", "etl-batch", "feature-store",
	"model-serving", "vector-db", "cache", "queueing", "api-gateway", "web-frontend", "mobile-bff",
	"partner-api", "fraud-detection", "risk-scoring", "reporting", "backoffice", "ci-runners",
	"artifact-registry", "secrets-sync", "backup", "chaos-testing", "sandbox",
}

// Ref is a reference from one object to another: a relationship of the
// graph, from the object that holds it.
type Ref struct {
	Type string `json:"type"`
	Kind string `json:"kind"`
	UID  string `json:"uid"`
}

// Object is one resource, as the fake API lists it.
type Object struct {
	Kind      string `json:"kind"`
	UID       string `json:"uid"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	Refs      []Ref  `json:"refs"`
}

// Cluster is a generated cluster.
type Cluster struct {
	Config  Config
	Kinds   []Kind
	Self    Object   // the Cluster object (kind Cluster)
	objects []Object // every object but Self, in generation order
	// byList indexes objects by kind and namespace ("" for cluster
	// scope); the values index objects.
	byList map[listKey][]int
}

type listKey struct{ kind, namespace string }

// Generate builds the cluster of c; zero fields take Paper's values. It
// returns an error for a shape it cannot build.
func Generate(c Config) (*Cluster, error) {
	if c.Name == "" {
		c.Name = Paper.Name
	}
	if c.Nodes == 0 {
		c.Nodes = Paper.Nodes
	}
	if c.Namespaces == 0 {
		c.Namespaces = Paper.Namespaces
	}
	if c.Kinds == 0 {
		c.Kinds = Paper.Kinds
	}
	switch {
	case c.Nodes < 1:
		return nil, fmt.Errorf("cluster: nodes must be at least 1, not %d", c.Nodes)
	case c.Namespaces < 1 || c.Namespaces > len(NamespaceNames):
		return nil, fmt.Errorf("cluster: namespaces must be 1 to %d, not %d", len(NamespaceNames), c.Namespaces)
	case c.Kinds < len(BaseKinds) || c.Kinds > MaxKinds:
		return nil, fmt.Errorf("cluster: kinds must be %d to %d, not %d", len(BaseKinds), MaxKinds, c.Kinds)
	}
	g := &generator{cl: &Cluster{
		Config: c,
		Kinds:  append(append([]Kind{}, BaseKinds...), ExtraKinds[:c.Kinds-len(BaseKinds)]...),
		byList: map[listKey][]int{},
	}}
	g.build()
	return g.cl, nil
}

// List returns the objects of kind in namespace ("" for a cluster-scoped
// kind), in generation order. The slice is shared; do not modify it.
func (cl *Cluster) List(kind, namespace string) []Object {
	idx := cl.byList[listKey{kind, namespace}]
	out := make([]Object, len(idx))
	for i, j := range idx {
		out[i] = cl.objects[j]
	}
	return out
}

// Kind returns the kind called name, and whether the cluster has it.
func (cl *Cluster) Kind(name string) (Kind, bool) {
	for _, k := range cl.Kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// NamespaceNames returns the cluster's namespaces, in order.
func (cl *Cluster) NamespaceNames() []string {
	return NamespaceNames[:cl.Config.Namespaces]
}

// Counts is the size of a graph: nodes and relationships, in total and
// by node label (the object's kind) and relationship type.
type Counts struct {
	Nodes         int            `json:"nodes"`
	Relationships int            `json:"relationships"`
	ByLabel       map[string]int `json:"byLabel"`
	ByType        map[string]int `json:"byType"`
}

// Expected is the graph that a sync of the given kinds (every kind of the
// cluster when none are given) must produce: one node per object plus the
// Cluster node, one relationship per reference whose two ends are synced.
func (cl *Cluster) Expected(kinds ...string) Counts {
	synced := map[string]bool{"Cluster": true}
	if len(kinds) == 0 {
		for _, k := range cl.Kinds {
			synced[k.Name] = true
		}
	}
	for _, k := range kinds {
		synced[k] = true
	}
	c := Counts{Nodes: 1, ByLabel: map[string]int{"Cluster": 1}, ByType: map[string]int{}}
	for _, o := range cl.objects {
		if !synced[o.Kind] {
			continue
		}
		c.Nodes++
		c.ByLabel[o.Kind]++
		for _, r := range o.Refs {
			if synced[r.Kind] {
				c.Relationships++
				c.ByType[r.Type]++
			}
		}
	}
	return c
}

// Objects returns how many objects the cluster has, the Cluster object
// excluded.
func (cl *Cluster) Objects() int { return len(cl.objects) }

type generator struct {
	cl *Cluster
}

// pick is a number in [lo, hi] chosen by the hash of parts.
func pick(lo, hi int, parts ...string) int {
	h := fnv.New32a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return lo + int(h.Sum32()%uint32(hi-lo+1))
}

func uid(kind, namespace, name string) string {
	if namespace == "" {
		return kind + "/" + name
	}
	return kind + "/" + namespace + "/" + name
}

// add records an object and returns its uid.
func (g *generator) add(kind, namespace, name string, refs ...Ref) string {
	o := Object{Kind: kind, UID: uid(kind, namespace, name), Name: name, Namespace: namespace, Refs: refs}
	if o.Refs == nil {
		o.Refs = []Ref{}
	}
	if namespace != "" {
		o.Refs = append([]Ref{{"IN_NAMESPACE", "Namespace", uid("Namespace", "", namespace)}}, o.Refs...)
	}
	g.cl.byList[listKey{kind, namespace}] = append(g.cl.byList[listKey{kind, namespace}], len(g.cl.objects))
	g.cl.objects = append(g.cl.objects, o)
	return o.UID
}

func ref(typ, kind, uid string) Ref { return Ref{Type: typ, Kind: kind, UID: uid} }

func (g *generator) hasKind(name string) bool {
	_, ok := g.cl.Kind(name)
	return ok
}

func (g *generator) build() {
	c := g.cl.Config
	cl := uid("Cluster", "", c.Name)
	g.cl.Self = Object{Kind: "Cluster", UID: cl, Name: c.Name, Refs: []Ref{}}
	partOf := ref("PART_OF", "Cluster", cl)

	nodes := make([]string, c.Nodes)
	for i := range nodes {
		nodes[i] = g.add("Node", "", fmt.Sprintf("node-alpha-%02d", i+1), partOf)
	}
	classes := []string{"standard", "fast-ssd", "archive"}
	for i, sc := range classes {
		classes[i] = g.add("StorageClass", "", sc, partOf)
	}
	clusterRoles := []string{"cluster-admin", "admin", "edit", "view", "monitoring-reader", "ingress-controller", "cert-issuer", "backup-operator"}
	for i, r := range clusterRoles {
		clusterRoles[i] = g.add("ClusterRole", "", r, partOf)
	}
	for _, crd := range []string{"certificates.cert-manager.io", "issuers.cert-manager.io", "servicemonitors.monitoring.coreos.com", "prometheusrules.monitoring.coreos.com", "kafkatopics.kafka.strimzi.io", "backups.velero.io"} {
		g.add("CustomResourceDefinition", "", crd, partOf)
	}
	for _, k := range g.cl.Kinds[len(BaseKinds):] {
		if !k.Namespaced {
			for i := 1; i <= 2; i++ {
				g.add(k.Name, "", fmt.Sprintf("%s-%d", kebab(k.Name), i), partOf)
			}
		}
	}

	var accounts []string // every service account, for cluster role bindings
	for _, ns := range g.cl.NamespaceNames() {
		g.add("Namespace", "", ns, partOf)
		accounts = append(accounts, g.namespace(ns, nodes, classes)...)
	}
	for i, cr := range clusterRoles {
		sa := accounts[pick(0, len(accounts)-1, "crb", clusterRoles[i])]
		g.add("ClusterRoleBinding", "", fmt.Sprintf("crb-%d", i+1), ref("BINDS_ROLE", "ClusterRole", cr), ref("BINDS_SUBJECT", "ServiceAccount", sa))
	}
}

// namespace generates one namespace's objects and returns its service
// accounts.
func (g *generator) namespace(ns string, nodes, classes []string) []string {
	sas := make([]string, pick(1, 3, ns, "sa"))
	for i := range sas {
		sas[i] = g.add("ServiceAccount", ns, fmt.Sprintf("sa-%d", i+1))
	}
	cms := make([]string, pick(2, 4, ns, "cm"))
	for i := range cms {
		cms[i] = g.add("ConfigMap", ns, fmt.Sprintf("config-%d", i+1))
	}
	secrets := make([]string, pick(1, 3, ns, "secret"))
	for i := range secrets {
		secrets[i] = g.add("Secret", ns, fmt.Sprintf("secret-%d", i+1))
	}
	role := g.add("Role", ns, "app-role")
	g.add("RoleBinding", ns, "app-role-binding", ref("BINDS_ROLE", "Role", role), ref("BINDS_SUBJECT", "ServiceAccount", sas[0]))

	// pod generates one pod owned by owner (kind ownerKind), with its
	// node, account, config and secret, plus mounts.
	pod := func(name, ownerKind, owner string, mounts ...Ref) string {
		refs := []Ref{
			ref("OWNED_BY", ownerKind, owner),
			ref("RUNS_ON", "Node", nodes[pick(0, len(nodes)-1, ns, name, "node")]),
			ref("RUNS_AS", "ServiceAccount", sas[pick(0, len(sas)-1, ns, name, "sa")]),
			ref("USES_CONFIG", "ConfigMap", cms[pick(0, len(cms)-1, ns, name, "cm")]),
			ref("USES_SECRET", "Secret", secrets[pick(0, len(secrets)-1, ns, name, "secret")]),
		}
		return g.add("Pod", ns, name, append(refs, mounts...)...)
	}
	type workload struct {
		kind, uid, name string
		pods            []string
	}
	var workloads []workload
	for d := 1; d <= pick(1, 3, ns, "deploy"); d++ {
		name := fmt.Sprintf("app-%d", d)
		w := workload{kind: "Deployment", name: name, uid: g.add("Deployment", ns, name)}
		rsName := fmt.Sprintf("%s-%x", name, pick(0x1000, 0xffff, ns, name, "rs"))
		rs := g.add("ReplicaSet", ns, rsName, ref("OWNED_BY", "Deployment", w.uid))
		for p := 1; p <= pick(1, 4, ns, name, "replicas"); p++ {
			w.pods = append(w.pods, pod(fmt.Sprintf("%s-%d", rsName, p), "ReplicaSet", rs))
		}
		workloads = append(workloads, w)
	}
	if pick(0, 1, ns, "sts") == 0 {
		name := "db"
		w := workload{kind: "StatefulSet", name: name, uid: g.add("StatefulSet", ns, name)}
		for p := 0; p < pick(1, 3, ns, "sts-replicas"); p++ {
			podName := fmt.Sprintf("%s-%d", name, p)
			class := classes[pick(0, len(classes)-1, ns, podName, "class")]
			pv := g.add("PersistentVolume", "", fmt.Sprintf("pv-%s-%s", ns, podName), ref("USES_STORAGE_CLASS", "StorageClass", class), ref("PART_OF", "Cluster", g.cl.Self.UID))
			pvc := g.add("PersistentVolumeClaim", ns, "data-"+podName, ref("BOUND_TO", "PersistentVolume", pv), ref("USES_STORAGE_CLASS", "StorageClass", class))
			w.pods = append(w.pods, pod(podName, "StatefulSet", w.uid, ref("MOUNTS", "PersistentVolumeClaim", pvc)))
		}
		workloads = append(workloads, w)
	}
	if pick(0, 3, ns, "ds") == 0 {
		ds := g.add("DaemonSet", ns, "node-agent")
		for i := 0; i < 2; i++ {
			pod(fmt.Sprintf("node-agent-%d", i), "DaemonSet", ds)
		}
	}
	if pick(0, 3, ns, "cron") == 0 {
		cj := g.add("CronJob", ns, "nightly")
		job := g.add("Job", ns, "nightly-1", ref("OWNED_BY", "CronJob", cj))
		pod("nightly-1-run", "Job", job)
	}
	var services []string
	for _, w := range workloads {
		refs := []Ref{ref("EXPOSES", w.kind, w.uid)}
		for _, p := range w.pods {
			refs = append(refs, ref("SELECTS", "Pod", p))
		}
		services = append(services, g.add("Service", ns, w.name, refs...))
	}
	if pick(0, 1, ns, "ingress") == 0 {
		g.add("Ingress", ns, "public", ref("ROUTES_TO", "Service", services[0]))
	}
	for _, k := range g.cl.Kinds[len(BaseKinds):] {
		if k.Namespaced {
			for i := 1; i <= pick(0, 1, ns, k.Name); i++ {
				g.add(k.Name, ns, fmt.Sprintf("%s-%d", kebab(k.Name), i))
			}
		}
	}
	return sas
}

// kebab turns a kind name into a resource name: PriorityClass ->
// priorityclass.
func kebab(kind string) string {
	b := []byte(kind)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// SortedKeys returns m's keys in order, for deterministic printing.
func SortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
