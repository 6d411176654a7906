package cluster

import (
	"encoding/json"
	"testing"
)

func TestGenerateIsDeterministic(t *testing.T) {
	a, err := Generate(Paper)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(Paper)
	ja, _ := json.Marshal(a.objects)
	jb, _ := json.Marshal(b.objects)
	if string(ja) != string(jb) {
		t.Fatalf("Generate(Paper) twice gave different clusters")
	}
	// A fixed shape gives fixed sizes: a change to the generator that
	// changes the cluster must change these on purpose.
	if got := a.Expected(); got.Nodes != 1017 || got.Relationships != 2854 {
		t.Errorf("Generate(Paper).Expected() = %d nodes, %d relationships; want 1017, 2854", got.Nodes, got.Relationships)
	}
}

func TestGenerateHasThePapersShape(t *testing.T) {
	cl, err := Generate(Paper)
	if err != nil {
		t.Fatal(err)
	}
	if len(cl.Kinds) != 22 {
		t.Errorf("kinds = %d; want 22", len(cl.Kinds))
	}
	if n := len(cl.List("Node", "")); n != 13 {
		t.Errorf("nodes = %d; want 13", n)
	}
	if n := len(cl.List("Namespace", "")); n != 38 {
		t.Errorf("namespaces = %d; want 38", n)
	}
	// Every kind has objects somewhere, and every namespaced object lives
	// in a namespace of the cluster.
	for _, k := range cl.Kinds {
		n := len(cl.List(k.Name, ""))
		for _, ns := range cl.NamespaceNames() {
			n += len(cl.List(k.Name, ns))
		}
		if n == 0 {
			t.Errorf("kind %s has no objects", k.Name)
		}
		if k.Namespaced && len(cl.List(k.Name, "")) != 0 {
			t.Errorf("namespaced kind %s has cluster-scoped objects", k.Name)
		}
	}
	// Every reference points at a generated object of the kind it names.
	kindOf := map[string]string{cl.Self.UID: "Cluster"}
	uids := map[string]bool{}
	for _, o := range cl.objects {
		if uids[o.UID] {
			t.Errorf("duplicate uid %s", o.UID)
		}
		uids[o.UID] = true
		kindOf[o.UID] = o.Kind
	}
	for _, o := range cl.objects {
		for _, r := range o.Refs {
			if kindOf[r.UID] != r.Kind {
				t.Errorf("%s: %s reference to %s (%s) points at a %q", o.UID, r.Type, r.UID, r.Kind, kindOf[r.UID])
			}
		}
	}
	// The paper's sizes: 1,200+ nodes, 2,800+ relationships; ours are of
	// that order.
	e := cl.Expected()
	if e.Nodes < 900 || e.Relationships < 2500 {
		t.Errorf("Expected() = %d nodes, %d relationships; want the paper's order (about 1,200 and 2,800)", e.Nodes, e.Relationships)
	}
}

func TestGenerateFortyKinds(t *testing.T) {
	cl, err := Generate(Config{Kinds: 40})
	if err != nil {
		t.Fatal(err)
	}
	base, _ := Generate(Paper)
	if len(cl.Kinds) != 40 {
		t.Fatalf("kinds = %d; want 40", len(cl.Kinds))
	}
	// The extra kinds add objects and leave the 22 base kinds as they were.
	var names []string
	for _, k := range BaseKinds {
		names = append(names, k.Name)
	}
	if got, want := cl.Expected(names...), base.Expected(); got.Nodes != want.Nodes || got.Relationships != want.Relationships {
		t.Errorf("40-kind cluster restricted to the base kinds = %d/%d; want the 22-kind cluster's %d/%d", got.Nodes, got.Relationships, want.Nodes, want.Relationships)
	}
	if cl.Expected().Nodes <= base.Expected().Nodes {
		t.Errorf("40 kinds add no objects")
	}
}

func TestGenerateRejectsBadShapes(t *testing.T) {
	for _, c := range []Config{{Kinds: 21}, {Kinds: 41}, {Namespaces: 39}, {Nodes: -1}} {
		if _, err := Generate(c); err == nil {
			t.Errorf("Generate(%+v) = nil error; want one", c)
		}
	}
}
