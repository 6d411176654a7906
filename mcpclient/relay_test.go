package mcpclient

import (
	"context"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpgo "github.com/mark3labs/mcp-go/server"

	"github.com/vmcp-dev/vmcp/config"
	"github.com/vmcp-dev/vmcp/internal/testservers"
	"github.com/vmcp-dev/vmcp/toolcall"
)

// askerBackend configures testservers.NewAsker as a stdio backend.
func askerBackend(timeout time.Duration) *config.Backend {
	return &config.Backend{Command: os.Args[0], Env: map[string]string{testservers.EnvServe: "asker"},
		Transport: config.TransportStdio, Timeout: timeout}
}

// answerer is a caller that answers every question with ans after delay
// (or never, when block is set), and passes the questions it gets on asked.
type answerer struct {
	ans   toolcall.Answer
	delay time.Duration
	block bool
	asked chan toolcall.Question
}

func (a *answerer) asker(caller string) toolcall.Asker {
	return &toolcall.FuncAsker{Name: caller, AskFunc: func(ctx context.Context, q toolcall.Question) (toolcall.Answer, error) {
		if a.asked != nil {
			a.asked <- q
		}
		if a.block {
			<-ctx.Done()
			return toolcall.Answer{}, ctx.Err()
		}
		select {
		case <-time.After(a.delay):
			return a.ans, nil
		case <-ctx.Done():
			return toolcall.Answer{}, ctx.Err()
		}
	}}
}

// callText calls tool with ctx for step s1 and returns its text, failing
// on a Go error.
func callText(t *testing.T, ctx context.Context, m *Manager, backend, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := m.CallTool(ctx, toolcall.Call{Backend: backend, Tool: tool, Arguments: args, StepID: "s1"})
	if err != nil {
		t.Fatalf("%s.%s: %v", backend, tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.Text)
	}
	return b.String(), res.IsError
}

// TestBackendQuestionRelayed: a stdio backend's question, asked with
// elicitation/create (ask) or an input_required result (ask_mrtr), reaches
// the call's asker, and the answer, whatever its action, reaches the
// backend unchanged.
func TestBackendQuestionRelayed(t *testing.T) {
	m := connect(t, map[string]*config.Backend{"asker": askerBackend(20 * time.Second)})
	answers := []struct {
		ans  toolcall.Answer
		want string
	}{
		{toolcall.Answer{Action: "accept", Content: map[string]any{"name": "Ada"}}, `accept {"name":"Ada"}`},
		{toolcall.Answer{Action: "decline"}, "decline null"},
		{toolcall.Answer{Action: "cancel"}, "cancel null"},
	}
	for _, tool := range []string{"ask", "ask_mrtr"} {
		for _, tt := range answers {
			t.Run(tool+"/"+tt.ans.Action, func(t *testing.T) {
				a := &answerer{ans: tt.ans, asked: make(chan toolcall.Question, 1)}
				ctx := toolcall.WithAsker(context.Background(), a.asker("run 1"))
				text, isErr := callText(t, ctx, m, "asker", tool, map[string]any{"message": "Your name?"})
				if isErr || text != tt.want {
					t.Errorf("%s answered %q (isError %v); want %q", tool, text, isErr, tt.want)
				}
				select {
				case q := <-a.asked:
					want := toolcall.Question{Backend: "asker", Tool: tool, StepID: "s1", Message: "Your name?", Schema: testservers.AskerSchema}
					if diff := cmp.Diff(want, q); diff != "" {
						t.Errorf("the question relayed (-want +got):\n%s", diff)
					}
				default:
					t.Errorf("the call's asker was never asked")
				}
			})
		}
	}
}

// TestBackendQuestionWithoutAsker: a question during a call whose caller
// cannot be asked fails at once with a clear error to the backend.
func TestBackendQuestionWithoutAsker(t *testing.T) {
	m := connect(t, map[string]*config.Backend{"asker": askerBackend(20 * time.Second)})
	text, isErr := callText(t, context.Background(), m, "asker", "ask", map[string]any{"message": "Your name?"})
	if want := `the caller of backend "asker" tool "ask" cannot be asked`; !isErr || !strings.Contains(text, want) {
		t.Errorf("ask without an asker = %q (isError %v); want an error containing %q", text, isErr, want)
	}
	_, err := m.CallTool(context.Background(), toolcall.Call{Backend: "asker", Tool: "ask_mrtr", Arguments: map[string]any{"message": "?"}})
	if want := `the caller of backend "asker" tool "ask_mrtr" cannot be asked`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("ask_mrtr without an asker: error %v; want one containing %q", err, want)
	}
}

