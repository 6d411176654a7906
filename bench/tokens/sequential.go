package main

// Making a workflow sequential, for a measurement that gives the same
// bytes on every run. The example servers answer some calls with numbers
// that depend on the order of the calls (the graph's "created" counts:
// merging relationships creates the end nodes that a parallel step has not
// merged yet), so parallel steps would change a few bytes from run to run.
// Sequential rewrites the source so that everything runs one at a time in
// file order: each step of a step list (top level, finally, loop bodies)
// also depends on the step before it, and the workflow and every loop get
// maxParallel: 1. An agent in the loop makes its calls one at a time too;
// the calls and what they carry are those of the workflow as written.
//
// The rewrite works on the decoded document (any of the source forms:
// a Kubernetes resource, a compositeTools list or a bare workflow) and
// returns it as JSON, which vmcp compiles like the YAML.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/goccy/go-yaml"
)

// Sequential returns the workflows of src, made sequential, as one JSON
// document: {"compositeTools": [...]}.
func Sequential(src []byte) ([]byte, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var workflows []any
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch {
		case doc["kind"] == "VirtualMCPCompositeToolDefinition":
			workflows = append(workflows, doc["spec"])
		case doc["compositeTools"] != nil:
			list, _ := doc["compositeTools"].([]any)
			workflows = append(workflows, list...)
		case doc["steps"] != nil:
			workflows = append(workflows, doc)
		}
	}
	if len(workflows) == 0 {
		return nil, errors.New("no workflow in the file")
	}
	for _, w := range workflows {
		wf, ok := w.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("a workflow is a %T, not a mapping", w)
		}
		wf["maxParallel"] = 1
		chain(wf["steps"])
		chain(wf["finally"])
	}
	return json.Marshal(map[string]any{"compositeTools": workflows})
}

// chain makes each step of a step list depend on the one before it, and
// every loop in it run one iteration at a time.
func chain(list any) {
	steps, _ := list.([]any)
	prev := ""
	for _, s := range steps {
		st, ok := s.(map[string]any)
		if !ok {
			continue
		}
		if deps := dependsOn(st); prev != "" && !contains(deps, prev) {
			st["dependsOn"] = append(deps, prev)
			delete(st, "depends_on")
		}
		if st["type"] == "forEach" {
			st["maxParallel"] = 1
			delete(st, "max_parallel")
			chain(st["steps"])
		}
		prev, _ = st["id"].(string)
	}
}

// dependsOn returns a step's dependencies, in either spelling.
func dependsOn(st map[string]any) []any {
	for _, key := range []string{"dependsOn", "depends_on"} {
		if deps, ok := st[key].([]any); ok {
			return deps
		}
	}
	return nil
}

func contains(list []any, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
