package e2e

// vmcp as an OAuth 2.1 resource server, against a real authorization
// server (Ory Hydra, testenv.StartHydra) and a real `vmcp run --transport
// http` with server.auth.oidc beside a static admin token. Hydra's clients
// get tokens with the client credentials grant; their subject is the
// client id, which becomes the owner of the runs they start. The attacks
// are tokens that must get 401 with error="invalid_token": one Hydra
// minted for another resource, an expired one, alg none, HS256 keyed with
// the issuer's public key, one signed by a key the issuer never published,
// and one that names a published key id but is signed by another key. To
// sign tokens with a key the issuer does publish, the test imports its own
// key into Hydra's access-token key set. A key Hydra rotates in after vmcp
// cached the JWKS works without a restart; a token without the scope a
// call needs gets 403 with error="insufficient_scope" and the IdP scope to
// ask for.

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// The OIDC tests' own port range: Hydra's two ports and vmcp's.
const oidcPortLo, oidcPortHi = 17200, 17249

const oidcConfig = `
backends:
  tb: {command: "${TB}", args: [-record, "${REC}"]}
state: {store: sqlite, path: "${DIR}/state.db"}
server:
  auth:
    tokens:
      - {token: token-admin, name: ops, scopes: [run, admin]}
    oidc:
      issuer: "${ISSUER}"
      audience: "${AUDIENCE}"
compositeTools:
  - name: say
    description: Echo
    parameters:
      text: {type: string, required: true}
    steps:
      - {id: say, tool: tb.echo, arguments: {text: "{{.params.text}}"}}
`

// oidcEnv is Hydra and a vmcp that trusts it.
type oidcEnv struct {
	hydra    *testenv.Hydra
	base     string // http://127.0.0.1:port
	audience string // base + /mcp
}

const (
	aliceSecret  = "alice-secret-0123456789"
	bobSecret    = "bob-secret-0123456789"
	writerSecret = "writer-secret-0123456789"
)

func startOIDC(t *testing.T) *oidcEnv {
	t.Helper()
	h := testenv.StartHydra(t, oidcPortLo, oidcPortHi)
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, oidcPortLo, oidcPortHi))
	e := &oidcEnv{hydra: h, base: "http://" + addr, audience: "http://" + addr + "/mcp"}
	h.CreateClient(t, testenv.HydraClient{ID: "alice", Secret: aliceSecret,
		Scopes: []string{"vmcp:run", "vmcp:author"}, Audience: []string{e.audience, "https://other.example/mcp"}})
	h.CreateClient(t, testenv.HydraClient{ID: "bob", Secret: bobSecret, Scopes: []string{"vmcp:run"}, Audience: []string{e.audience}})
	h.CreateClient(t, testenv.HydraClient{ID: "writer", Secret: writerSecret, Scopes: []string{"vmcp:author"}, Audience: []string{e.audience}})
	rec := filepath.Join(t.TempDir(), "record.txt")
	cfg := strings.NewReplacer("${ISSUER}", h.Issuer, "${AUDIENCE}", e.audience).Replace(oidcConfig)
	startHTTPVMCPAt(t, writeConfig(t, cfg, rec), addr)
	return e
}

