package runtime

// Questions that backends ask while a tool step's call runs.
//
// A backend tool may ask its caller something in the middle of a call (an
// elicitation/create request, or on MCP 2026-07-28 an input_required
// result). The run's caller is whoever answers the run's own elicitation
// steps, so the question goes to the same Elicitor, whatever it is (the
// MCP client on either protocol revision, a task's input_required, the
// console), named as the step that made the call. The wait is bounded by
// the call's context, and so by the step's timeout; the answer (accept,
// decline or cancel) goes back to the backend unchanged, and the backend
// decides what it means for its result. With no Elicitor, or one that
// cannot ask (the client declared no elicitation capability), the backend
// gets an error at once, never a wait.

import (
	"context"
	"errors"

	"github.com/vmcp-dev/vmcp/toolcall"
)

// ErrNoAnswerer is the error a backend's question gets when the run has no
// one who could answer it (no Elicitor: a run started without a client).
var ErrNoAnswerer = errors.New("this run has no caller that can answer questions (no elicitor)")

// withQuestions returns ctx with the run as its Asker. It is set once, on
// the context every step context of the run derives from, so a tool call
// costs nothing more, and the run state is the asker itself (runAsker), so
// a run pays one context value and nothing else until a question comes;
// the Backend names the step in each Question (StepID).
func (r *runState) withQuestions(ctx context.Context) context.Context {
	return toolcall.WithAsker(ctx, (*runAsker)(r))
}

// runAsker is a run as the asker of its backends' questions.
type runAsker runState

func (a *runAsker) Caller() string { return "run " + a.run.ID }

func (a *runAsker) Ask(ctx context.Context, q toolcall.Question) (toolcall.Answer, error) {
	return askElicitor(ctx, a.env.Elicitor, a.run.ID, q)
}

// ElicitorAsker returns the Asker that relays a backend's questions to el,
// as questions of run runID ("" for a backend tool served as it is) and of
// the question's step. caller names el's client (toolcall.Asker). A nil el
// refuses every question with ErrNoAnswerer.
func ElicitorAsker(caller string, el Elicitor, runID string) toolcall.Asker {
	return &toolcall.FuncAsker{Name: caller, AskFunc: func(ctx context.Context, q toolcall.Question) (toolcall.Answer, error) {
		return askElicitor(ctx, el, runID, q)
	}}
}

// askElicitor asks el q as a question of run runID.
func askElicitor(ctx context.Context, el Elicitor, runID string, q toolcall.Question) (toolcall.Answer, error) {
	if el == nil {
		return toolcall.Answer{}, ErrNoAnswerer
	}
	res, err := el.Elicit(ctx, ElicitRequest{
		RunID: runID, StepID: q.StepID, Message: q.Message, Schema: q.Schema,
		Backend: q.Backend, Tool: q.Tool,
	})
	if err != nil {
		return toolcall.Answer{}, err
	}
	return toolcall.Answer{Action: res.Action, Content: res.Content}, nil
}
