package e2e

// Owners against a real `vmcp run --transport http`: two run tokens, A
// (named alice) and B (unnamed, so its owner is "token:" and 8 hex digits
// of its hash), and an admin token. B cannot list, read, answer or cancel
// A's runs and tasks over the HTTP API, `vmcp runs`, tasks/* (both
// flavours), the console's pages or its event stream: each of A's ids is
// "not found" to B, with the same answer as an id that does not exist.
// admin sees both owners' runs, and the owner shows in the API and the
// console. A's child run (a workflow step's) is A's too.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/httpsafe"
	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// The owners tests' own port range.
const ownersPortLo, ownersPortHi = 17900, 17924

const ownersConfig = `
backends:
  tb: {command: "${TB}", args: [-record, "${REC}"]}
state: {store: sqlite, path: "${DIR}/state.db"}
server:
  auth:
    tokens:
      - {token: token-a, name: alice, scopes: [run]}
      - {token: token-b, scopes: [run]}
      - {token: token-admin, name: ops, scopes: [run, admin]}
compositeTools:
  - name: say
    description: Echo
    parameters:
      text: {type: string, required: true}
    steps:
      - {id: say, tool: tb.echo, arguments: {text: "{{.params.text}}"}}
  - name: say_in_child
    description: Echo in a child run
    parameters:
      text: {type: string, required: true}
    steps:
      - {id: child, type: workflow, workflow: say, arguments: {text: "{{.params.text}}"}}
  - name: long_nap
    description: Sleep until cancelled
    parameters:
      label: {type: string, required: true}
    steps:
      - {id: nap, tool: tb.sleep, arguments: {ms: 60000, label: "{{.params.label}}"}}
  - name: ask_name
    description: Ask for a name, then greet
    steps:
      - id: ask
        type: elicitation
        message: What is your name?
        schema: {type: object, properties: {name: {type: string}}, required: [name]}
      - {id: greet, tool: tb.echo, dependsOn: [ask], arguments: {text: "hello {{.steps.ask.output.content.name}}"}}
`

// caller is one token's way into the server.
type caller struct {
	token string
	base  string // http://host:port
}

