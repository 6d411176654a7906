package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/vmcp-dev/vmcp/runtime"
)

// sseData returns the data of each SSE event in body.
func sseData(body string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			if json.Unmarshal([]byte(d), &m) == nil {
				out = append(out, m)
			}
		}
	}
	return out
}

// TestCallStreamsKeepProgressApart: with the session's GET stream open and
// several calls of one session in flight at once, each call's progress
// arrives on its own response stream, in order, before its result, and
// nothing of it on the GET stream or on another call's stream.
func TestCallStreamsKeepProgressApart(t *testing.T) {
	const steps, calls = 6, 8
	runner := &fakeRunner{wfs: testWorkflows}
	runner.script = func(_ context.Context, wf string, _ map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
		for i := range steps {
			opts.OnEvent(runtime.Event{Kind: runtime.EventStepCompleted, StepID: fmt.Sprintf("s%d", i), Done: i + 1, Total: steps})
			time.Sleep(time.Millisecond)
		}
		return completed(opts.RunID, wf, map[string]any{"greeting": "hi"}), nil
	}
	s := newTestServer(t, runner)
	_, url := serveEndpoint(t, s, 17499)
	id := openSession(t, url)

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", err, resp)
	}
	var listened strings.Builder
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			listened.WriteString(sc.Text() + "\n")
		}
	}()

	var wg sync.WaitGroup
	bodies := make([]string, calls)
	for c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"greet","arguments":{"who":"x"},"_meta":{"progressToken":"tok-%d"}}}`, c+1, c)
			_, _, bodies[c] = postJSON(t, url, id, msg)
		}()
	}
	wg.Wait()
	cancel()
	<-done
	resp.Body.Close()

	for c, body := range bodies {
		msgs := sseData(body)
		var got []string
		for _, m := range msgs {
			if m["method"] == "notifications/progress" {
				p := m["params"].(map[string]any)
				got = append(got, fmt.Sprintf("%v:%v", p["progressToken"], p["progress"]))
			}
		}
		var want []string
		for i := 1; i <= steps; i++ {
			want = append(want, fmt.Sprintf("tok-%d:%d", c, i))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("call %d: progress on its response stream (-want +got):\n%s", c, diff)
		}
		if len(msgs) == 0 || fmt.Sprint(msgs[len(msgs)-1]["id"]) != fmt.Sprint(c+1) {
			t.Errorf("call %d: the response stream does not end with the result: %s", c, body)
		}
	}
	if strings.Contains(listened.String(), "notifications/progress") {
		t.Errorf("the GET stream carried progress:\n%s", listened.String())
	}
}

// TestPeekMessage: the endpoint reads the method, the id and the protocol
// version of _meta under the key mcp-go uses.
func TestPeekMessage(t *testing.T) {
	meta := &mcp.Meta{}
	meta.SetProtocolVersion(mcp.ProtocolVersion20260728)
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": map[string]any{"_meta": meta}})
	if err != nil {
		t.Fatal(err)
	}
	m := peekMessage(body)
	if m.Method != "tools/list" || fmt.Sprint(m.ID) != "7" || m.protocolVersion() != mcp.ProtocolVersion20260728 {
		t.Errorf("peekMessage(%s) = %+v; want tools/list, id 7, version %s", body, m, mcp.ProtocolVersion20260728)
	}
}
