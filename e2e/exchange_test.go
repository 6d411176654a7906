package e2e

// Token exchange (RFC 8693) for a backend that must know on whose behalf
// vmcp calls it, with real parts: users get access tokens for vmcp from
// Ory Hydra (testenv.StartHydra), vmcp verifies them (server.auth.oidc),
// and the backend's credential is a token exchange at tools/exchangeop, a
// zitadel/oidc OpenID Provider that verifies Hydra's token against
// Hydra's JWKS and issues its own JWT for the backend
// (testenv.StartExchangeOP). The backend is the mcp-go test backend over
// streamable HTTP, which records the Authorization header of every
// request.

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// The token exchange tests' port range.
const exchangePortLo, exchangePortHi = 17002, 17039

const exchangeConfig = `
backends:
  api:
    url: "${API}"
    auth: {kind: token-exchange, tokenURL: "${XTOKEN_URL}", clientID: vmcp, clientSecret: vmcp-exchange-secret, audience: "http://api.test/mcp"}
  elsewhere:
    url: "${ELSEWHERE}"
    auth: {kind: token-exchange, tokenURL: "${XTOKEN_URL}", clientID: vmcp, clientSecret: vmcp-exchange-secret, audience: "http://not-served.test/mcp"}
server:
  auth:
    tokens:
      - {token: token-ops, name: ops, scopes: [run]}
    oidc: {issuer: "${ISSUER}", audience: "${AUDIENCE}"}
compositeTools:
  - name: call_api
    description: Echo through the api backend
    parameters:
      text: {type: string, required: true}
    steps:
      - {id: say, tool: api.echo, arguments: {text: "{{.params.text}}"}}
  - name: call_elsewhere
    description: Echo through the elsewhere backend
    parameters:
      text: {type: string, required: true}
    steps:
      - {id: say, tool: elsewhere.echo, arguments: {text: "{{.params.text}}"}}
`

// TestTokenExchange: alice's three calls reach the backend with one token
// exchangeop issued for the backend with alice's subject, bob's with
// another for bob; vmcp's own requests (initialize, tools/list) carry
// vmcp's token; no caller's Hydra token reaches the backend. A backend the
// exchange server issues no tokens for fails the step with its answer,
// naming the backend; a static token's run has no token to exchange.
func TestTokenExchange(t *testing.T) {
	h := testenv.StartHydra(t, exchangePortLo, exchangePortHi)
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, exchangePortLo, exchangePortHi))
	audience := "http://" + addr + "/mcp"
	x := testenv.StartExchangeOP(t, exchangePortLo, exchangePortHi, testenv.ExchangeOPConfig{
		SubjectIssuer: h.Issuer, SubjectJWKS: h.Issuer + ".well-known/jwks.json", SubjectAudience: audience,
		Audiences: []string{"http://api.test/mcp"}})
	api, record := startHTTPBackendIn(t, exchangePortLo, exchangePortHi)
	elsewhere, _ := startHTTPBackendIn(t, exchangePortLo, exchangePortHi)
	h.CreateClient(t, testenv.HydraClient{ID: "alice", Secret: aliceSecret, Scopes: []string{"vmcp:run"}, Audience: []string{audience}})
	h.CreateClient(t, testenv.HydraClient{ID: "bob", Secret: bobSecret, Scopes: []string{"vmcp:run"}, Audience: []string{audience}})
	cfg := strings.NewReplacer("${API}", api, "${ELSEWHERE}", elsewhere, "${XTOKEN_URL}", x.TokenURL,
		"${ISSUER}", h.Issuer, "${AUDIENCE}", audience).Replace(exchangeConfig)
	_, stderr, _ := startHTTPVMCPAt(t, writeConfig(t, cfg, ""), addr)

	base := "http://" + addr
	aliceToken := h.Token(t, "alice", aliceSecret, "vmcp:run", audience)
	bobToken := h.Token(t, "bob", bobSecret, "vmcp:run", audience)
	alice, bob := caller{token: aliceToken, base: base}, caller{token: bobToken, base: base}
	for i := range 3 {
		alice.call(t, "call_api", map[string]any{"text": fmt.Sprint("alice ", i)})
	}
	bob.call(t, "call_api", map[string]any{"text": "bob"})

	raw, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	bySubject := map[string]map[string]bool{} // sub -> the tokens seen
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		_, auth, _ := strings.Cut(l, " ")
		if strings.Contains(auth, aliceToken) || strings.Contains(auth, bobToken) {
			t.Fatalf("the backend got a caller's token: %.80q", l)
		}
		tok, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok {
			t.Fatalf("the backend's Authorization = %q; want a bearer token", auth)
		}
		c := jwtPart(t, tok, 1)
		if c["iss"] != x.Issuer {
			t.Errorf("the backend got a token of %v; want exchangeop's (%s)", c["iss"], x.Issuer)
		}
		sub := fmt.Sprint(c["sub"])
		if sub != "vmcp" && fmt.Sprint(c["aud"]) != "[http://api.test/mcp]" {
			t.Errorf("%s's token for the backend has aud %v; want [http://api.test/mcp]", sub, c["aud"])
		}
		if bySubject[sub] == nil {
			bySubject[sub] = map[string]bool{}
		}
		bySubject[sub][tok] = true
	}
	if len(bySubject["alice"]) != 1 || len(bySubject["bob"]) != 1 || len(bySubject["vmcp"]) != 1 || len(bySubject) != 3 {
		t.Errorf("the backend saw tokens of the subjects %v; want one each for alice (3 calls, one exchange), bob and vmcp (its own requests)", keys(bySubject))
	}

	// The exchange server refuses the audience: the step fails with its
	// answer, naming the backend; the session goes on for others.
	res := mustCall(t, testenv.HTTPClientHeaders(t, base+"/mcp", alice.headers()), "call_elsewhere", map[string]any{"text": "x"})
	text := testenv.ResultText(res)
	for _, want := range []string{`backend "elsewhere": no access token from ` + x.TokenURL + " (auth: token-exchange)", "invalid_target"} {
		if !res.IsError || !strings.Contains(text, want) {
			t.Errorf("call_elsewhere = %v %s; want an error saying %s", res.IsError, text, want)
		}
	}
	if strings.Contains(text, aliceToken) || strings.Contains(text, "vmcp-exchange-secret") {
		t.Error("the error holds the caller's token or the client secret")
	}

	// A static token is no OAuth token: nothing to exchange.
	ops := caller{token: "token-ops", base: base}
	res = mustCall(t, testenv.HTTPClientHeaders(t, base+"/mcp", ops.headers()), "call_api", map[string]any{"text": "x"})
	if text := testenv.ResultText(res); !res.IsError || !strings.Contains(text, `backend "api" (auth: token-exchange) is called on behalf of the run's caller, and this run has no caller's OAuth access token`) {
		t.Errorf("call_api with a static token = %v %s; want the no-token error", res.IsError, text)
	}
	if strings.Contains(stderr.String(), aliceToken) || strings.Contains(stderr.String(), "vmcp-exchange-secret") {
		t.Error("vmcp logged a caller's token or the client secret")
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
