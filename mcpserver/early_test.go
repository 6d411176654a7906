package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/runtime"
)

// earlyConn is a client end of ServeStdioEarly, speaking JSON-RPC lines.
type earlyConn struct {
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

func serveEarly(t *testing.T, build func() (*Server, error)) *earlyConn {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &earlyConn{in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	go func() {
		c.done <- ServeStdioEarly(context.Background(), inR, outW, EarlyOptions{Tasks: false}, build)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-c.done
	})
	return c
}

func (c *earlyConn) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// next reads the next message the server wrote.
func (c *earlyConn) next(t *testing.T) map[string]any {
	t.Helper()
	if !c.out.Scan() {
		t.Fatalf("the server wrote nothing more (%v)", c.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
		t.Fatalf("the server wrote %q: %v", c.out.Text(), err)
	}
	return m
}

const earlyInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`

// TestServeStdioEarly: initialize is answered before the server is built
// and tools/list waits for it; the built server then has the session the
// client initialized (it asks the client its elicitation, which it may do
// only because the replayed initialize declared the capability).
func TestServeStdioEarly(t *testing.T) {
	release := make(chan struct{})
	runner := &fakeRunner{wfs: testWorkflows}
	runner.script = func(ctx context.Context, wf string, _ map[string]any, opts runtime.RunOptions) (*runtime.Run, error) {
		res, err := opts.Elicitor.Elicit(ctx, runtime.ElicitRequest{Message: "ok?", Schema: map[string]any{"type": "object"}})
		if err != nil {
			return nil, err
		}
		return completed(opts.RunID, wf, map[string]any{"action": res.Action}), nil
	}
	c := serveEarly(t, func() (*Server, error) {
		<-release
		return newTestServer(t, runner), nil
	})
	c.send(t, earlyInitialize)
	init := c.next(t)
	if res, _ := init["result"].(map[string]any); res == nil || res["capabilities"] == nil {
		t.Fatalf("initialize = %v; want a result with capabilities", init)
	}
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	c.send(t, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if ping := c.next(t); ping["id"] != 3.0 {
		t.Fatalf("first answer after initialize = %v; want the ping's (tools/list waits for the server)", ping)
	}
	close(release)
	list := c.next(t)
	tools, _ := list["result"].(map[string]any)["tools"].([]any)
	if list["id"] != 2.0 || len(tools) != len(testWorkflows) {
		t.Fatalf("tools/list = %v; want the %d workflows", list, len(testWorkflows))
	}
	c.send(t, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"plain","arguments":{}}}`)
	ask := c.next(t)
	if ask["method"] != "elicitation/create" {
		t.Fatalf("after tools/call the server wrote %v; want an elicitation/create request", ask)
	}
	c.send(t, `{"jsonrpc":"2.0","id":`+string(mustJSON(t, ask["id"]))+`,"result":{"action":"decline"}}`)
	res := c.next(t)
	if res["id"] != 4.0 || res["result"].(map[string]any)["structuredContent"].(map[string]any)["action"] != "decline" {
		t.Fatalf("tools/call = %v; want the run's result with action decline", res)
	}
}

// TestServeStdioEarlyBuildFails: requests held and sent later are
// answered with the reason the server could not be built; initialize and
// ping still are answered; ServeStdioEarly returns the error at the end of
// the input.
func TestServeStdioEarlyBuildFails(t *testing.T) {
	release := make(chan struct{})
	c := serveEarly(t, func() (*Server, error) {
		<-release
		return nil, errors.New(`backend "never": initialize: no answer within 1s (the backend's startTimeout)`)
	})
	c.send(t, earlyInitialize)
	c.next(t)
	c.send(t, `{"jsonrpc":"2.0","id":"held","method":"tools/list"}`)
	close(release)
	want := `vmcp could not start: backend "never": initialize: no answer within 1s (the backend's startTimeout)`
	for _, id := range []any{"held", 7.0} {
		if id == 7.0 {
			c.send(t, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"plain"}}`)
		}
		m := c.next(t)
		e, _ := m["error"].(map[string]any)
		if m["id"] != id || e["message"] != want {
			t.Fatalf("answer = %v; want id %v with error %q", m, id, want)
		}
	}
	c.send(t, `{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	if m := c.next(t); m["id"] != 8.0 || m["result"] == nil {
		t.Fatalf("ping = %v; want a result", m)
	}
	c.in.Close()
	select {
	case err := <-c.done:
		if err == nil || err.Error() != want[len("vmcp could not start: "):] {
			t.Errorf("ServeStdioEarly = %v; want the build error", err)
		}
		c.done <- err // for the cleanup
	case <-time.After(time.Minute):
		t.Fatal("ServeStdioEarly did not return after the input ended")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
