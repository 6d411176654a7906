package main

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/compiler"
)

func TestSequential(t *testing.T) {
	src := `apiVersion: toolhive.stacklok.dev/v1beta1
kind: VirtualMCPCompositeToolDefinition
metadata: {name: x}
spec:
  name: w
  description: d
  steps:
    - {id: a, tool: b.t}
    - {id: b, tool: b.t}
    - {id: c, tool: b.t, depends_on: [a]}
    - id: loop
      type: forEach
      collection: [1, 2]
      max_parallel: 5
      steps:
        - {id: x, tool: b.t}
        - {id: y, tool: b.t, dependsOn: [x]}
`
	out, err := Sequential([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		CompositeTools []struct {
			MaxParallel int `json:"maxParallel"`
			Steps       []struct {
				ID          string   `json:"id"`
				DependsOn   []string `json:"dependsOn"`
				MaxParallel int      `json:"maxParallel"`
				Steps       []struct {
					ID        string   `json:"id"`
					DependsOn []string `json:"dependsOn"`
				} `json:"steps"`
			} `json:"steps"`
		} `json:"compositeTools"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	wf := doc.CompositeTools[0]
	var got []string
	for _, s := range wf.Steps {
		got = append(got, s.ID+"<-"+join(s.DependsOn))
		for _, b := range s.Steps {
			got = append(got, "  "+b.ID+"<-"+join(b.DependsOn))
		}
	}
	want := []string{"a<-", "b<-a", "c<-a,b", "loop<-c", "  x<-", "  y<-x"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sequential chains differ (-want +got):\n%s", diff)
	}
	if wf.MaxParallel != 1 || wf.Steps[3].MaxParallel != 1 {
		t.Errorf("maxParallel = %d, loop %d; want 1 and 1", wf.MaxParallel, wf.Steps[3].MaxParallel)
	}
	// The result still compiles, with no warning.
	if _, diags := compiler.Compile([]compiler.Source{{Name: "seq.json", Src: out}}, compiler.Options{}); len(diags) > 0 {
		t.Errorf("the sequential workflow does not compile cleanly: %v", diags)
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}
