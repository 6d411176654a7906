package console

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/runtime"
)

const approveWorkflow = `compositeTools:
  - name: approve
    description: Ask, then echo the answer
    steps:
      - id: ask
        type: elicitation
        message: Deploy web to prod?
        schema:
          type: object
          properties:
            approve: {type: boolean, title: Deploy now}
            replicas: {type: integer, minimum: 1, maximum: 10}
            region: {type: string, enum: [eu, us]}
            checks: {type: array, items: {type: string, enum: [smoke, load]}}
            note: {type: string}
          required: [replicas, region]
        onDecline: {action: skip_remaining}
      - {id: done, tool: tb.echo, dependsOn: [ask], arguments: {text: "{{.steps.ask.output.content.replicas}} in {{.steps.ask.output.content.region}}"}}
`

// answerFixture is a console with Questions over an engine serving
// approveWorkflow; a run started by startWaiting waits for the console.
type answerFixture struct {
	*fixture
	q *runtime.Questions
}

func newAnswerFixture(t *testing.T, tokens []httpsafe.Token) *answerFixture {
	t.Helper()
	plan, diags := compiler.Compile([]compiler.Source{{Name: "wf.yaml", Src: []byte(approveWorkflow)}}, compiler.Options{})
	if diags.HasErrors() {
		t.Fatalf("compile: %v", diags)
	}
	f := &fixture{store: runtime.NewMemoryStore(0), backend: &fakeBackend{release: make(chan struct{}), started: make(chan struct{}, 10)}}
	eng, err := runtime.New(plan, runtime.Options{Backend: f.backend, Store: f.store})
	if err != nil {
		t.Fatal(err)
	}
	f.engine = eng
	q := runtime.NewQuestions()
	f.c, err = New(Options{Engine: eng, Store: f.store, Tokens: tokens, Questions: q, Now: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.c.Close)
	return &answerFixture{fixture: f, q: q}
}

// startWaiting starts approve owned by owner, with no client to ask, and
// returns its id once its question waits, and the run's end.
func (f *answerFixture) startWaiting(t *testing.T, owner string) (string, <-chan *runtime.Run) {
	t.Helper()
	id := "run-" + owner
	done := make(chan *runtime.Run, 1)
	go func() {
		run, err := f.engine.Run(context.Background(), "approve", nil, runtime.RunOptions{RunID: id, Owner: owner, Elicitor: f.q.Wrap(nil), OnEvent: f.c.Observe})
		if err != nil {
			t.Error(err)
		}
		done <- run
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(f.q.Pending(id)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the run's question is not pending")
		}
		time.Sleep(time.Millisecond)
	}
	return id, done
}

func TestAnswerFormFromTheSchema(t *testing.T) {
	f := newAnswerFixture(t, nil)
	id, done := f.startWaiting(t, "")
	page := f.get(t, "/ui/runs/"+id)
	html := body(t, page)
	for _, want := range []string{
		`data-action="answer" data-step="ask"`, `Deploy web to prod?`,
		`<input type="checkbox" name="f.approve"> Deploy now`,
		`<input type="number" name="f.replicas" value="" step="1" min="1" max="10">`,
		`<select name="f.region"><option value="">choose</option><option value="eu">eu</option><option value="us">us</option></select>`,
		`<input type="checkbox" name="f.checks" value="smoke">`, `<input type="text" name="f.note" value="">`,
		`data-answer="accept"`, `data-answer="decline"`, `data-answer="cancel"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the run page lacks %s", want)
		}
	}
	nonce := cookieNamed(page, csrfCookie)
	csrf := csrfOf(t, html)
	// Without the CSRF token: refused, the question still waits.
	if res := f.post(t, "/ui/runs/"+id+"/answer", url.Values{"step": {"ask"}, "action": {"accept"}}, nonce); res.StatusCode != http.StatusForbidden {
		t.Errorf("an answer without the CSRF token = %d; want 403", res.StatusCode)
	}
	// A wrong answer: 422, each problem next to its field, still waiting.
	res := f.post(t, "/ui/runs/"+id+"/answer", url.Values{"csrf": {csrf}, "step": {"ask"}, "action": {"accept"},
		"f.replicas": {"12"}, "f.region": {"mars"}, "f.checks": {"smoke", "chaos"}}, nonce)
	html = body(t, res)
	if res.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a wrong answer = %d; want 422", res.StatusCode)
	}
	for _, want := range []string{`data-field-error="at most 10"`, `data-field-error="&#34;mars&#34; is not one of the choices"`, `data-field-error="&#34;chaos&#34; is not one of the choices"`, `value="12"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the refused answer's page lacks %s", want)
		}
	}
	if len(f.q.Pending(id)) != 1 {
		t.Fatal("the question stopped waiting after a refused answer")
	}
	res = f.post(t, "/ui/runs/"+id+"/answer", url.Values{"csrf": {csrf}, "step": {"ask"}, "action": {"accept"},
		"f.approve": {"on"}, "f.replicas": {"3"}, "f.region": {"eu"}, "f.checks": {"smoke", "load"}}, nonce)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/ui/runs/"+id {
		t.Fatalf("the answer = %d to %q; want a redirect to the run", res.StatusCode, res.Header.Get("Location"))
	}
	run := <-done
	if run.Status != runtime.RunCompleted || run.Output == nil {
		t.Fatalf("run = %s %v; want completed", run.Status, run.Error)
	}
	ask := run.Steps[0].Output.(map[string]any)
	content := ask["content"].(map[string]any)
	if ask["action"] != "accept" || content["approve"] != true || content["replicas"] != int64(3) || content["region"] != "eu" || len(content["checks"].([]any)) != 2 {
		t.Errorf("ask's output = %v; want the console's accept with approve, 3 replicas, eu, two checks", ask)
	}
	if got := run.Steps[1].Output.(map[string]any)["text"]; got != "3 in eu" {
		t.Errorf("done = %v; want 3 in eu", got)
	}
	// Answering again: nothing waits.
	if res := f.post(t, "/ui/runs/"+id+"/answer", url.Values{"csrf": {csrf}, "step": {"ask"}, "action": {"decline"}}, nonce); res.StatusCode != http.StatusConflict {
		t.Errorf("a second answer = %d; want 409", res.StatusCode)
	}
}

