package e2e

// Opaque access tokens checked by RFC 7662 introspection: Ory Hydra issues
// opaque tokens (STRATEGIES_ACCESS_TOKEN=opaque), which vmcp cannot read,
// and vmcp asks Hydra's introspection endpoint (its admin API) about each
// one, remembering an answer for server.auth.oidc.introspection.cacheTTL.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

const introspectionConfig = `
backends:
  tb: {command: "${TB}"}
state: {store: sqlite, path: "${DIR}/state.db"}
server:
  auth:
    oidc:
      issuer: "${ISSUER}"
      audience: "${AUDIENCE}"
      introspection: {url: "${INTROSPECT}", cacheTTL: 1s}
compositeTools:
  - name: say
    description: Echo
    parameters:
      text: {type: string, required: true}
    steps:
      - {id: say, tool: tb.echo, arguments: {text: "{{.params.text}}"}}
`

// TestIntrospectedOpaqueTokens: alice's opaque token is accepted after
// introspection and owns the run it starts; one Hydra minted for another
// resource gets 401 invalid_token; once Hydra revokes alice's token, vmcp
// refuses it (at the latest a cacheTTL later).
func TestIntrospectedOpaqueTokens(t *testing.T) {
	h := testenv.StartHydra(t, exchangePortLo, exchangePortHi, "STRATEGIES_ACCESS_TOKEN=opaque")
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, exchangePortLo, exchangePortHi))
	base, audience := "http://"+addr, "http://"+addr+"/mcp"
	h.CreateClient(t, testenv.HydraClient{ID: "alice", Secret: aliceSecret, Scopes: []string{"vmcp:run"},
		Audience: []string{audience, "https://other.example/mcp"}})
	cfg := strings.NewReplacer("${ISSUER}", h.Issuer, "${AUDIENCE}", audience, "${INTROSPECT}", h.IntrospectURL()).Replace(introspectionConfig)
	startHTTPVMCPAt(t, writeConfig(t, cfg, ""), addr)
	e := &oidcEnv{hydra: h, base: base, audience: audience}

	tok := h.Token(t, "alice", aliceSecret, "vmcp:run", audience)
	if strings.Count(tok, ".") == 2 {
		t.Fatalf("Hydra issued a JWT (%.20s...); want an opaque token", tok)
	}
	alice := caller{token: tok, base: base}
	id := alice.call(t, "say", map[string]any{"text": "hi"})
	if r, ok := alice.runs(t)[id]; !ok || r.Owner != "alice" {
		t.Errorf("alice's runs = %v; want run %s owned by alice", alice.runs(t), id)
	}

	other := h.Token(t, "alice", aliceSecret, "vmcp:run", "https://other.example/mcp")
	code, challenge, _ := e.post(t, "Bearer "+other)
	if code != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) || !strings.Contains(challenge, "expected audience") {
		t.Errorf("a token for another resource got %d %q; want 401 invalid_token naming the audience", code, challenge)
	}

	h.Revoke(t, "alice", aliceSecret, tok)
	waitFor(t, "vmcp to refuse the revoked token", func() bool {
		code, challenge, _ := e.post(t, "Bearer "+tok)
		return code == http.StatusUnauthorized && strings.Contains(challenge, "not active")
	})
}