// do sends an API request with the caller's token and returns the status
// and the body.
func (c caller) do(t *testing.T, method, path string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// ownedRun is what the tests read of a run in a list.
type ownedRun struct{ ID, Owner string }

// runs lists the runs the caller sees over the API.
func (c caller) runs(t *testing.T) map[string]ownedRun {
	t.Helper()
	code, body := c.do(t, http.MethodGet, "/api/v1/runs?limit=1000")
	var list struct{ Runs []ownedRun }
	if err := json.Unmarshal([]byte(body), &list); code != 200 || err != nil {
		t.Fatalf("GET /api/v1/runs = %d %s", code, body)
	}
	out := map[string]ownedRun{}
	for _, r := range list.Runs {
		out[r.ID] = r
	}
	return out
}

func (c caller) headers() map[string]string {
	return map[string]string{"Authorization": "Bearer " + c.token}
}

// call calls tool with the caller's token (a plain tools/call) and
// returns the run id.
func (c caller) call(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	mc := testenv.HTTPClientHeaders(t, c.base+"/mcp", c.headers())
	res := mustCall(t, mc, tool, args)
	if res.IsError {
		t.Fatalf("%s failed: %s", tool, testenv.ResultText(res))
	}
	return fmt.Sprint(res.Meta.AdditionalFields["vmcp/runId"])
}

// notFoundAsUnknown checks that B's answer about A's id is the answer
// about an id that does not exist (the id itself aside).
func notFoundAsUnknown(t *testing.T, what string, code int, body, id string, unknownCode int, unknownBody, unknown string) {
	t.Helper()
	got, want := strings.ReplaceAll(body, id, "ID"), strings.ReplaceAll(unknownBody, unknown, "ID")
	if code != http.StatusNotFound || code != unknownCode || got != want {
		t.Errorf("%s of another owner's run = %d %.300q; want 404 as for an unknown id: %d %.300q", what, code, got, unknownCode, want)
	}
}

func TestOwnersSeeTheirOwnRuns(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "record.txt")
	mcpURL, _ := httpVMCPOn(t, writeConfig(t, ownersConfig, rec), ownersPortLo, ownersPortHi)
	base := strings.TrimSuffix(mcpURL, "/mcp")
	a, b, admin := caller{"token-a", base}, caller{"token-b", base}, caller{"token-admin", base}
	bOwner := httpsafe.TokenSubject("token-b")

	// A's runs: a task that sleeps, a task that waits for an answer, and a
	// run with a child run. B's: one plain run.
	extA := &testenv.ExtTasks{URL: mcpURL, Headers: a.headers()}
	nap := extA.StartTask(t, "long_nap", map[string]any{"label": "a-nap"})
	waitRecord(t, rec, "start a-nap")
	ask := extA.StartTask(t, "ask_name", nil)
	asked := extA.Wait(t, ask, "input_required")
	parent := a.call(t, "say_in_child", map[string]any{"text": "from a"})
	var pd httpapi.RunDetail
	if code, body := a.do(t, http.MethodGet, "/api/v1/runs/"+parent); code != 200 || json.Unmarshal([]byte(body), &pd) != nil || len(pd.Children) != 1 {
		t.Fatalf("A's GET of its own run = %d %s; want it with one child", code, body)
	}
	child := pd.Children[0].ID
	mine := b.call(t, "say", map[string]any{"text": "from b"})
	aIDs := []string{nap, ask, parent, child}
	unknown := uuid.NewString()

	t.Run("API", func(t *testing.T) {
		uCode, uBody := b.do(t, http.MethodGet, "/api/v1/runs/"+unknown)
		cCode, cBody := b.do(t, http.MethodPost, "/api/v1/runs/"+unknown+"/cancel")
		for _, id := range aIDs {
			code, body := b.do(t, http.MethodGet, "/api/v1/runs/"+id)
			notFoundAsUnknown(t, "B's GET", code, body, id, uCode, uBody, unknown)
			code, body = b.do(t, http.MethodPost, "/api/v1/runs/"+id+"/cancel")
			notFoundAsUnknown(t, "B's cancel", code, body, id, cCode, cBody, unknown)
		}
		if code, body := b.do(t, http.MethodGet, "/api/v1/runs?parent="+parent); code != 200 || strings.Contains(body, child) {
			t.Errorf("B's GET ?parent= of A's run = %d %s; want no runs", code, body)
		}
		bRuns := b.runs(t)
		if _, ok := bRuns[mine]; !ok || len(bRuns) != 1 || bRuns[mine].Owner != bOwner {
			t.Errorf("B lists %v; want only its own run %s, owned by %s", bRuns, mine, bOwner)
		}
		aRuns := a.runs(t)
		for _, id := range aIDs {
			if aRuns[id].Owner != "alice" {
				t.Errorf("A lists run %s with owner %q; want it, owned by alice", id, aRuns[id].Owner)
			}
		}
		if _, ok := aRuns[mine]; ok {
			t.Errorf("A lists B's run %s", mine)
		}
		all := admin.runs(t)
		for _, id := range aIDs {
			if all[id].Owner != "alice" {
				t.Errorf("admin lists run %s with owner %q; want alice", id, all[id].Owner)
			}
		}
		if all[mine].Owner != bOwner {
			t.Errorf("admin lists B's run with owner %q; want %s", all[mine].Owner, bOwner)
		}
		if code, body := admin.do(t, http.MethodGet, "/api/v1/runs/"+nap); code != 200 || !strings.Contains(body, `"owner": "alice"`) {
			t.Errorf("admin's GET of A's run = %d %s; want it, owned by alice", code, body)
		}
		if code, body := a.do(t, http.MethodGet, "/api/v1/runs/"+nap); code != 200 || !strings.Contains(body, `"status": "running"`) {
			t.Errorf("A's run after B's cancel = %d %s; want it still running", code, body)
		}
	})

	t.Run("vmcp runs", func(t *testing.T) {
		out, stderr, code := run(t, 60*time.Second, "", bins.vmcp, "runs", "list", "--url", base, "--token", "token-b")
		if code != 0 || !strings.Contains(out, mine) {
			t.Fatalf("vmcp runs list with B's token = exit %d\n%s%s; want B's run", code, out, stderr)
		}
		for _, id := range aIDs {
			if strings.Contains(out, id) {
				t.Errorf("vmcp runs list with B's token lists A's run %s:\n%s", id, out)
			}
		}
		out, _, code = run(t, 60*time.Second, "", bins.vmcp, "runs", "show", nap, "--url", base, "--token", "token-b")
		if code == 0 || strings.Contains(out, "a-nap") {
			t.Errorf("vmcp runs show of A's run with B's token = exit %d\n%s; want it not found", code, out)
		}
		out, stderr, code = run(t, 60*time.Second, "", bins.vmcp, "runs", "show", nap, "--url", base, "--token", "token-admin")
		if code != 0 || !strings.Contains(out, "owner     alice") {
			t.Errorf("vmcp runs show of A's run with the admin token = exit %d\n%s%s; want it, owned by alice", code, out, stderr)
		}
	})

	t.Run("tasks", func(t *testing.T) {
		extB := &testenv.ExtTasks{URL: mcpURL, Headers: b.headers()}
		uGet := extB.Get(t, unknown)
		for _, id := range []string{nap, ask} {
			r := extB.Get(t, id)
			if got, want := strings.ReplaceAll(fmt.Sprintf("%+v", r.Error), id, "ID"), strings.ReplaceAll(fmt.Sprintf("%+v", uGet.Error), unknown, "ID"); r.Error == nil || got != want {
				t.Errorf("B's tasks/get of A's task = %s; want the answer for an unknown id, %s", got, want)
			}
			if r := extB.Request(t, "tasks/cancel", map[string]any{"taskId": id}); r.Error == nil {
				t.Errorf("B's tasks/cancel of A's task succeeded")
			}
		}
		var key string
		for k := range asked["inputRequests"].(map[string]any) {
			key = k
		}
		if r := extB.Request(t, "tasks/update", map[string]any{"taskId": ask, "inputResponses": map[string]any{
			key: map[string]any{"action": "accept", "content": map[string]any{"name": "Mallory"}}}}); r.Error == nil {
			t.Errorf("B's answer to A's task was accepted")
		}
		if s := extA.Get(t, ask).Result["status"]; s != "input_required" {
			t.Errorf("A's task after B's answer is %v; want still input_required", s)
		}
		listed := func(c caller) []string {
			mc := v1Client(t, mcpURL, c.headers())
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			list, err := mc.ListTasks(ctx, mcp.ListTasksRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, lt := range list.Tasks {
				ids = append(ids, lt.TaskId)
			}
			return ids
		}
		if ids := listed(b); slices.Contains(ids, nap) || slices.Contains(ids, ask) {
			t.Errorf("B's tasks/list = %v; want none of A's tasks", ids)
		}
		if ids := listed(admin); !slices.Contains(ids, nap) || !slices.Contains(ids, ask) {
			t.Errorf("admin's tasks/list = %v; want A's tasks %s and %s", ids, nap, ask)
		}
		if r := (&testenv.ExtTasks{URL: mcpURL, Headers: admin.headers()}).Get(t, nap); r.Error != nil || r.Result["status"] != "working" {
			t.Errorf("admin's tasks/get of A's task = %+v; want it working", r)
		}
	})

	t.Run("console", func(t *testing.T) {
		bc, adminC := signInConsole(t, base, "token-b"), signInConsole(t, base, "token-admin")
		code, page := bc.get(t, "/ui/runs")
		if code != 200 || !strings.Contains(page, mine) {
			t.Fatalf("B's runs page = %d; want its run %s", code, mine)
		}
		for _, id := range aIDs {
			if strings.Contains(page, id) {
				t.Errorf("B's runs page lists A's run %s", id)
			}
		}
		if code, page := adminC.get(t, "/ui/runs"); code != 200 || !strings.Contains(page, nap) || !strings.Contains(page, `data-owner="alice"`) || !strings.Contains(page, mine) {
			t.Errorf("admin's runs page = %d; want A's runs, owned by alice, and B's", code)
		}
		uCode, uPage := bc.get(t, "/ui/runs/"+unknown)
		csrf := csrfField.FindStringSubmatch(page)
		for _, id := range aIDs {
			code, body := bc.get(t, "/ui/runs/"+id)
			notFoundAsUnknown(t, "B's console page", code, body, id, uCode, uPage, unknown)
			if code, _ := bc.get(t, "/ui/runs/"+id+"/live"); code != http.StatusNotFound {
				t.Errorf("B's live part of A's run = %d; want 404", code)
			}
			if code, _ := bc.post(t, "/ui/runs/"+id+"/cancel", url.Values{"csrf": {csrf[1]}}); code != http.StatusNotFound {
				t.Errorf("B's console cancel of A's run = %d; want 404", code)
			}
		}
		if code, page := adminC.get(t, "/ui/runs/"+nap); code != 200 || !strings.Contains(page, `data-owner="alice"`) {
			t.Errorf("admin's page of A's run = %d; want it, owned by alice", code)
		}

		// Event streams: B's snapshot has its own run alone; then A
		// cancels its task and B makes a new run. B's stream gets its new
		// run's events and none of A's; admin's gets A's cancelled run.
		bEvents, adminEvents := bc.events(t), adminC.events(t)
		seen := bEvents.until(t, func(e consoleEvent) bool { return e.Run == mine })
		for _, e := range seen {
			if slices.Contains(aIDs, e.Run) {
				t.Errorf("B's event stream snapshot has A's run: %+v", e)
			}
		}
		if code, body := a.do(t, http.MethodPost, "/api/v1/runs/"+nap+"/cancel"); code != 200 || !strings.Contains(body, `"status": "cancelled"`) {
			t.Fatalf("A's cancel of its own run = %d %s; want it cancelled", code, body)
		}
		again := b.call(t, "say", map[string]any{"text": "again"})
		for _, e := range bEvents.until(t, func(e consoleEvent) bool { return e.Run == again && e.Kind == "run_finished" }) {
			if slices.Contains(aIDs, e.Run) {
				t.Errorf("B's event stream has an event of A's run: %+v", e)
			}
		}
		adminEvents.until(t, func(e consoleEvent) bool { return e.Run == nap && e.Kind == "run_finished" })
	})

	// A may cancel its own task.
	if r := extA.Request(t, "tasks/cancel", map[string]any{"taskId": ask}); r.Error != nil {
		t.Errorf("A's tasks/cancel of its own task = %v", r.Error)
	}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// consoleClient is a browser-like client signed in to the console.
type consoleClient struct {
	base string
	http *http.Client
}

// signInConsole signs in to the console with token.
func signInConsole(t *testing.T, base, token string) *consoleClient {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &consoleClient{base: base, http: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
	code, page := c.get(t, "/ui/signin")
	m := csrfField.FindStringSubmatch(page)
	if code != 200 || m == nil {
		t.Fatalf("GET /ui/signin = %d without a CSRF field", code)
	}
	if code, page := c.post(t, "/ui/signin", url.Values{"csrf": {m[1]}, "token": {token}, "next": {"/ui/runs"}}); code != 200 || !strings.Contains(page, "Sign out") {
		t.Fatalf("sign-in with %s = %d; want the runs page", token, code)
	}
	return c
}

func (c *consoleClient) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := c.http.Get(c.base + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (c *consoleClient) post(t *testing.T, path string, form url.Values) (int, string) {
	t.Helper()
	resp, err := c.http.PostForm(c.base+path, form)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// consoleEvent is the data of one console event.
type consoleEvent struct {
	Run, Kind, Status string
}

// eventStream is an open /ui/events stream.
type eventStream struct{ ch <-chan consoleEvent }

// events opens the console's event stream with a snapshot of every run
// (since=0); it closes at the end of the test.
func (c *consoleClient) events(t *testing.T) eventStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/ui/events?since=0", nil)
	client := &http.Client{Jar: c.http.Jar} // no timeout: the stream stays open
	resp, err := client.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /ui/events = %v, %v", resp, err)
	}
	ch := make(chan consoleEvent, 256)
	go func() {
		defer resp.Body.Close()
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var e consoleEvent
				if json.Unmarshal([]byte(d), &e) == nil {
					ch <- e
				}
			}
		}
	}()
	return eventStream{ch}
}

// until returns the events up to and with the first that done accepts;
// it fails the test if the stream ends first (or after a minute, so a
// broken server cannot hang the test).
func (s eventStream) until(t *testing.T, done func(consoleEvent) bool) []consoleEvent {
	t.Helper()
	var seen []consoleEvent
	limit := time.After(time.Minute)
	for {
		select {
		case e, ok := <-s.ch:
			if !ok {
				t.Fatalf("the event stream ended after %+v", seen)
			}
			seen = append(seen, e)
			if done(e) {
				return seen
			}
		case <-limit:
			t.Fatalf("the awaited event did not come; seen %+v", seen)
		}
	}
}
