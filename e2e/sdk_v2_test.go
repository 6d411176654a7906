package e2e

// vmcp driven by the MCP TypeScript SDK v2 client
// (@modelcontextprotocol/client, pinned in package.json), which speaks
// protocol 2026-07-28 when pinned to it or when its `auto` negotiation
// finds vmcp offering it. e2e/sdkclient/v2client.mjs makes the calls; the
// subtests here judge what it saw.

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// TestTypeScriptSDKv2Elicitation: greet's question reaches the v2 client
// and its accept, decline and cancel answers come back, over stdio and
// streamable HTTP, pinned to 2026-07-28 and in `auto` mode. On 2026-07-28
// the question must come as an input_required result: the v2 client never
// answers a server-initiated elicitation/create, so a server that sends one
// (as vmcp did over stdio) leaves the call to time out.
func TestTypeScriptSDKv2Elicitation(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "record.txt")
	cfg := writeConfig(t, testConfig+sdkWorkflows, rec)
	url, _ := httpVMCP(t, cfg)
	script := filepath.Join("e2e", "sdkclient", "v2client.mjs")
	for _, tr := range []string{"stdio", "http"} {
		for _, mode := range []string{"pin", "auto"} {
			t.Run(tr+"/"+mode, func(t *testing.T) {
				args := []string{script, "--negotiation", mode}
				if tr == "http" {
					args = append(args, "--url", url)
				} else {
					args = append(args, "--", bins.vmcp, "run", "--config", cfg, "--log-level", "warn")
				}
				stdout, stderr, code := run(t, 4*time.Minute, testenv.RepoRoot(), repoNode(t), args...)
				if code != 0 {
					t.Fatalf("v2client.mjs exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
				}
				var obs struct {
					Era             string                     `json:"era"`
					ProtocolVersion string                     `json:"protocolVersion"`
					Elicitation     map[string]json.RawMessage `json:"elicitation"`
				}
				if err := json.Unmarshal([]byte(stdout), &obs); err != nil {
					t.Fatalf("v2client.mjs printed no JSON (%v)\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
				}
				if obs.Era != "modern" || obs.ProtocolVersion != "2026-07-28" {
					t.Fatalf("the v2 client negotiated era %q, protocol %q; want modern, 2026-07-28", obs.Era, obs.ProtocolVersion)
				}
				for _, action := range []string{"accept", "decline", "cancel"} {
					t.Run(action, func(t *testing.T) { checkSDKElicitation(t, action, obs.Elicitation[action]) })
				}
			})
		}
	}
}
