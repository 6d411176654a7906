package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/toolcall"
)

// askingBackend is a Backend whose every call asks its caller one question
// and returns the answer as its structured result (an asker's error as an
// isError result, as a backend would).
type askingBackend struct{}

func (askingBackend) CallTool(ctx context.Context, call ToolCall) (*ToolResult, error) {
	a := toolcall.AskerFrom(ctx)
	if a == nil {
		return nil, errors.New("the call carries no asker")
	}
	ans, err := a.Ask(ctx, toolcall.Question{Backend: call.Backend, Tool: call.Tool, StepID: call.StepID, Message: "Your name?", Schema: M{"type": "object"}})
	if err != nil {
		return &ToolResult{IsError: true, Content: []Content{{Type: "text", Text: "no answer: " + err.Error()}}}, nil
	}
	return &ToolResult{Structured: map[string]any{"action": ans.Action, "content": ans.Content}}, nil
}

// TestBackendQuestionsGoToTheRunsElicitor: a backend's question during a
// tool step reaches the run's Elicitor, named as the step's, and the answer
// goes back to the backend unchanged.
func TestBackendQuestionsGoToTheRunsElicitor(t *testing.T) {
	wf := build("w", tool("ask", "b.t", nil))
	e := mustEngine(t, plan(wf), Options{Backend: askingBackend{}})
	var asked []ElicitRequest
	el := elicitFunc(func(_ context.Context, req ElicitRequest) (ElicitResult, error) {
		asked = append(asked, req)
		return ElicitResult{Action: ElicitDecline}, nil
	})
	run, err := e.Run(context.Background(), "w", nil, RunOptions{RunID: "r1", Elicitor: el})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"action": "decline", "content": map[string]any(nil)}, run.Steps[0].Output); diff != "" {
		t.Errorf("the step's output (the backend's result) (-want +got):\n%s", diff)
	}
	want := []ElicitRequest{{RunID: "r1", StepID: "ask", Message: "Your name?", Schema: M{"type": "object"}, Backend: "b", Tool: "t"}}
	if diff := cmp.Diff(want, asked); diff != "" {
		t.Errorf("the questions the elicitor got (-want +got):\n%s", diff)
	}
}

// TestBackendQuestionWithoutElicitor: with no one to answer, the backend
// gets ErrNoAnswerer at once.
func TestBackendQuestionWithoutElicitor(t *testing.T) {
	e := mustEngine(t, plan(build("w", tool("ask", "b.t", nil))), Options{Backend: askingBackend{}})
	run, err := e.Run(context.Background(), "w", nil, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != RunFailed || run.Error == nil || !strings.Contains(run.Error.Msg, ErrNoAnswerer.Error()) {
		t.Errorf("run = %s, error %v; want failed with %q", run.Status, run.Error, ErrNoAnswerer)
	}
}

// TestBackendQuestionBoundedByStepTimeout: the wait for an answer ends with
// the step's timeout.
func TestBackendQuestionBoundedByStepTimeout(t *testing.T) {
	wf := build("w", tool("ask", "b.t", nil).With(timeout(50*time.Millisecond)))
	e := mustEngine(t, plan(wf), Options{Backend: askingBackend{}})
	ended := false
	el := elicitFunc(func(ctx context.Context, _ ElicitRequest) (ElicitResult, error) {
		<-ctx.Done()
		ended = true
		return ElicitResult{}, ctx.Err()
	})
	run, err := e.Run(context.Background(), "w", nil, RunOptions{Elicitor: el})
	if err != nil {
		t.Fatal(err)
	}
	if !ended || run.Status != RunFailed || run.Error == nil || !strings.Contains(run.Error.Msg, "timed out") {
		t.Errorf("run = %s, error %v, the wait ended: %v; want the step timed out, ending the wait", run.Status, run.Error, ended)
	}
}
