package main

import (
	"fmt"
	"sync"

	"github.com/vmcp-dev/vmcp/examples/cmdb/cluster"
)

// Node is a graph node as merge_nodes takes it.
type Node struct {
	UID       string `json:"uid"`
	Label     string `json:"label"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// Relationship is a graph relationship as merge_relationships takes it.
type Relationship struct {
	From string `json:"from"`
	Type string `json:"type"`
	To   string `json:"to"`
}

// store is the in-memory graph. Calls arrive concurrently, so every
// method holds mu.
type store struct {
	mu    sync.Mutex
	nodes map[string]*Node
	rels  map[Relationship]bool
}

func newStore() *store {
	return &store{nodes: map[string]*Node{}, rels: map[Relationship]bool{}}
}

// mergeNodes merges ns and returns how many were new. A node that exists
// with another label is an error (two objects claiming one uid), and
// nothing of the call is merged.
func (s *store) mergeNodes(ns []Node) (created int, err error) {
	for i, n := range ns {
		if n.UID == "" || n.Label == "" {
			return 0, fmt.Errorf("nodes[%d]: uid and label are required", i)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, n := range ns {
		if old := s.nodes[n.UID]; old != nil && old.Label != "" && old.Label != n.Label {
			return 0, fmt.Errorf("nodes[%d]: uid %q is already a %s node, not a %s", i, n.UID, old.Label, n.Label)
		}
	}
	for _, n := range ns {
		if s.nodes[n.UID] == nil {
			created++
		}
		n := n
		s.nodes[n.UID] = &n
	}
	return created, nil
}

// mergeRelationships merges rs and returns how many were new; missing
// ends become unlabeled nodes.
func (s *store) mergeRelationships(rs []Relationship) (created int, err error) {
	for i, r := range rs {
		if r.From == "" || r.Type == "" || r.To == "" {
			return 0, fmt.Errorf("relationships[%d]: from, type and to are required", i)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rs {
		for _, end := range []string{r.From, r.To} {
			if s.nodes[end] == nil {
				s.nodes[end] = &Node{UID: end}
			}
		}
		if !s.rels[r] {
			s.rels[r] = true
			created++
		}
	}
	return created, nil
}

// graphCounts is the counts tool's answer.
type graphCounts struct {
	cluster.Counts
	Unlabeled int `json:"unlabeled"`
}

func (s *store) counts() graphCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := graphCounts{Counts: cluster.Counts{
		Nodes: len(s.nodes), Relationships: len(s.rels),
		ByLabel: map[string]int{}, ByType: map[string]int{},
	}}
	for _, n := range s.nodes {
		if n.Label == "" {
			c.Unlabeled++
			continue
		}
		c.ByLabel[n.Label]++
	}
	for r := range s.rels {
		c.ByType[r.Type]++
	}
	return c
}