// post sends a JSON-RPC initialize to /mcp with the header auth ("" for
// none) and returns the status, the WWW-Authenticate header and the body.
func (e *oidcEnv) post(t *testing.T, auth string) (int, string, string) {
	t.Helper()
	return e.request(t, http.MethodPost, "/mcp", auth, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"oidc-test","version":"1"}}}`)
}

func (e *oidcEnv) request(t *testing.T, method, path, auth, body string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, e.base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
}

func (e *oidcEnv) metadataURL() string {
	return e.base + "/.well-known/oauth-protected-resource/mcp"
}

func TestOIDCResourceServer(t *testing.T) {
	e := startOIDC(t)
	h := e.hydra

	t.Run("metadata", func(t *testing.T) {
		for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
			code, _, body := e.request(t, http.MethodGet, path, "", "")
			var md struct {
				Resource               string   `json:"resource"`
				AuthorizationServers   []string `json:"authorization_servers"`
				ScopesSupported        []string `json:"scopes_supported"`
				BearerMethodsSupported []string `json:"bearer_methods_supported"`
			}
			if err := json.Unmarshal([]byte(body), &md); code != 200 || err != nil {
				t.Fatalf("GET %s = %d %s", path, code, body)
			}
			if md.Resource != e.audience || len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != h.Issuer ||
				strings.Join(md.ScopesSupported, " ") != "vmcp:run vmcp:author vmcp:admin" || strings.Join(md.BearerMethodsSupported, " ") != "header" {
				t.Errorf("GET %s = %+v", path, md)
			}
		}
	})

	t.Run("no token", func(t *testing.T) {
		code, challenge, _ := e.post(t, "")
		if want := `Bearer resource_metadata="` + e.metadataURL() + `"`; code != 401 || challenge != want {
			t.Errorf("POST /mcp without a token = %d, WWW-Authenticate %q; want 401, %q", code, challenge, want)
		}
	})

	aliceToken := h.Token(t, "alice", aliceSecret, "vmcp:run", e.audience)
	var aliceRun string
	t.Run("a valid token; its subject owns the run", func(t *testing.T) {
		alice := caller{token: aliceToken, base: e.base}
		aliceRun = alice.call(t, "say", map[string]any{"text": "hi"})
		admin := caller{token: "token-admin", base: e.base}
		if r, ok := admin.runs(t)[aliceRun]; !ok || r.Owner != "alice" {
			t.Errorf("the admin's list has alice's run as %+v (found %v); want owner alice", r, ok)
		}
		if r, ok := alice.runs(t)[aliceRun]; !ok || r.Owner != "alice" {
			t.Errorf("alice's own list has her run as %+v (found %v); want owner alice", r, ok)
		}
		bob := caller{token: h.Token(t, "bob", bobSecret, "vmcp:run", e.audience), base: e.base}
		if _, ok := bob.runs(t)[aliceRun]; ok {
			t.Error("bob's list has alice's run")
		}
		if code, _ := bob.do(t, http.MethodGet, "/api/v1/runs/"+aliceRun); code != 404 {
			t.Errorf("bob reading alice's run = %d; want 404", code)
		}
	})

	// The test's own key, imported into Hydra's published key set, and
	// one Hydra never heard of.
	own, _ := rsa.GenerateKey(rand.Reader, 2048)
	ownJWK, _ := json.Marshal(jose.JSONWebKey{Key: own, KeyID: "test-imported", Algorithm: "RS256", Use: "sig"})
	h.ImportKey(t, "test-imported", ownJWK)
	stranger, _ := rsa.GenerateKey(rand.Reader, 2048)
	now := time.Now()
	claims := func(mod func(map[string]any)) map[string]any {
		c := map[string]any{"iss": h.Issuer, "sub": "mallory", "aud": []string{e.audience},
			"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(), "scp": []string{"vmcp:run", "vmcp:admin"}}
		if mod != nil {
			mod(c)
		}
		return c
	}
	t.Run("a token the test signs with the imported key works", func(t *testing.T) {
		tok := signJWT(t, own, "test-imported", claims(nil))
		if code, _, body := e.post(t, "Bearer "+tok); code != 200 {
			t.Fatalf("a well-formed token of the imported key = %d %s; want 200 (the attacks below rely on it)", code, body)
		}
	})

	aliceHeader := jwtPart(t, aliceToken, 0)
	pubDER, _ := x509.MarshalPKIXPublicKey(&own.PublicKey)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	good := signJWT(t, own, "test-imported", claims(nil))
	for _, tc := range []struct{ name, token, reason string }{
		{"a token for another audience", h.Token(t, "alice", aliceSecret, "vmcp:run", "https://other.example/mcp"), "audience"},
		{"expired", signJWT(t, own, "test-imported", claims(func(c map[string]any) {
			c["iat"], c["nbf"], c["exp"] = now.Add(-2*time.Hour).Unix(), now.Add(-2*time.Hour).Unix(), now.Add(-2*time.Minute).Unix()
		})), "expired"},
		{"alg none", b64url(`{"alg":"none","kid":"`+aliceHeader["kid"].(string)+`"}`) + "." + strings.Split(good, ".")[1] + ".", "malformed"},
		{"HS256 keyed with the issuer's public key", hmacJWT(pubPEM, "test-imported", strings.Split(good, ".")[1]), "malformed"},
		{"signed by an unknown key", signJWT(t, stranger, "never-published", claims(nil)), `key id 'never-published'`},
		{"a published key id, signed by another key", signJWT(t, stranger, "test-imported", claims(nil)), `key id 'test-imported'`},
		{"another issuer", signJWT(t, own, "test-imported", claims(func(c map[string]any) { c["iss"] = "https://evil.example/" })), "different provider"},
	} {
		t.Run("attack: "+tc.name, func(t *testing.T) {
			code, challenge, _ := e.post(t, "Bearer "+tc.token)
			prefix := `Bearer resource_metadata="` + e.metadataURL() + `", error="invalid_token"`
			if code != 401 || !strings.HasPrefix(challenge, prefix) || !strings.Contains(challenge, tc.reason) {
				t.Errorf("POST /mcp = %d, WWW-Authenticate %q; want 401, %s... saying %q", code, challenge, prefix, tc.reason)
			}
		})
	}

	t.Run("a key rotated in after the JWKS was cached works without a restart", func(t *testing.T) {
		h.RotateKey(t, "rotated-in")
		tok := h.Token(t, "alice", aliceSecret, "vmcp:run", e.audience)
		if kid := jwtPart(t, tok, 0)["kid"]; kid != "rotated-in" {
			t.Fatalf("Hydra signed with %v after the rotation; want rotated-in", kid)
		}
		if code, _, body := e.post(t, "Bearer "+tok); code != 200 {
			t.Errorf("a token of the rotated-in key = %d %s; want 200", code, body)
		}
	})

	t.Run("a missing scope is 403 insufficient_scope with the scope to ask for", func(t *testing.T) {
		writer := h.Token(t, "writer", writerSecret, "vmcp:author", e.audience)
		code, challenge, body := e.request(t, http.MethodPost, "/mcp", "Bearer "+writer,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"say","arguments":{"text":"x"}}}`)
		want := `Bearer resource_metadata="` + e.metadataURL() + `", error="insufficient_scope", scope="vmcp:run"`
		if code != 403 || challenge != want || !strings.Contains(body, `"missingScope":"run"`) {
			t.Errorf("tools/call without vmcp:run = %d, %q, %s; want 403, %q", code, challenge, body, want)
		}
		code, challenge, _ = e.request(t, http.MethodPost, "/api/v1/runs/"+aliceRun+"/rerun", "Bearer "+aliceToken, "")
		want = `Bearer resource_metadata="` + e.metadataURL() + `", error="insufficient_scope", scope="vmcp:admin"`
		if code != 403 || challenge != want {
			t.Errorf("a re-run without vmcp:admin = %d, %q; want 403, %q", code, challenge, want)
		}
	})

	t.Run("the console signs in with the same tokens", func(t *testing.T) {
		c := signInConsole(t, e.base, aliceToken)
		code, page := c.get(t, "/ui/runs")
		if code != 200 || !strings.Contains(page, aliceRun) {
			t.Errorf("alice's console runs page = %d, without her run %s", code, aliceRun)
		}
		bobConsole := signInConsole(t, e.base, h.Token(t, "bob", bobSecret, "vmcp:run", e.audience))
		if code, _ := bobConsole.get(t, "/ui/runs/"+aliceRun); code != 404 {
			t.Errorf("bob's console page of alice's run = %d; want 404", code)
		}
	})
}

