package e2e

// Answers from the console, in Debian's chromium against a real vmcp run
// process: a run started by an MCP client that never answers its
// elicitation shows the question as a form on /ui/runs/{id}; accepted
// there, the run goes on and the client's call returns its result. A run
// started by a schedule (no client to ask) waits in the console the same
// way. VMCP_SCREENSHOTS=1 also writes docs/console-approval.png.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/testenv"
)

const approvalToken = "approval-e2e-token"

const approvalConfig = `
backends:
  tb: {command: "${TB}"}
server:
  auth: {tokens: [` + approvalToken + `]}
schedules:
  - {name: nightly, workflow: nightly_deploy, every: 1s, arguments: {service: batch}}
compositeTools:
  - name: nightly_deploy
    description: Build for a while, then ask before deploying
    parameters:
      service: {type: string, required: true}
    steps:
      - {id: build, tool: tb.sleep, arguments: {ms: 4000, label: build}}
      - id: approve
        type: elicitation
        dependsOn: [build]
        message: "Deploy {{.params.service}} tonight?"
        timeout: 10m
        schema:
          type: object
          properties:
            go: {type: boolean, title: Deploy now}
        onDecline: {action: skip_remaining}
  - name: deploy
    description: Ask before deploying
    parameters:
      service: {type: string, required: true}
    steps:
      - id: approve
        type: elicitation
        message: "Deploy {{.params.service}} to prod?"
        timeout: 10m
        schema:
          type: object
          properties:
            go: {type: boolean, title: Deploy now}
            replicas: {type: integer, minimum: 1, maximum: 10}
            region: {type: string, enum: [eu, us]}
            checks: {type: array, items: {type: string, enum: [smoke, load]}}
          required: [replicas, region]
        onDecline: {action: skip_remaining}
      - id: deploy
        tool: tb.echo
        dependsOn: [approve]
        arguments: {text: "{{.params.service}}: {{.steps.approve.output.content.replicas}} in {{.steps.approve.output.content.region}}"}
`

// silentClient is a person who never answers in the client: it records
// that it was asked and waits until the test ends.
type silentClient struct {
	asked   chan string
	release chan struct{}
	once    sync.Once
}

// dismiss makes the client answer "cancel" to what it was asked.
func (s *silentClient) dismiss() { s.once.Do(func() { close(s.release) }) }

func (s *silentClient) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	s.asked <- req.Params.Message
	select {
	case <-s.release:
	case <-ctx.Done():
	}
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionCancel}}, nil
}

