package e2e

// ToolHive parity end to end (issue 9): a ToolHive-style composite tool
// definition (a VirtualMCPCompositeToolDefinition resource) whose
// elicitations a real MCP client answers, and the content map of a real
// npm server's results.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// toolhiveDeploy is written as ToolHive's documentation writes it: a
// Kubernetes resource beside one of another kind, answers read as
// .steps.<id>.output.content.<field>, the action as .output.action.
const toolhiveDeploy = `
apiVersion: toolhive.stacklok.dev/v1alpha1
kind: MCPGroup
metadata: {name: deployment-services}
---
apiVersion: toolhive.stacklok.dev/v1beta1
kind: VirtualMCPCompositeToolDefinition
metadata:
  name: interactive-deploy
spec:
  name: interactive_deployment
  description: Build, confirm, pick an environment, deploy
  parameters:
    type: object
    properties:
      app: {type: string, description: Application to deploy}
    required: [app]
  steps:
    - id: build_app
      tool: tb.echo
      arguments:
        text: "built {{.params.app}}"
    - id: confirm_deployment
      type: elicitation
      message: "{{.steps.build_app.output.text}}. Proceed with deployment?"
      schema:
        type: object
        properties:
          proceed: {type: boolean, description: Confirm deployment}
        required: [proceed]
      dependsOn: [build_app]
      timeout: 15m
      onDecline: {action: skip_remaining}
      onCancel: {action: abort}
    - id: select_environment
      type: elicitation
      message: "Target environment for {{.params.app}}?"
      schema:
        type: object
        properties:
          environment: {type: string, enum: [staging, production]}
        required: [environment]
      dependsOn: [confirm_deployment]
      onDecline: {action: continue}
      onCancel: {action: abort}
      defaultResults:
        content: {environment: staging}
    - id: deploy_app
      tool: tb.echo
      condition: "{{.steps.confirm_deployment.output.content.proceed}}"
      dependsOn: [select_environment]
      arguments:
        text: "{{.params.app}} -> {{.steps.select_environment.output.content.environment}} ({{.steps.select_environment.output.action}})"
      defaultResults: {text: not deployed}
  output:
    properties:
      deployed: {type: string, value: "{{.steps.deploy_app.output.text}}"}
      answered: {type: string, value: "{{.steps.confirm_deployment.output.action}}"}
      steps_done: {type: integer, value: "{{.workflow.step_count}}"}
      status: {type: string, value: "{{.workflow.status}}"}
`

const toolhiveConfig = `
backends:
  tb: {command: "${TB}", args: [-record, "${REC}"]}
workflows: ["${DIR}/interactive_deploy.yaml"]
`

// scriptedAnswers answers each elicitation with the next answer in order
// and records the questions.
type scriptedAnswers struct {
	mu       sync.Mutex
	answers  []mcp.ElicitationResult
	messages []string
}

func (s *scriptedAnswers) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.messages = append(s.messages, req.Params.Message)
	if len(s.answers) == 0 {
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionCancel}}, nil
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return &a, nil
}

func answer(action mcp.ElicitationResponseAction, content map[string]any) mcp.ElicitationResult {
	return mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: action, Content: content}}
}