// TestBackendQuestionPausesTheBackendTimeout: an answer that takes longer
// than the backend's timeout still reaches the backend: the timeout counts
// the backend's work, not the caller's thinking.
func TestBackendQuestionPausesTheBackendTimeout(t *testing.T) {
	m := connect(t, map[string]*config.Backend{"asker": askerBackend(300 * time.Millisecond)})
	a := &answerer{ans: toolcall.Answer{Action: "accept", Content: map[string]any{"name": "Ada"}}, delay: time.Second}
	ctx := toolcall.WithAsker(context.Background(), a.asker("run 1"))
	if text, isErr := callText(t, ctx, m, "asker", "ask", map[string]any{"message": "?"}); isErr || text != `accept {"name":"Ada"}` {
		t.Errorf("ask answered after the backend timeout = %q (isError %v); want the answer", text, isErr)
	}
}

// TestBackendSamplingRefused: a backend's sampling request, either way it
// is asked, gets vmcp's clear refusal.
func TestBackendSamplingRefused(t *testing.T) {
	m := connect(t, map[string]*config.Backend{"asker": askerBackend(20 * time.Second)})
	a := &answerer{ans: toolcall.Answer{Action: "accept"}}
	ctx := toolcall.WithAsker(context.Background(), a.asker("run 1"))
	const want = `vmcp does not relay sampling: backend "asker" asked for sampling/createMessage`
	if text, isErr := callText(t, ctx, m, "asker", "sample", nil); !isErr || !strings.Contains(text, want) {
		t.Errorf("sample = %q (isError %v); want an error containing %q", text, isErr, want)
	}
	_, err := m.CallTool(ctx, toolcall.Call{Backend: "asker", Tool: "sample_mrtr", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("sample_mrtr: error %v; want one containing %q", err, want)
	}
}

// TestBackendQuestionAmbiguousOverStdio: over stdio a question does not
// say which call it belongs to; with calls of two callers in flight the
// backend gets an error saying so, and the other call is not disturbed.
func TestBackendQuestionAmbiguousOverStdio(t *testing.T) {
	m := connect(t, map[string]*config.Backend{"asker": askerBackend(20 * time.Second)})
	first := &answerer{block: true, asked: make(chan toolcall.Question, 1)}
	ctx1, cancel1 := context.WithCancel(toolcall.WithAsker(context.Background(), first.asker("run 1")))
	done := make(chan error, 1)
	go func() {
		_, err := m.CallTool(ctx1, toolcall.Call{Backend: "asker", Tool: "ask", Arguments: map[string]any{"message": "first"}})
		done <- err
	}()
	select {
	case <-first.asked:
	case err := <-done:
		t.Fatalf("the first call ended (err %v) without its asker being asked", err)
	}
	second := &answerer{ans: toolcall.Answer{Action: "accept"}}
	ctx2 := toolcall.WithAsker(context.Background(), second.asker("run 2"))
	text, isErr := callText(t, ctx2, m, "asker", "ask", map[string]any{"message": "second"})
	if want := `vmcp cannot tell which of the 2 calls in flight to backend "asker" (from 2 different callers)`; !isErr || !strings.Contains(text, want) {
		t.Errorf("the second caller's ask = %q (isError %v); want an error containing %q", text, isErr, want)
	}
	cancel1()
	if err := <-done; err == nil {
		t.Errorf("the first call, cancelled while its question waited, succeeded")
	}
}

// TestBackendQuestionOverHTTPFindsItsCall: over streamable HTTP a question
// arrives on its call's stream, so calls of two callers in flight at once
// each get their own caller's answer.
func TestBackendQuestionOverHTTPFindsItsCall(t *testing.T) {
	srv := httptest.NewServer(mcpgo.NewStreamableHTTPServer(testservers.NewAsker()))
	t.Cleanup(srv.Close)
	m := connect(t, map[string]*config.Backend{"asker": {URL: srv.URL + "/mcp", Timeout: 20 * time.Second}})
	type got struct {
		text  string
		isErr bool
	}
	results := make(chan got, 2)
	for _, name := range []string{"Ada", "Grace"} {
		a := &answerer{ans: toolcall.Answer{Action: "accept", Content: map[string]any{"name": name}}, delay: 200 * time.Millisecond}
		ctx := toolcall.WithAsker(context.Background(), a.asker("run "+name))
		go func() {
			res, err := m.CallTool(ctx, toolcall.Call{Backend: "asker", Tool: "ask", Arguments: map[string]any{"message": "?"}})
			if err != nil {
				results <- got{err.Error(), true}
				return
			}
			results <- got{res.Content[0].Text, res.IsError}
		}()
	}
	seen := map[string]bool{}
	for range 2 {
		r := <-results
		seen[r.text] = !r.isErr
	}
	want := map[string]bool{`accept {"name":"Ada"}`: true, `accept {"name":"Grace"}`: true}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("the answers the two calls got (-want +got):\n%s", diff)
	}
}
