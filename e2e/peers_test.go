package e2e

// vmcp between real MCP peers from the npm registry (package.json pins
// them): the MCP Inspector CLI as the client, and server-memory,
// server-everything (stdio and streamable HTTP) and server-filesystem as
// backends.

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// inspector runs the MCP Inspector CLI and returns its stdout, stderr and
// exit code.
func inspector(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	bin := testenv.NodeBin(t, "mcp-inspector")
	return run(t, 90*time.Second, testenv.RepoRoot(), bin, append([]string{"--cli", "-q"}, args...)...)
}

func TestInspector(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "record.txt")
	cfg := writeConfig(t, testConfig, rec)
	url, _ := httpVMCP(t, cfg)
	targets := map[string][]string{
		"stdio": {"--", bins.vmcp, "run", "--config", cfg, "--log-level", "warn"},
		"http":  {"--transport", "http", url},
	}
	for _, name := range []string{"stdio", "http"} {
		target := targets[name]
		t.Run(name, func(t *testing.T) {
			out, errOut, code := inspector(t, append([]string{"--method", "tools/list"}, target...)...)
			if code != 0 {
				t.Fatalf("inspector tools/list exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			var list struct {
				Tools []struct {
					Name         string         `json:"name"`
					InputSchema  map[string]any `json:"inputSchema"`
					OutputSchema map[string]any `json:"outputSchema"`
				} `json:"tools"`
			}
			if err := json.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("tools/list output is not JSON: %v\n%s", err, out)
			}
			found := false
			for _, tool := range list.Tools {
				if tool.Name == "add_then_echo" {
					found = true
					if tool.InputSchema["required"] == nil || tool.OutputSchema["properties"] == nil {
						t.Errorf("add_then_echo schemas = %v, %v; want required params and output properties", tool.InputSchema, tool.OutputSchema)
					}
				}
			}
			if want := len(withTestbackendTools(serverWorkflows...)); !found || len(list.Tools) != want {
				t.Errorf("inspector listed %d tools (add_then_echo found: %v); want %d\n%s", len(list.Tools), found, want, out)
			}

			out, errOut, code = inspector(t, append([]string{"--method", "tools/call", "--tool-name", "add_then_echo",
				"--tool-arg", "a=2", "--tool-arg", "b=40"}, target...)...)
			if code != 0 {
				t.Fatalf("inspector tools/call exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			var res struct {
				StructuredContent map[string]any `json:"structuredContent"`
				IsError           bool           `json:"isError"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("tools/call output is not JSON: %v\n%s", err, out)
			}
			want := map[string]any{"sum": 42.0, "text": "sum is 42"}
			if diff := cmp.Diff(want, res.StructuredContent); diff != "" || res.IsError {
				t.Errorf("inspector got structuredContent (-want +got):\n%s\n%s", diff, out)
			}

			out, errOut, code = inspector(t, append([]string{"--method", "tools/call", "--tool-name", "failing"}, target...)...)
			if code != 5 {
				t.Errorf("inspector calling a failing workflow exited %d; want 5\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			if !strings.Contains(out+errOut, `step \"boom\"`) && !strings.Contains(out+errOut, `step "boom"`) {
				t.Errorf("inspector output does not name the failed step boom:\n%s\n%s", out, errOut)
			}
		})
	}
}

const peersConfig = `
backends:
  memory: {command: "${NODE}/mcp-server-memory", env: {MEMORY_FILE_PATH: "${DIR}/memory.jsonl"}}
  everything: {command: "${NODE}/mcp-server-everything"}
  everything_http: {url: "${EVERYTHING_URL}", transport: streamable-http}
  fs: {command: "${NODE}/mcp-server-filesystem", args: ["${DIR}/files"]}
compositeTools:
  - name: remember
    description: Store a person in the memory graph, then read the graph and search it
    parameters:
      name: {type: string, required: true}
      fact: {type: string, required: true}
    steps:
      - id: create
        tool: memory.create_entities
        arguments:
          entities:
            - name: "{{.params.name}}"
              entityType: person
              observations: ["{{.params.fact}}"]
      - id: graph
        tool: memory.read_graph
        dependsOn: [create]
      - id: search
        tool: memory.search_nodes
        dependsOn: [create]
        arguments:
          query: "{{(index .steps.create.output.entities 0).name}}"
    output:
      properties:
        created: {type: string, value: "{{(index .steps.create.output.entities 0).name}}"}
        found: {type: array, value: "{{.steps.search.output.entities}}"}
        graph_size: {type: integer, value: "{{len .steps.graph.output.entities}}"}
  - name: everything_tour
    description: get-sum over stdio, echo of its text over streamable HTTP, structured content from both
    parameters:
      a: {type: number, required: true}
      b: {type: number, required: true}
    steps:
      - id: sum
        tool: everything.get-sum
        arguments: {a: "{{.params.a}}", b: "{{.params.b}}"}
      - id: echo
        tool: everything_http.echo
        dependsOn: [sum]
        arguments: {message: "{{.steps.sum.output.text}}"}
      - id: chicago
        tool: everything_http.get-structured-content
        arguments: {location: Chicago}
      - id: new_york
        tool: everything.get-structured-content
        arguments: {location: New York}
    output:
      properties:
        echoed: {type: string, value: "{{.steps.echo.output.text}}"}
        chicago: {type: object, value: "{{.steps.chicago.output}}"}
        new_york: {type: object, value: "{{.steps.new_york.output}}"}
  - name: note
    description: Write a note into the sandbox and read it back
    parameters:
      file: {type: string, required: true}
      body: {type: string, required: true}
    steps:
      - id: write
        tool: fs.write_file
        arguments: {path: "${DIR}/files/{{.params.file}}", content: "{{.params.body}}"}
      - id: read
        tool: fs.read_text_file
        dependsOn: [write]
        arguments: {path: "${DIR}/files/{{.params.file}}"}
    output:
      properties:
        read: {type: string, value: "{{.steps.read.output.content}}"}
`