func TestToolHiveElicitationWorkflow(t *testing.T) {
	accept := mcp.ElicitationResponseActionAccept
	decline := mcp.ElicitationResponseActionDecline
	tests := []struct {
		name      string
		answers   []mcp.ElicitationResult
		want      map[string]any
		questions int
	}{
		{"both accepted", []mcp.ElicitationResult{
			answer(accept, map[string]any{"proceed": true}),
			answer(accept, map[string]any{"environment": "production"}),
		}, map[string]any{"deployed": "shop -> production (accept)", "answered": "accept", "steps_done": 4.0, "status": "completed"}, 2},
		{"environment declined: continue with defaultResults.content", []mcp.ElicitationResult{
			answer(accept, map[string]any{"proceed": true}),
			answer(decline, nil),
		}, map[string]any{"deployed": "shop -> staging (decline)", "answered": "accept", "steps_done": 4.0, "status": "completed"}, 2},
		{"not proceeding skips the deploy", []mcp.ElicitationResult{
			answer(accept, map[string]any{"proceed": false}),
			answer(accept, map[string]any{"environment": "production"}),
		}, map[string]any{"deployed": "not deployed", "answered": "accept", "steps_done": 3.0, "status": "completed"}, 2},
		{"confirmation declined: skip_remaining really skips", []mcp.ElicitationResult{
			answer(decline, nil),
		}, map[string]any{"deployed": "not deployed", "answered": "decline", "steps_done": 2.0, "status": "completed"}, 1},
	}
	rec := filepath.Join(t.TempDir(), "record.txt")
	cfg := writeConfig(t, toolhiveConfig, rec)
	if err := os.WriteFile(filepath.Join(filepath.Dir(cfg), "interactive_deploy.yaml"), []byte(toolhiveDeploy), 0o644); err != nil {
		t.Fatal(err)
	}
	url, stderr := httpVMCP(t, cfg)
	for _, tr := range []string{"stdio", "http"} {
		for _, tt := range tests {
			t.Run(tr+"/"+tt.name, func(t *testing.T) {
				answers := &scriptedAnswers{answers: append([]mcp.ElicitationResult(nil), tt.answers...)}
				opts := []client.ClientOption{client.WithElicitationHandler(answers)}
				var c *client.Client
				if tr == "http" {
					c = testenv.HTTPClient(t, url, opts...)
				} else {
					c, _ = stdioVMCP(t, cfg, opts...)
				}
				res := mustCall(t, c, "interactive_deployment", map[string]any{"app": "shop"})
				if res.IsError {
					t.Fatalf("interactive_deployment failed: %s", testenv.ResultText(res))
				}
				if diff := cmp.Diff(tt.want, res.StructuredContent); diff != "" {
					t.Errorf("interactive_deployment result (-want +got):\n%s", diff)
				}
				answers.mu.Lock()
				defer answers.mu.Unlock()
				if len(answers.messages) != tt.questions || answers.messages[0] != "built shop. Proceed with deployment?" {
					t.Errorf("the client was asked %q; want %d questions, the first %q", answers.messages, tt.questions, "built shop. Proceed with deployment?")
				}
			})
		}
	}
	if strings.Contains(stderr.String(), "panic") {
		t.Errorf("vmcp logged a panic:\n%s", stderr.String())
	}
}

// contentConfig reads the content map of server-everything's results:
// text and image items, resource links and an embedded resource. The
// links call passes an optional parameter the caller leaves out, so the
// argument is left out and the TypeScript server (which rejects null)
// applies its own default of 3 links.
const contentConfig = `
backends:
  everything: {command: "${NODE}/mcp-server-everything"}
compositeTools:
  - name: content_tour
    description: Read results that have no structuredContent through .steps.<id>.content
    parameters:
      count: {type: integer, description: how many links}
    steps:
      - id: image
        tool: everything.get-tiny-image
      - id: links
        tool: everything.get-resource-links
        arguments: {count: "{{.params.count}}"}
      - id: ref
        tool: everything.get-resource-reference
        arguments: {resourceType: Text, resourceId: 2}
    output:
      properties:
        caption: {type: string, value: "{{.steps.image.content.text}}"}
        after: {type: string, value: "{{.steps.image.content.text_1}}"}
        image_prefix: {type: string, value: "{{slice .steps.image.content.image_0 0 8}}"}
        same_as_output: {type: boolean, value: "{{eq .steps.image.output.image_0 .steps.image.content.image_0}}"}
        third_link: {type: string, value: "{{.steps.links.content.link_2}}"}
        resource: {type: string, value: "{{.steps.ref.content.resource}}"}
`

func TestContentMapFromNPMServer(t *testing.T) {
	node := filepath.Dir(testenv.NodeBin(t, "mcp-server-everything"))
	cfg := writeConfig(t, strings.ReplaceAll(contentConfig, "${NODE}", node), "")
	c, _ := stdioVMCP(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "content_tour", Arguments: map[string]any{}}})
	if err != nil || res.IsError {
		t.Fatalf("content_tour = %v, %v", err, res)
	}
	got, _ := res.StructuredContent.(map[string]any)
	if got["caption"] != "Here's the image you requested:" || got["after"] != "The image above is the MCP logo." {
		t.Errorf("text items = %q, %q; want the two captions of get-tiny-image", got["caption"], got["after"])
	}
	if got["image_prefix"] != "iVBORw0K" || got["same_as_output"] != true {
		t.Errorf("image_0 starts %q (same as output: %v); want base64 PNG data, also the step's output", got["image_prefix"], got["same_as_output"])
	}
	if link, _ := got["third_link"].(string); !strings.Contains(link, "://") {
		t.Errorf("link_2 = %q; want the third resource link's URI (count left out, so the server's default of 3)", link)
	}
	if r, _ := got["resource"].(string); r == "" {
		t.Errorf("resource = %q; want the embedded text resource's text", r)
	}
}