func TestApproveInTheBrowser(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is not installed (apt-get install -y chromium; .ci/run does it): %v", err)
	}
	// The schedule's next run waits for the console when the test ends:
	// the shutdown's grace for it is short.
	mcpURL, stderr, _ := startHTTPVMCP(t, writeConfig(t, approvalConfig, ""), schedPortLo, schedPortHi, "--shutdown-grace", "1s")
	base := strings.TrimSuffix(mcpURL, "/mcp")
	person := &silentClient{asked: make(chan string, 10), release: make(chan struct{})}
	mc := testenv.HTTPClientHeaders(t, mcpURL, map[string]string{"Authorization": "Bearer " + approvalToken}, client.WithElicitationHandler(person))
	t.Cleanup(person.dismiss)
	call := callAsync(t, mc, "deploy", map[string]any{"service": "web"})
	select {
	case msg := <-person.asked:
		if msg != "Deploy web to prod?" {
			t.Errorf("the client was asked %q; want Deploy web to prod?", msg)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the client was never asked")
	}
	runs := func(query string) httpapi.RunList {
		t.Helper()
		req, _ := http.NewRequest("GET", base+"/api/v1/runs?"+query, nil)
		req.Header.Set("Authorization", "Bearer "+approvalToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var l httpapi.RunList
		if err := json.NewDecoder(res.Body).Decode(&l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	var id string
	for _, r := range runs("workflow=deploy&status=running").Runs {
		if r.Trigger == "" {
			id = r.ID
		}
	}
	if id == "" {
		t.Fatal("the client's deploy run is not running")
	}

	b := newBrowser(t, chromium)
	b.do(t, chromedp.Navigate(base+"/ui/runs/"+id))
	b.do(t, chromedp.SendKeys(chromedp.CSS(`input[name=token]`), approvalToken), chromedp.Click(chromedp.CSS(`[data-action=signin]`)))
	b.waitJS(t, "the run's question", `!!document.querySelector('form[data-action=answer][data-step=approve]')`)
	if msg := b.eval(t, `document.querySelector('form[data-action=answer] .message').textContent`); msg != "Deploy web to prod?" {
		t.Errorf("the form asks %q; want Deploy web to prod?", msg)
	}
	// A wrong answer first: the field says what is wrong.
	// (The browser's own checks are turned off, to see the server's.)
	b.eval(t, `(document.querySelector('form[data-action=answer]').noValidate = true, '')`)
	b.do(t, chromedp.SendKeys(chromedp.CSS(`input[name="f.replicas"]`), "1.5"),
		chromedp.SetValue(chromedp.CSS(`select[name="f.region"]`), "eu"),
		chromedp.Click(chromedp.CSS(`[data-answer=accept]`)))
	b.waitJS(t, "the field's error", `(document.querySelector('[data-field=replicas] .field-error') || {}).textContent === '"1.5" is not a whole number'`)
	if os.Getenv("VMCP_SCREENSHOTS") == "1" {
		b.do(t, chromedp.EmulateViewport(1400, 700))
		png := b.shot(t, chromedp.CaptureScreenshot(), "approval form with its error")
		if err := os.WriteFile(filepath.Join(testenv.RepoRoot(), "docs", "console-approval.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b.do(t, chromedp.SetValue(chromedp.CSS(`input[name="f.replicas"]`), "3"),
		chromedp.SetValue(chromedp.CSS(`select[name="f.region"]`), "eu"),
		chromedp.Click(chromedp.CSS(`input[name="f.go"]`)),
		chromedp.Click(chromedp.CSS(`input[name="f.checks"][value=smoke]`)))
	b.do(t, chromedp.Click(chromedp.CSS(`[data-answer=accept]`)))
	b.waitJS(t, "the run page, completed", `location.pathname === '/ui/runs/`+id+`' && !!document.querySelector('[data-run-status=completed]')`)
	// The MCP client that started the run gets its result: at once over
	// the older protocol (its elicitation request is withdrawn); over
	// 2026-07-28, whose client is still showing the question, when the
	// person there dismisses it (the retry gets the run's result).
	person.dismiss()
	select {
	case r := <-call:
		if r.err != nil || r.res.IsError {
			t.Fatalf("the client's call = %v %+v", r.err, r.res)
		}
		if text := testenv.ResultText(r.res); !strings.Contains(text, "web: 3 in eu") {
			t.Errorf("the client's result = %s; want the deploy step's web: 3 in eu", text)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the client's call did not return after the console's answer")
	}
	if !strings.Contains(stderr.String(), `msg="elicitation answered from the console" run_id=`+id+` step=approve action=accept by=token:`) {
		t.Errorf("no log line names who answered run %s:\n%s", id, stderr.String())
	}
	// The run's record says who answered: the approve step's output.
	var detail httpapi.RunDetail
	req, _ := http.NewRequest("GET", base+"/api/v1/runs/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+approvalToken)
	if res, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		json.NewDecoder(res.Body).Decode(&detail)
		res.Body.Close()
	}
	for _, st := range detail.Steps {
		if out, _ := st.Output.(map[string]any); st.ID == "approve" && !strings.HasPrefix(fmt.Sprint(out["answeredBy"]), "token:") {
			t.Errorf("approve's recorded output = %v; want answeredBy token:NAME", st.Output)
		}
	}

	// The schedule's run has no client: it waits in the console (overlap
	// skip keeps it the only one), and a decline there ends it. Its page
	// is open before the question comes (while build runs): the form
	// appears on its own.
	var sched string
	// Under load the first part may outlast build: a run already asking
	// does too (its page then shows the form at once, logged below).
	waitFor(t, "a schedule's run, building or asking", func() bool {
		for _, r := range runs("trigger=schedule:nightly&status=running").Runs {
			var d httpapi.RunDetail
			req, _ := http.NewRequest("GET", base+"/api/v1/runs/"+r.ID, nil)
			req.Header.Set("Authorization", "Bearer "+approvalToken)
			if res, err := http.DefaultClient.Do(req); err == nil {
				json.NewDecoder(res.Body).Decode(&d)
				res.Body.Close()
			}
			if len(d.Steps) > 1 && (d.Steps[0].Status == "running" || d.Steps[1].Status == "running") {
				sched = r.ID
			}
		}
		return sched != ""
	})
	b.do(t, chromedp.Navigate(base+"/ui/runs/"+sched))
	if b.eval(t, `String(!!document.querySelector('form[data-action=answer]'))`) == "true" {
		t.Log("the scheduled run asked before its page loaded; the live arrival of the form is not shown this time")
	}
	b.waitJS(t, "the scheduled run's question, shown by the live page", `!!document.querySelector('form[data-action=answer][data-step=approve]')`)
	if msg := b.eval(t, `document.querySelector('form[data-action=answer] .message').textContent`); msg != "Deploy batch tonight?" {
		t.Errorf("the scheduled run's form asks %q; want Deploy batch tonight?", msg)
	}
	b.do(t, chromedp.Click(chromedp.CSS(`[data-answer=decline]`)))
	b.waitJS(t, "the scheduled run, declined", `location.pathname === '/ui/runs/`+sched+`' && !!document.querySelector('[data-run-status=completed]')`)
}