func signJWT(t *testing.T, key *rsa.PrivateKey, kid string, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: kid}}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := jws.CompactSerialize()
	return out
}

func hmacJWT(key []byte, kid, payload string) string {
	h := b64url(`{"alg":"HS256","kid":"` + kid + `","typ":"JWT"}`)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(h + "." + payload))
	return h + "." + payload + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func b64url(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// jwtPart decodes part i (0 the header, 1 the claims) of a JWT.
func jwtPart(t *testing.T, tok string, i int) map[string]any {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[i])
	var m map[string]any
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("not a JWT: %.40q", tok)
	}
	return m
}

const credentialsConfig = `
backends:
  api:
    url: "${API}"
    auth:
      kind: client-credentials
      tokenURL: "${TOKEN_URL}"
      clientID: vmcp-backend
      clientSecret: vmcp-backend-secret-0123456789
      scopes: [api:call]
      audience: http://api.test/mcp
  locked:
    url: "${LOCKED}"
    auth: {kind: client-credentials, tokenURL: "${TOKEN_URL}", clientID: vmcp-backend, clientSecret: not-the-secret}
server:
  auth:
    oidc: {issuer: "${ISSUER}", audience: "${AUDIENCE}"}
compositeTools:
  - name: call_api
    description: Echo through the api backend
    parameters:
      text: {type: string, required: true}
    steps:
      - {id: say, tool: api.echo, arguments: {text: "{{.params.text}}"}}
`

