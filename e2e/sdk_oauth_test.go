package e2e

// A real MCP client's OAuth flow: the TypeScript SDK's StreamableHTTP
// transport with its ClientCredentialsProvider (e2e/sdkclient/oauth.mjs)
// connects to a vmcp behind Ory Hydra knowing only its client's
// credentials, and finds everything else itself: the 401 and its
// resource_metadata, vmcp's RFC 9728 document, Hydra's metadata, the token
// endpoint; then it calls a tool, and the run is the client's.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

func TestTypeScriptSDKSignsInThroughTheMetadata(t *testing.T) {
	h := testenv.StartHydra(t, exchangePortLo, exchangePortHi)
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, exchangePortLo, exchangePortHi))
	base, audience := "http://"+addr, "http://"+addr+"/mcp"
	h.CreateClient(t, testenv.HydraClient{ID: "sdk-app", Secret: "sdk-app-secret-0123456789", Scopes: []string{"vmcp:run"}, Audience: []string{audience}})
	cfg := strings.NewReplacer("${ISSUER}", h.Issuer, "${AUDIENCE}", audience).Replace(oidcConfig)
	startHTTPVMCPAt(t, writeConfig(t, cfg, ""), addr)

	stdout, stderr, code := run(t, 2*time.Minute, testenv.RepoRoot(), repoNode(t), filepath.Join("e2e", "sdkclient", "oauth.mjs"),
		"--url", audience, "--client-id", "sdk-app", "--client-secret", "sdk-app-secret-0123456789", "--scope", "vmcp:run", "--audience", audience)
	if code != 0 {
		t.Fatalf("oauth.mjs exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var obs struct {
		Requests []struct {
			Method, URL string
			Status      int
		}
		Tools []string
		Call  struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
			Meta              map[string]any `json:"_meta"`
		}
		Error string
	}
	if err := json.Unmarshal([]byte(stdout), &obs); err != nil || obs.Error != "" {
		t.Fatalf("oauth.mjs: %v %s\nstdout:\n%s\nstderr:\n%s", err, obs.Error, stdout, stderr)
	}
	var seen []string
	for _, r := range obs.Requests {
		seen = append(seen, fmt.Sprintf("%s %s %d", r.Method, strings.TrimPrefix(strings.TrimPrefix(r.URL, base), strings.TrimSuffix(h.Issuer, "/")), r.Status))
	}
	t.Logf("the SDK's requests: %q", seen)
	// In order: the first request is refused, the metadata it names is
	// read, then the authorization server's, the token is fetched, and
	// the request goes again.
	want := []string{"POST /mcp 401", "GET /.well-known/oauth-protected-resource/mcp 200", "/.well-known/", "POST /oauth2/token 200", "POST /mcp 200"}
	i := 0
	for _, s := range seen {
		if i < len(want) && strings.Contains(s, want[i]) {
			i++
		}
	}
	if i != len(want) {
		t.Errorf("the SDK's requests were %q; want, in order, %q", seen, want)
	}
	if !strings.Contains(strings.Join(obs.Tools, " "), "say") {
		t.Errorf("tools/list = %v; want say", obs.Tools)
	}
	if obs.Call.IsError || fmt.Sprint(obs.Call.StructuredContent) == "map[]" {
		t.Errorf("say = %+v; want its output", obs.Call)
	}
	id := fmt.Sprint(obs.Call.Meta["vmcp/runId"])
	ops := caller{token: "token-admin", base: base}
	if r, ok := ops.runs(t)[id]; !ok || r.Owner != "sdk-app" {
		t.Errorf("run %s = %+v; want it owned by sdk-app (the SDK client's subject)", id, r)
	}
}