func TestDeclineFromTheConsole(t *testing.T) {
	f := newAnswerFixture(t, nil)
	id, done := f.startWaiting(t, "")
	page := f.get(t, "/ui/runs/"+id)
	html := body(t, page)
	res := f.post(t, "/ui/runs/"+id+"/answer", url.Values{"csrf": {csrfOf(t, html)}, "step": {"ask"}, "action": {"decline"}}, cookieNamed(page, csrfCookie))
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("decline = %d; want 303", res.StatusCode)
	}
	run := <-done
	if run.Steps[0].Output.(map[string]any)["action"] != "decline" || run.Steps[1].Status != runtime.StepSkipped {
		t.Errorf("after decline: ask %v, done %s; want decline and done skipped", run.Steps[0].Output, run.Steps[1].Status)
	}
}

// TestOnlyTheOwnerOrAnAdminAnswers: another owner's run is not found, its
// question stays.
func TestOnlyTheOwnerOrAnAdminAnswers(t *testing.T) {
	tokens := []httpsafe.Token{{Value: "ada-token", Name: "ada", Scopes: []httpsafe.Scope{httpsafe.ScopeRun}},
		{Value: "bob-token", Name: "bob", Scopes: []httpsafe.Scope{httpsafe.ScopeRun}}}
	f := newAnswerFixture(t, tokens)
	id, done := f.startWaiting(t, "ada")
	session := func(token string) []*http.Cookie {
		_, jar := signIn(t, f.fixture, token, "/ui/runs")
		return jar
	}
	bob := session("bob-token")
	page := f.get(t, "/ui/runs/"+id, bob...)
	if page.StatusCode != http.StatusNotFound {
		t.Errorf("bob's view of ada's waiting run = %d; want 404", page.StatusCode)
	}
	bobPage := body(t, f.get(t, "/ui/runs", bob...))
	if res := f.post(t, "/ui/runs/"+id+"/answer", url.Values{"csrf": {csrfOf(t, bobPage)}, "step": {"ask"}, "action": {"accept"}}, bob...); res.StatusCode != http.StatusNotFound {
		t.Errorf("bob's answer to ada's run = %d; want 404", res.StatusCode)
	}
	if len(f.q.Pending(id)) != 1 {
		t.Fatal("bob's refused answer ended ada's question")
	}
	ada := session("ada-token")
	page = f.get(t, "/ui/runs/"+id, ada...)
	html := body(t, page)
	if !strings.Contains(html, `data-action="answer"`) {
		t.Fatalf("ada's page of her run has no answer form:\n%s", html)
	}
	res := f.post(t, "/ui/runs/"+id+"/answer", url.Values{"csrf": {csrfOf(t, html)}, "step": {"ask"}, "action": {"cancel"}}, ada...)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("ada's cancel = %d; want 303", res.StatusCode)
	}
	if run := <-done; run.Steps[0].Status == runtime.StepRunning {
		t.Errorf("ada's run still waits after her cancel")
	}
}
