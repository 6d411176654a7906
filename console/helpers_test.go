package console

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/runtime"
)

// testWorkflows are the workflows of the console's tests; their backend
// is fakeBackend.
const testWorkflows = `compositeTools:
  - name: quick
    description: Echo once
    steps:
      - {id: say, tool: tb.echo, arguments: {text: hello}}
  - name: other
    description: Echo as another workflow
    parameters:
      who: {type: string, description: whom to greet, default: world}
    steps:
      - {id: greet, tool: tb.echo, arguments: {text: "hi {{.params.who}}"}}
  - name: mixed
    description: Steps that end every way
    steps:
      - {id: fine, tool: tb.echo, arguments: {text: fine}}
      - id: broken
        tool: tb.fail
        arguments: {text: disk full}
        onError: {action: continue}
      - id: never
        tool: tb.echo
        condition: "{{eq 1 2}}"
        arguments: {text: no}
      - id: loop
        type: forEach
        collection: [a, b]
        itemVar: x
        steps:
          - {id: inner, tool: tb.echo, arguments: {text: "item {{.forEach.x}}"}}
  - name: echo
    description: Echo the text given
    parameters:
      text: {type: string, required: true}
    steps:
      - {id: out, tool: tb.echo, arguments: {text: "{{.params.text}}"}}
  - name: failing
    description: Fail with the text given
    parameters:
      text: {type: string, required: true}
    steps:
      - {id: boom, tool: tb.fail, arguments: {text: "{{.params.text}}"}}
  - name: parent
    description: Run quick as a child, and loop over a single step
    steps:
      - {id: child, type: workflow, workflow: quick}
      - id: each
        type: forEach
        collection: [x, y]
        itemVar: v
        step: {tool: tb.echo, arguments: {text: "got {{.forEach.v}}"}}
  - name: flaky
    description: Fail once, then succeed on the retry
    steps:
      - id: shaky
        tool: tb.flaky
        arguments: {}
        onError: {action: retry, maxRetries: 2, retryDelay: 1ms}
  - name: named
    description: A loop body that fails for each of its named items
    steps:
      - id: hosts
        type: forEach
        collection: [{name: web-1}, {name: web-2}]
        onError: {action: continue}
        steps:
          - {id: ping, tool: tb.fail, arguments: {text: "{{.forEach.item.name}} is down"}}
  - name: blocked
    description: Wait until released or cancelled
    steps:
      - {id: wait, tool: tb.block, arguments: {}}
`

// fakeBackend answers tb.echo with {text}, tb.fail with an error result,
// and tb.block when release is closed or the call is cancelled.
type fakeBackend struct {
	release   chan struct{}
	mu        sync.Mutex
	cancelled int
	flakes    int
	started   chan struct{}
}