// startEverythingHTTP runs server-everything's streamable HTTP server on a
// free port until the test ends.
func startEverythingHTTP(t *testing.T) string {
	t.Helper()
	port := testenv.FreePort(t, portLo, portHi)
	cmd := exec.Command(testenv.NodeBin(t, "mcp-server-everything"), "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	return startHTTPPeer(t, "server-everything", cmd, port)
}

// startHTTPPeer starts cmd, an MCP server that listens on 127.0.0.1:port,
// waits until it listens and stops it (its process group) when the test
// ends. It returns the server's /mcp URL.
func startHTTPPeer(t *testing.T, what string, cmd *exec.Cmd, port int) string {
	t.Helper()
	stderr := &testenv.Buffer{}
	cmd.Stdout, cmd.Stderr = stderr, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	waitFor(t, what+" to listen on "+addr, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return "http://" + addr + "/mcp"
}

func TestNPMBackends(t *testing.T) {
	node := filepath.Dir(testenv.NodeBin(t, "mcp-server-memory"))
	evURL := startEverythingHTTP(t)
	cfgText := strings.NewReplacer("${NODE}", node, "${EVERYTHING_URL}", evURL).Replace(peersConfig)
	cfg := writeConfig(t, cfgText, "")
	if err := os.Mkdir(filepath.Join(filepath.Dir(cfg), "files"), 0o755); err != nil {
		t.Fatal(err)
	}
	call := func(t *testing.T, tool string, args ...string) map[string]any {
		t.Helper()
		out, errOut, code := run(t, 90*time.Second, filepath.Dir(cfg), bins.vmcp,
			append([]string{"call", "--config", cfg, tool}, args...)...)
		if code != 0 {
			t.Fatalf("vmcp call %s exited %d\nstdout:\n%s\nstderr:\n%s", tool, code, out, errOut)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("vmcp call %s printed no JSON object: %v\n%s", tool, err, out)
		}
		return got
	}

	t.Run("memory", func(t *testing.T) {
		got := call(t, "remember", "--arg", "name=ada", "--arg", "fact=wrote the first program")
		want := map[string]any{
			"created":    "ada",
			"graph_size": 1.0,
			"found": []any{map[string]any{
				"name": "ada", "entityType": "person", "observations": []any{"wrote the first program"},
			}},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("remember mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("everything over stdio and HTTP", func(t *testing.T) {
		got := call(t, "everything_tour", "--args-json", `{"a": 19, "b": 23}`)
		if got["echoed"] != "Echo: The sum of 19 and 23 is 42." {
			t.Errorf("echoed = %q; want %q", got["echoed"], "Echo: The sum of 19 and 23 is 42.")
		}
		for _, city := range []string{"chicago", "new_york"} {
			w, _ := got[city].(map[string]any)
			if _, ok := w["temperature"].(float64); !ok {
				t.Errorf("%s = %v; want structured content with a numeric temperature", city, got[city])
			}
			if _, ok := w["conditions"].(string); !ok {
				t.Errorf("%s = %v; want structured content with conditions", city, got[city])
			}
		}
	})
	t.Run("filesystem", func(t *testing.T) {
		got := call(t, "note", "--arg", "file=todo.txt", "--arg", "body=buy milk")
		if diff := cmp.Diff(map[string]any{"read": "buy milk"}, got); diff != "" {
			t.Errorf("note mismatch (-want +got):\n%s", diff)
		}
		b, err := os.ReadFile(filepath.Join(filepath.Dir(cfg), "files", "todo.txt"))
		if err != nil || string(b) != "buy milk" {
			t.Errorf("the file on disk holds %q (%v); want %q", b, err, "buy milk")
		}
	})
}
