package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/runtime"
)

// bodyBackend answers every call, failing k8s.list for the "bad" namespace.
type bodyBackend struct{}

func (bodyBackend) CallTool(_ context.Context, call runtime.ToolCall) (*runtime.ToolResult, error) {
	if call.Arguments["ns"] == "bad" && call.Tool == "pods" {
		return nil, errors.New("forbidden")
	}
	return &runtime.ToolResult{Structured: map[string]any{"items": []any{1}}}, nil
}

const bodyRunSrc = `
compositeTools:
  - name: per_ns
    description: nested bodies
    steps:
      - id: loop
        type: forEach
        collection: [ok, bad]
        itemVar: ns
        maxParallel: 1
        onError: {action: continue}
        steps:
          - id: pods
            tool: k8s.pods
            arguments: {ns: "{{.forEach.ns}}"}
          - id: kinds
            type: forEach
            dependsOn: [pods]
            collection: [a, b]
            itemVar: kind
            steps:
              - id: list
                tool: k8s.list
                arguments: {kind: "{{.forEach.kind}}", ns: "{{.forEach.ns}}"}
`

// TestPrintRunDetailBodies: runs show lists every body step under its
// loop, one row per iteration and step, nested loops indented, and names
// the failed body step's error; the API detail carries the same records,
// also after a round trip through a store's JSON.
func TestPrintRunDetailBodies(t *testing.T) {
	p, diags := compiler.Compile([]compiler.Source{{Name: "wf.yaml", Src: []byte(bodyRunSrc)}}, compiler.Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e, err := runtime.New(p, runtime.Options{Backend: bodyBackend{}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := e.Run(context.Background(), "per_ns", nil, runtime.RunOptions{})
	if err != nil || run.Status != runtime.RunCompleted {
		t.Fatalf("Run = %v, %v", run, err)
	}
	// As a store other than memory gives it back: decoded JSON.
	data, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	var stored runtime.Run
	if err := json.Unmarshal(data, &stored); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*runtime.Run{run, &stored} {
		now := r.EndedAt.Add(time.Second)
		d := httpapi.Detail(r, now)
		its := d.Steps[0].Iterations
		if len(its) != 2 || len(its[0].Steps) != 2 || its[0].Steps[0].ID != "pods" || its[0].Steps[1].ID != "kinds" {
			t.Fatalf("Detail iterations = %+v; want 2, each with pods then kinds", its)
		}
		if got := its[0].Steps[1].Iterations; len(got) != 2 || got[1].Steps[0].ID != "list" || got[1].Steps[0].Status != runtime.StepCompleted {
			t.Errorf("nested iterations = %+v; want 2 with a completed list step", got)
		}
		if its[1].Status != "failed" || its[1].Steps[0].Status != runtime.StepFailed {
			t.Errorf("iteration 1 = %+v; want failed at pods", its[1])
		}
		var buf bytes.Buffer
		printRunDetail(&buf, d, now)
		out := buf.String()
		for _, want := range []string{
			"\n  loop[0].pods ", "\n  loop[0].kinds ", "\n    loop[0].kinds[0].list ", "\n    loop[0].kinds[1].list ",
			"\n  loop[1].pods ", "  loop[1].pods: error: calling k8s.pods: forbidden\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("runs show output lacks %q:\n%s", want, out)
			}
		}
	}
}
