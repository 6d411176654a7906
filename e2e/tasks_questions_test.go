package e2e

// Two elicitation steps of a task that go at the same time, in the
// 2025-11-25 flavour: both are asked (as elicitation/create requests tied
// to the task), each answer reaches its own step, and the task completes.
// The extension's side is the conformance scenario tasks-mrtr-input
// (TestConformanceTasks) and mcpserver TestTasksExtensionWireRules.

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

const twoQuestionsConfig = `
compositeTools:
  - name: two_questions
    description: Ask two questions at once
    steps:
      - id: first
        type: elicitation
        message: First?
        schema: {type: object, properties: {answer: {type: string}}, required: [answer]}
      - id: second
        type: elicitation
        message: Second?
        schema: {type: object, properties: {answer: {type: string}}, required: [answer]}
    output:
      properties:
        first: {value: "{{.steps.first.output.content.answer}}"}
        second: {value: "{{.steps.second.output.content.answer}}"}
`

// echoAnswers answers each elicitation/create request with its message.
type echoAnswers struct {
	mu    sync.Mutex
	asked []string
}

func (a *echoAnswers) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.mu.Lock()
	a.asked = append(a.asked, req.Params.Message)
	a.mu.Unlock()
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
		Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"answer": "re " + req.Params.Message}}}, nil
}

func TestTaskQuestionsAtOnce20251125(t *testing.T) {
	url, _ := httpVMCPOn(t, writeConfig(t, twoQuestionsConfig, ""), conformanceTasksLo, conformanceTasksHi)
	answers := &echoAnswers{}
	c := v1Client(t, url, nil, client.WithElicitationHandler(answers))
	task := testenv.StartTask(t, c, "two_questions", nil)
	res := taskResult(t, c, task.TaskId)
	if res.IsError || resultText(res) != `{"first":"re First?","second":"re Second?"}` {
		t.Errorf("tasks/result = %q (isError %v); want each step with its own answer", resultText(res), res.IsError)
	}
	answers.mu.Lock()
	asked := slices.Sorted(slices.Values(answers.asked))
	answers.mu.Unlock()
	if !slices.Equal(asked, []string{"First?", "Second?"}) {
		t.Errorf("questions asked = %q; want First? and Second?, once each", asked)
	}
}