// startHTTPBackend starts the test backend over streamable HTTP, recording
// the Authorization header of every request it gets into the returned
// file.
func startHTTPBackend(t *testing.T) (url, record string) {
	t.Helper()
	return startHTTPBackendIn(t, oidcPortLo, oidcPortHi)
}

// startHTTPBackendIn is startHTTPBackend on a port in [lo, hi].
func startHTTPBackendIn(t *testing.T, lo, hi int) (url, record string) {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, lo, hi))
	record = filepath.Join(t.TempDir(), "auth.txt")
	cmd := exec.Command(bins.testbackend, "-http", addr, "-record-auth", record)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(t, "the HTTP test backend to listen", func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return "http://" + addr + "/mcp", record
}

// TestBackendCredentials: vmcp calls an HTTP backend with a token of its
// own from the client credentials grant (Hydra's, for the backend's
// audience), fetched once and reused; the caller's token never reaches
// the backend. A backend whose credential Hydra refuses fails with the
// token endpoint's answer, naming the backend.
func TestBackendCredentials(t *testing.T) {
	h := testenv.StartHydra(t, oidcPortLo, oidcPortHi)
	api, record := startHTTPBackend(t)
	locked, lockedRecord := startHTTPBackend(t)
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, oidcPortLo, oidcPortHi))
	audience := "http://" + addr + "/mcp"
	h.CreateClient(t, testenv.HydraClient{ID: "alice", Secret: aliceSecret, Scopes: []string{"vmcp:run"}, Audience: []string{audience}})
	h.CreateClient(t, testenv.HydraClient{ID: "vmcp-backend", Secret: "vmcp-backend-secret-0123456789", Scopes: []string{"api:call"}, Audience: []string{"http://api.test/mcp"}})
	cfg := strings.NewReplacer("${API}", api, "${LOCKED}", locked, "${TOKEN_URL}", h.TokenURL, "${ISSUER}", h.Issuer, "${AUDIENCE}", audience).Replace(credentialsConfig)
	_, stderr, _ := startHTTPVMCPAt(t, writeConfig(t, cfg, ""), addr)

	aliceToken := h.Token(t, "alice", aliceSecret, "vmcp:run", audience)
	alice := caller{token: aliceToken, base: "http://" + addr}
	for i := range 3 {
		alice.call(t, "call_api", map[string]any{"text": fmt.Sprint("hello ", i)})
	}
	raw, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		_, auth, _ := strings.Cut(l, " ")
		if strings.Contains(auth, aliceToken) {
			t.Fatalf("the backend got the caller's token: %q", l)
		}
		seen[auth] = true
	}
	if len(seen) != 1 || len(lines) < 4 {
		t.Fatalf("the backend saw %d requests with %d credentials %v; want at least initialize, tools/list and 3 calls with one", len(lines), len(seen), seen)
	}
	for auth := range seen {
		tok, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok {
			t.Fatalf("the backend's Authorization = %q; want a bearer token", auth)
		}
		c := jwtPart(t, tok, 1)
		if c["sub"] != "vmcp-backend" || fmt.Sprint(c["aud"]) != "[http://api.test/mcp]" || fmt.Sprint(c["scp"]) != "[api:call]" {
			t.Errorf("the backend's token has claims %v; want sub vmcp-backend, aud http://api.test/mcp, scp api:call", c)
		}
	}

	// The locked backend never connected: Hydra refused vmcp's client.
	// /readyz says why, and so does the step that calls it.
	code, body := alice.do(t, http.MethodGet, "/readyz")
	for _, want := range []string{`backend \"locked\": no access token from ` + h.TokenURL, "invalid_client: Client authentication failed"} {
		if code != 503 || !strings.Contains(body, want) {
			t.Errorf("/readyz = %d %s; want 503 saying %s", code, body, want)
		}
	}

	if raw, _ := os.ReadFile(lockedRecord); len(raw) != 0 {
		t.Errorf("the locked backend got requests without a credential: %s", raw)
	}
	if strings.Contains(stderr.String(), "not-the-secret") || strings.Contains(stderr.String(), "vmcp-backend-secret") {
		t.Error("vmcp logged a client secret")
	}
}

