package e2e

// Loop bodies and nested loops through a real vmcp process: `vmcp run`
// on stdio driven by an mcp-go client, against the test backend process.

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

const bodiesConfig = `
backends:
  tb: {command: "${TB}"}
compositeTools:
  - name: grid
    description: For each region and tier, echo a label and add the indexes
    parameters:
      regions: {type: array, required: true}
    steps:
      - id: base
        tool: tb.add
        arguments: {a: 100, b: 0}
      - id: per_region
        type: forEach
        dependsOn: [base]
        collection: "{{.params.regions}}"
        itemVar: region
        steps:
          - id: per_tier
            type: forEach
            collection: [gold, silver]
            itemVar: tier
            steps:
              - id: label
                tool: tb.echo
                arguments: {text: "{{.forEach.region}}/{{.forEach.tier}}"}
              - id: score
                tool: tb.add
                dependsOn: [label]
                condition: "{{ne .forEach.tier \"silver\"}}"
                defaultResults: {sum: -1}
                arguments: {a: "{{.steps.base.output.sum}}", b: "{{.forEach.index}}"}
            output:
              properties:
                label: {type: string, value: "{{.steps.label.output.text}}"}
                score: {type: number, value: "{{.steps.score.output.sum}}"}
    output:
      properties:
        grid: {type: array, value: "{{query \"iterations[].output.iterations[].output\" .steps.per_region.output}}"}
  - name: ping_hosts
    description: Ping each host in turn; the first that fails fails the loop
    parameters:
      hosts: {type: array, required: true}
    steps:
      - id: per_host
        type: forEach
        collection: "{{.params.hosts}}"
        maxParallel: 1
        steps:
          - id: ping
            tool: tb.fail
            arguments: {message: "{{.forEach.item.name}} is down"}
`

// TestNestedLoopBodiesOverStdio runs a two-level loop with a two-step
// body through vmcp run: every body step reads this iteration's steps,
// both loops' items and a top-level step; a per-item condition skips a
// body step, whose defaultResults the loop output then reads.
func TestNestedLoopBodiesOverStdio(t *testing.T) {
	c, _ := stdioVMCP(t, writeConfig(t, bodiesConfig, ""))
	res := mustCall(t, c, "grid", map[string]any{"regions": []any{"eu", "us"}})
	if res.IsError {
		t.Fatalf("grid = %s", testenv.ResultText(res))
	}
	want := map[string]any{"grid": []any{
		map[string]any{"label": "eu/gold", "score": 100.0},
		map[string]any{"label": "eu/silver", "score": -1.0},
		map[string]any{"label": "us/gold", "score": 100.0},
		map[string]any{"label": "us/silver", "score": -1.0},
	}}
	if diff := cmp.Diff(want, res.StructuredContent); diff != "" {
		t.Errorf("grid structuredContent (-want +got):\n%s", diff)
	}
}

// TestLoopErrorNamesItemOverStdio: a failed iteration's error, as the MCP
// client gets it from vmcp run, names the iteration's item, not only its
// index.
func TestLoopErrorNamesItemOverStdio(t *testing.T) {
	c, _ := stdioVMCP(t, writeConfig(t, bodiesConfig, ""))
	hosts := []any{map[string]any{"name": "web-1"}, map[string]any{"name": "web-2"}}
	res := mustCall(t, c, "ping_hosts", map[string]any{"hosts": hosts})
	text := testenv.ResultText(res)
	if want := `iteration 0 (name "web-1"): step "ping": `; !res.IsError || !strings.Contains(text, want) || !strings.Contains(text, "web-1 is down") {
		t.Errorf("ping_hosts = %q (isError %v); want an error with %q and the backend's text", text, res.IsError, want)
	}
}
