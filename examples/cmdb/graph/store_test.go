package main

import (
	"fmt"
	"sync"
	"testing"
)

func TestStoreMergesLikeCypherMerge(t *testing.T) {
	s := newStore()
	// A relationship first: its ends become unlabeled nodes.
	if n, err := s.mergeRelationships([]Relationship{{"Pod/a", "RUNS_ON", "Node/x"}}); err != nil || n != 1 {
		t.Fatalf("mergeRelationships = %d, %v; want 1, nil", n, err)
	}
	if c := s.counts(); c.Nodes != 2 || c.Unlabeled != 2 {
		t.Errorf("counts = %+v; want 2 nodes, both unlabeled", c)
	}
	// Merging the nodes labels them without adding any; merging again
	// changes nothing.
	for range 2 {
		if _, err := s.mergeNodes([]Node{{UID: "Pod/a", Label: "Pod"}, {UID: "Node/x", Label: "Node"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.mergeRelationships([]Relationship{{"Pod/a", "RUNS_ON", "Node/x"}}); err != nil {
			t.Fatal(err)
		}
	}
	c := s.counts()
	if c.Nodes != 2 || c.Relationships != 1 || c.Unlabeled != 0 || c.ByLabel["Pod"] != 1 || c.ByType["RUNS_ON"] != 1 {
		t.Errorf("counts = %+v; want 2 labeled nodes and 1 RUNS_ON", c)
	}
}

func TestStoreRejectsBadInput(t *testing.T) {
	s := newStore()
	if _, err := s.mergeNodes([]Node{{UID: "a", Label: "Pod"}, {UID: "b"}}); err == nil {
		t.Errorf("mergeNodes without a label = nil error")
	}
	if c := s.counts(); c.Nodes != 0 {
		t.Errorf("a refused call merged %d nodes; want none", c.Nodes)
	}
	s.mergeNodes([]Node{{UID: "a", Label: "Pod"}})
	if _, err := s.mergeNodes([]Node{{UID: "a", Label: "Service"}}); err == nil {
		t.Errorf("relabelling a node = nil error; want one (two objects claim one uid)")
	}
	if _, err := s.mergeRelationships([]Relationship{{From: "a", Type: "X"}}); err == nil {
		t.Errorf("mergeRelationships without to = nil error")
	}
}

// TestStoreConcurrentMerges merges from many goroutines at once, as vmcp's
// parallel loops do; run with -race.
func TestStoreConcurrentMerges(t *testing.T) {
	s := newStore()
	var wg sync.WaitGroup
	for g := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				uid := fmt.Sprintf("n%d", i)
				s.mergeNodes([]Node{{UID: uid, Label: "L"}})
				s.mergeRelationships([]Relationship{{uid, fmt.Sprintf("T%d", g%2), "hub"}})
				s.counts()
			}
		}()
	}
	wg.Wait()
	if c := s.counts(); c.Nodes != 51 || c.Relationships != 100 {
		t.Errorf("counts = %d nodes, %d relationships; want 51, 100", c.Nodes, c.Relationships)
	}
}
