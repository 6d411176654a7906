package e2e

// Backends that ask: server-everything's trigger-elicitation-request, over
// stdio and over streamable HTTP, called by a workflow step and served as it
// is (exposeBackendTools), with vmcp run on stdio and on HTTP and a real
// mcp-go client answering. The question reaches the client, and the answer
// (accept or decline) reaches the backend, whose result says what it got.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// Ports for vmcp run in this file.
const relayPortLo, relayPortHi = 17500, 17599

const relayConfig = `
backends:
  ev: {command: "${NODE}/mcp-server-everything"}
  evh: {url: "${EVERYTHING_URL}", transport: streamable-http}
  tb: {command: "${TB}", args: [-askers]}
server:
  exposeBackendTools: true
compositeTools:
  - name: ask_stdio
    description: server-everything over stdio asks the caller
    steps:
      - id: ask
        tool: ev.trigger-elicitation-request
  - name: ask_http
    description: server-everything over streamable HTTP asks the caller
    steps:
      - id: ask
        tool: evh.trigger-elicitation-request
  - name: sample
    description: A backend asks for sampling
    steps:
      - id: sample
        tool: tb.sample
`

// everythingQuestion is the message of server-everything's question.
const everythingQuestion = "Please provide inputs for the following fields:"

// relayVMCP writes relayConfig with server-everything over HTTP running and
// starts vmcp run on HTTP; it returns the config and the MCP URL.
func relayVMCP(t *testing.T) (cfg, url string) {
	t.Helper()
	node := filepath.Dir(testenv.NodeBin(t, "mcp-server-everything"))
	text := strings.NewReplacer("${NODE}", node, "${EVERYTHING_URL}", startEverythingHTTP(t)).Replace(relayConfig)
	cfg = writeConfig(t, text, "")
	url, _ = httpVMCPOn(t, cfg, relayPortLo, relayPortHi)
	return cfg, url
}

// relayClients are the ways a client reaches vmcp: stdio, HTTP at the
// client's default protocol (2026-07-28: questions come as input_required
// results) and HTTP pinned to 2025-11-25 (elicitation/create requests).
func relayClients(cfg, url string) []struct {
	name    string
	connect func(t *testing.T, opts ...client.ClientOption) *client.Client
} {
	return []struct {
		name    string
		connect func(t *testing.T, opts ...client.ClientOption) *client.Client
	}{
		{"stdio", func(t *testing.T, opts ...client.ClientOption) *client.Client {
			c, _ := stdioVMCP(t, cfg, opts...)
			return c
		}},
		{"http", func(t *testing.T, opts ...client.ClientOption) *client.Client {
			return testenv.HTTPClient(t, url, opts...)
		}},
		{"http-2025-11-25", func(t *testing.T, opts ...client.ClientOption) *client.Client {
			return testenv.HTTPClient(t, url, append(opts, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))...)
		}},
	}
}

// relayedTools are the tools whose backend asks: two workflows (the backend
// over stdio, over HTTP) and the same backend tools served as they are.
var relayedTools = []string{"ask_stdio", "ask_http", "ev_trigger-elicitation-request", "evh_trigger-elicitation-request"}

func TestBackendElicitationRelayed(t *testing.T) {
	cfg, url := relayVMCP(t)
	answers := []struct {
		name   string
		answer *elicitAnswer
		want   string
	}{
		{"accept", &elicitAnswer{action: mcp.ElicitationResponseActionAccept, content: map[string]any{"name": "Ada Lovelace"}}, "Name: Ada Lovelace"},
		{"decline", &elicitAnswer{action: mcp.ElicitationResponseActionDecline}, "User declined to provide the requested information"},
	}
	for _, cl := range relayClients(cfg, url) {
		for _, a := range answers {
			t.Run(cl.name+"/"+a.name, func(t *testing.T) {
				a.answer.message = make(chan string, len(relayedTools))
				c := cl.connect(t, client.WithElicitationHandler(a.answer))
				for _, tool := range relayedTools {
					res := mustCall(t, c, tool, nil)
					if text := testenv.ResultText(res); res.IsError || !strings.Contains(text, a.want) {
						t.Errorf("%s = (isError %v) %q; want a result containing %q", tool, res.IsError, text, a.want)
					}
					select {
					case msg := <-a.answer.message:
						if msg != everythingQuestion {
							t.Errorf("%s: the client was asked %q; want %q", tool, msg, everythingQuestion)
						}
					default:
						t.Errorf("%s: the client was never asked", tool)
					}
				}
			})
		}
	}
}

// TestBackendElicitationWithoutCapability: a client that declared no
// elicitation capability cannot answer, so the backend's question fails at
// once (no wait for a timeout) and the result says why.
func TestBackendElicitationWithoutCapability(t *testing.T) {
	cfg, url := relayVMCP(t)
	for _, cl := range relayClients(cfg, url) {
		t.Run(cl.name, func(t *testing.T) {
			c := cl.connect(t)
			for _, tool := range relayedTools {
				res := mustCall(t, c, tool, nil)
				const want = "did not declare the elicitation capability"
				if text := testenv.ResultText(res); !res.IsError || !strings.Contains(text, want) {
					t.Errorf("%s = (isError %v) %q; want an error containing %q", tool, res.IsError, text, want)
				}
			}
		})
	}
}

// TestBackendSamplingRefusedEndToEnd: a backend that asks for sampling, in a
// workflow step or served as it is, gets vmcp's clear refusal, and the
// client sees it.
func TestBackendSamplingRefusedEndToEnd(t *testing.T) {
	cfg, url := relayVMCP(t)
	for _, cl := range relayClients(cfg, url)[:2] {
		t.Run(cl.name, func(t *testing.T) {
			c := cl.connect(t)
			for _, tool := range []string{"sample", "tb_sample"} {
				res := mustCall(t, c, tool, nil)
				const want = `vmcp does not relay sampling: backend "tb" asked for sampling/createMessage`
				// The message may arrive quoted inside a JSON text.
				text := strings.ReplaceAll(testenv.ResultText(res), `\"`, `"`)
				if !res.IsError || !strings.Contains(text, want) {
					t.Errorf("%s = (isError %v) %q; want an error containing %q", tool, res.IsError, text, want)
				}
			}
		})
	}
}

// TestBackendElicitationRelayedThroughTask: when a workflow runs as a
// 2025-11-25 task, its backend's question is the task's question
// (input_required, asked with elicitation/create tied to the task), and the
// answer reaches the backend.
func TestBackendElicitationRelayedThroughTask(t *testing.T) {
	_, url := relayVMCP(t)
	for _, tool := range []string{"ask_stdio", "ask_http"} {
		t.Run(tool, func(t *testing.T) {
			answers := &echoAnswers{}
			c := v1Client(t, url, nil, client.WithElicitationHandler(answers))
			task := testenv.StartTask(t, c, tool, nil)
			res := taskResult(t, c, task.TaskId)
			const want = "User provided the requested information"
			if text := resultText(res); res.IsError || !strings.Contains(text, want) {
				t.Errorf("tasks/result = %q (isError %v); want it to contain %q", text, res.IsError, want)
			}
			answers.mu.Lock()
			defer answers.mu.Unlock()
			if len(answers.asked) != 1 || answers.asked[0] != everythingQuestion {
				t.Errorf("the client was asked %q; want %q once", answers.asked, everythingQuestion)
			}
		})
	}
}