func (b *fakeBackend) CallTool(ctx context.Context, call runtime.ToolCall) (*runtime.ToolResult, error) {
	text, _ := call.Arguments["text"].(string)
	switch call.Tool {
	case "echo":
		return &runtime.ToolResult{Structured: map[string]any{"text": text}}, nil
	case "fail":
		return &runtime.ToolResult{IsError: true, Content: []runtime.Content{{Type: "text", Text: text}}}, nil
	case "flaky":
		b.mu.Lock()
		b.flakes++
		n := b.flakes
		b.mu.Unlock()
		if n == 1 {
			return &runtime.ToolResult{IsError: true, Content: []runtime.Content{{Type: "text", Text: "try again"}}}, nil
		}
		return &runtime.ToolResult{Structured: map[string]any{"attempt": n}}, nil
	case "block":
		b.started <- struct{}{}
		select {
		case <-b.release:
			return &runtime.ToolResult{Structured: map[string]any{"released": true}}, nil
		case <-ctx.Done():
			b.mu.Lock()
			b.cancelled++
			b.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	return nil, fmt.Errorf("no tool %s", call.Tool)
}

type fixture struct {
	c       *Console
	engine  *runtime.Engine
	store   *runtime.MemoryStore
	backend *fakeBackend
	now     time.Time // the console's clock when it is frozen (see clock)
	mu      sync.Mutex
}

// newFixture builds an engine over the test workflows and a console with
// the given tokens (each with every scope).
func newFixture(t testing.TB, tokens ...string) *fixture {
	t.Helper()
	return newScopedFixture(t, httpsafe.AllScopes(tokens...))
}

// newScopedFixture is newFixture with tokens that carry their own scopes.
func newScopedFixture(t testing.TB, tokens []httpsafe.Token) *fixture {
	t.Helper()
	plan, diags := compiler.Compile([]compiler.Source{{Name: "wf.yaml", Src: []byte(testWorkflows)}}, compiler.Options{})
	if diags.HasErrors() {
		t.Fatalf("compile: %v", diags)
	}
	f := &fixture{store: runtime.NewMemoryStore(0), backend: &fakeBackend{release: make(chan struct{}), started: make(chan struct{}, 10)}}
	eng, err := runtime.New(plan, runtime.Options{Backend: f.backend, Store: f.store})
	if err != nil {
		t.Fatal(err)
	}
	f.engine = eng
	f.c, err = New(Options{Engine: eng, Store: f.store, Rerun: fixtureRerunner{f}, Tokens: tokens, Sources: map[string][]byte{"wf.yaml": []byte(testWorkflows)}, Now: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.c.Close)
	return f
}

// fixtureRerunner re-runs through the fixture's engine, to the end.
type fixtureRerunner struct{ f *fixture }

func (r fixtureRerunner) Rerun(ctx context.Context, id string, current bool) (*runtime.Run, error) {
	rr, err := runtime.PrepareRerun(ctx, r.f.store, r.f.engine.Workflow, id, current)
	if err != nil {
		return nil, err
	}
	return r.f.engine.Run(ctx, rr.Workflow, rr.Params, rr.Options)
}

func (f *fixture) clock() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.now.IsZero() {
		return time.Now()
	}
	return f.now
}

func (f *fixture) setClock(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = t
}

// run runs a workflow to the end and returns its record.
func (f *fixture) run(t testing.TB, name string, params map[string]any) *runtime.Run {
	t.Helper()
	run, err := f.engine.Run(context.Background(), name, params, runtime.RunOptions{OnEvent: f.c.Observe})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// start starts the blocked workflow and returns its run id once the
// backend call is in flight, with a channel that gets the final record.
func (f *fixture) start(t testing.TB) (string, <-chan *runtime.Run) {
	t.Helper()
	return f.startAs(t, "")
}

// startAs is start with the run owned by owner.
func (f *fixture) startAs(t testing.TB, owner string) (string, <-chan *runtime.Run) {
	t.Helper()
	done := make(chan *runtime.Run, 1)
	id := fmt.Sprintf("blocked-%d", time.Now().UnixNano())
	go func() {
		run, err := f.engine.Run(context.Background(), "blocked", nil, runtime.RunOptions{RunID: id, Owner: owner, OnEvent: f.c.Observe})
		if err != nil {
			t.Error(err)
		}
		done <- run
	}()
	select {
	case <-f.backend.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the blocked run did not start")
	}
	return id, done
}

// get serves one request to the console and returns the response.
func (f *fixture) get(t testing.TB, path string, cookies ...*http.Cookie) *http.Response {
	t.Helper()
	return f.do(t, httptest.NewRequest("GET", "http://127.0.0.1"+path, nil), cookies...)
}

func (f *fixture) post(t testing.TB, path string, form url.Values, cookies ...*http.Cookie) *http.Response {
	t.Helper()
	req := httptest.NewRequest("POST", "http://127.0.0.1"+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return f.do(t, req, cookies...)
}

func (f *fixture) do(t testing.TB, req *http.Request, cookies ...*http.Cookie) *http.Response {
	t.Helper()
	for _, c := range cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	f.c.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t testing.TB, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// csrfOf reads the CSRF token of the page's first form.
func csrfOf(t testing.TB, page string) string {
	t.Helper()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF field in the page:\n%s", page)
	}
	return m[1]
}

func cookieNamed(res *http.Response, name string) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}