// TestBackendCredentialRefused: Hydra's tokens live 5 s, within the
// cache's 10 s margin, so vmcp asks for a new one on every request; once
// Hydra no longer knows vmcp's client, the step fails with an error that
// names the backend and the token endpoint's answer.
func TestBackendCredentialRefused(t *testing.T) {
	h := testenv.StartHydra(t, oidcPortLo, oidcPortHi, "TTL_ACCESS_TOKEN=5s")
	api, _ := startHTTPBackend(t)
	h.CreateClient(t, testenv.HydraClient{ID: "vmcp-backend", Secret: "vmcp-backend-secret-0123456789", Scopes: []string{"api:call"}, Audience: []string{"http://api.test/mcp"}})
	cfg := strings.NewReplacer("${API}", api, "${TOKEN_URL}", h.TokenURL).Replace(`
backends:
  api:
    url: "${API}"
    auth: {kind: client-credentials, tokenURL: "${TOKEN_URL}", clientID: vmcp-backend, clientSecret: vmcp-backend-secret-0123456789, scopes: ["api:call"], audience: http://api.test/mcp}
compositeTools:
  - name: call_api
    description: Echo through the api backend
    parameters:
      text: {type: string, required: true}
    steps:
      - {id: say, tool: api.echo, arguments: {text: "{{.params.text}}"}}
`)
	mcpURL, stderr := httpVMCPOn(t, writeConfig(t, cfg, ""), oidcPortLo, oidcPortHi)
	c := testenv.HTTPClient(t, mcpURL)
	if res := mustCall(t, c, "call_api", map[string]any{"text": "x"}); res.IsError {
		t.Fatalf("call_api = %s", testenv.ResultText(res))
	}
	h.DeleteClient(t, "vmcp-backend")
	res := mustCall(t, c, "call_api", map[string]any{"text": "x"})
	text := testenv.ResultText(res)
	for _, want := range []string{`backend "api": no access token from ` + h.TokenURL, "invalid_client"} {
		if !res.IsError || !strings.Contains(text, want) {
			t.Errorf("call_api after Hydra dropped the client = %v %s; want an error saying %s", res.IsError, text, want)
		}
	}
	if strings.Contains(text, "vmcp-backend-secret") || strings.Contains(stderr.String(), "vmcp-backend-secret") {
		t.Error("the error or the log holds the client secret")
	}
}
