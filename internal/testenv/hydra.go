package testenv

// A real OAuth 2.1 authorization server for tests: Ory Hydra v2.3.0,
// `hydra serve all --dev` with an in-memory database (DSN=memory), JWT
// access tokens, and its public and admin APIs on loopback ports of the
// test's range. The binary is built once by scripts/hydra.sh (make hydra)
// into $HOME/.cache/vmcp/bin/hydra-v2.3.0; it is looked up on PATH, then
// in $VMCP_BIN_CACHE and that cache directory. A missing binary fails the
// test with the build command; it never skips it.
//
// Readiness is asked of Hydra itself (GET /health/ready on the admin
// port). Clients are created through the admin API (CreateClient); tokens
// come from the public token endpoint with the client credentials grant
// (Token), and keys are rotated or imported through the admin API's JSON
// Web Key endpoints (RotateKey, ImportKey), which is how the tests make a
// key the issuer publishes but the test holds.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// HydraVersion is the Hydra the tests run; HydraBuild builds it.
const (
	HydraVersion = "v2.3.0"
	HydraBuild   = "make hydra"
)

// Hydra is a running authorization server.
type Hydra struct {
	// Issuer is its issuer URL (with the trailing slash Hydra adds);
	// TokenURL its token endpoint; Admin its admin API's base URL.
	Issuer, TokenURL, Admin string
	// JWKSSet is the key set that signs access tokens.
	JWKSSet string
	cmd     *exec.Cmd
	log     *Buffer
	done    chan struct{}
	client  *http.Client
}

// HydraBin returns the Hydra binary's path, or fails the test naming the
// build command.
func HydraBin(t testing.TB) string {
	t.Helper()
	p, err := findHydra(exec.LookPath, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func findHydra(lookPath func(string) (string, error), getenv func(string) string) (string, error) {
	return findCached("hydra-"+HydraVersion, "Ory Hydra "+HydraVersion, HydraBuild+" in the repository (scripts/hydra.sh: about 10 minutes, once)", lookPath, getenv)
}

// findCached looks a binary the tests build once up on PATH, then in
// $VMCP_BIN_CACHE and $HOME/.cache/vmcp/bin; what names it and build says
// how to build it in the error.
func findCached(name, what, build string, lookPath func(string) (string, error), getenv func(string) string) (string, error) {
	if p, err := lookPath(name); err == nil {
		return p, nil
	}
	var dirs []string
	if d := getenv("VMCP_BIN_CACHE"); d != "" {
		dirs = append(dirs, d)
	}
	if home := getenv("HOME"); home != "" {
		dirs = append(dirs, filepath.Join(home, ".cache", "vmcp", "bin"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s is not built (%s not on PATH, nor in %v); build it with `%s`, or run .ci/run", what, name, dirs, build)
}

// StartHydra starts Hydra on two free ports in [lo, hi] (public and
// admin), waits until it is ready (at most 60 s), and stops it when the
// test ends. Access tokens are JWTs that live an hour. env adds Hydra
// settings as environment variables ("TTL_ACCESS_TOKEN=5s").
func StartHydra(t testing.TB, lo, hi int, env ...string) *Hydra {
	t.Helper()
	bin := HydraBin(t)
	pub, adm := FreePort(t, lo, hi), FreePort(t, lo, hi)
	h := &Hydra{
		Issuer:   fmt.Sprintf("http://127.0.0.1:%d/", pub),
		TokenURL: fmt.Sprintf("http://127.0.0.1:%d/oauth2/token", pub),
		Admin:    fmt.Sprintf("http://127.0.0.1:%d", adm),
		JWKSSet:  "hydra.jwt.access-token",
		log:      &Buffer{},
		done:     make(chan struct{}),
		client:   &http.Client{Timeout: 10 * time.Second},
	}
	h.cmd = exec.Command(bin, "serve", "all", "--dev")
	h.cmd.Env = append(os.Environ(),
		"DSN=memory",
		"SECRETS_SYSTEM=vmcp-tests-system-secret-0123456789",
		"STRATEGIES_ACCESS_TOKEN=jwt",
		"URLS_SELF_ISSUER="+h.Issuer,
		"SERVE_PUBLIC_HOST=127.0.0.1", "SERVE_PUBLIC_PORT="+strconv.Itoa(pub),
		"SERVE_ADMIN_HOST=127.0.0.1", "SERVE_ADMIN_PORT="+strconv.Itoa(adm),
		"LOG_LEVEL=warn",
		"SQA_OPT_OUT=true", // no telemetry
	)
	h.cmd.Env = append(h.cmd.Env, env...)
	h.cmd.Stdout, h.cmd.Stderr = h.log, h.log
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := h.cmd.Start(); err != nil {
		t.Fatalf("starting %s serve all: %v", bin, err)
	}
	go func() { h.cmd.Wait(); close(h.done) }()
	t.Cleanup(h.Stop)
	if err := h.waitReady(60 * time.Second); err != nil {
		t.Fatalf("Hydra on %s: %v\nlog:\n%s", h.Issuer, err, h.log.String())
	}
	// Hydra makes its signing keys (RSA 4096) when they are first asked
	// for, which takes seconds on a loaded machine: ask now, so that the
	// code under test does not wait for it.
	// Hydra may cut the first request off while it generates (its write
	// timeout), so ask until it answers.
	warm := &http.Client{Timeout: 2 * time.Minute}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := warm.Get(h.Issuer + ".well-known/jwks.json")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			err = errors.New(resp.Status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("Hydra's JWKS: %v\nlog:\n%s", err, h.log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	return h
}

func (h *Hydra) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	var last string
	for time.Now().Before(deadline) {
		select {
		case <-h.done:
			return errors.New("hydra exited before it was ready")
		default:
		}
		resp, err := h.client.Get(h.Admin + "/health/ready")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status + " " + string(body)
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("not ready after %v; last answer: %s", limit, last)
}

// Stop ends Hydra (SIGTERM to its process group, SIGKILL after 10 s) and
// waits for it. It is safe to call twice.
func (h *Hydra) Stop() {
	select {
	case <-h.done:
		return
	default:
	}
	syscall.Kill(-h.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-h.cmd.Process.Pid, syscall.SIGKILL)
		<-h.done
	}
}

// Log is what Hydra printed so far.
func (h *Hydra) Log() string { return h.log.String() }

// HydraClient is an OAuth client to create.
type HydraClient struct {
	ID, Secret string
	// Scopes it may ask for; Audience the resources (RFC 8707) it may ask
	// tokens for.
	Scopes, Audience []string
	// GrantTypes: client_credentials when empty.
	GrantTypes []string
	// Extra fields of the admin API's client document (such as
	// redirect_uris).
	Extra map[string]any
}

// CreateClient creates the client through the admin API.
func (h *Hydra) CreateClient(t testing.TB, c HydraClient) {
	t.Helper()
	if len(c.GrantTypes) == 0 {
		c.GrantTypes = []string{"client_credentials"}
	}
	doc := map[string]any{
		"client_id": c.ID, "client_secret": c.Secret,
		"grant_types": c.GrantTypes, "scope": strings.Join(c.Scopes, " "),
		"audience": c.Audience, "token_endpoint_auth_method": "client_secret_basic",
	}
	for k, v := range c.Extra {
		doc[k] = v
	}
	h.admin(t, http.MethodPost, "/admin/clients", doc, http.StatusCreated, nil)
}

// DeleteClient deletes the client: its credentials stop working.
func (h *Hydra) DeleteClient(t testing.TB, id string) {
	t.Helper()
	h.admin(t, http.MethodDelete, "/admin/clients/"+url.PathEscape(id), nil, http.StatusNoContent, nil)
}

// Token gets an access token with the client credentials grant: scope is
// space-separated, audience the resources it is for.
func (h *Hydra) Token(t testing.TB, id, secret, scope string, audience ...string) string {
	t.Helper()
	tok, err := h.TryToken(id, secret, scope, audience...)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TryToken is Token that returns the token endpoint's refusal as an
// error.
func (h *Hydra) TryToken(id, secret, scope string, audience ...string) (string, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if scope != "" {
		form.Set("scope", scope)
	}
	if len(audience) > 0 {
		form.Set("audience", strings.Join(audience, " "))
	}
	req, _ := http.NewRequest(http.MethodPost, h.TokenURL, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	resp, err := h.client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var out struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil || out.AccessToken == "" {
		return "", fmt.Errorf("hydra token endpoint: %s %s", resp.Status, body)
	}
	return out.AccessToken, nil
}

// RotateKey makes Hydra generate a new RS256 key with the key id kid in
// the access-token key set; Hydra signs new tokens with the newest key.
func (h *Hydra) RotateKey(t testing.TB, kid string) {
	t.Helper()
	h.admin(t, http.MethodPost, "/admin/keys/"+h.JWKSSet, map[string]string{"alg": "RS256", "use": "sig", "kid": kid}, http.StatusCreated, nil)
}

// ImportKey puts jwk (a private JSON Web Key, as JSON) into the
// access-token key set: Hydra publishes its public half in its JWKS, and
// the test, which holds the private half, can sign tokens the issuer's
// keys verify.
func (h *Hydra) ImportKey(t testing.TB, kid string, jwk json.RawMessage) {
	t.Helper()
	h.admin(t, http.MethodPut, "/admin/keys/"+h.JWKSSet+"/"+url.PathEscape(kid), jwk, http.StatusOK, nil)
}

// DeleteKey removes a key from the access-token key set.
func (h *Hydra) DeleteKey(t testing.TB, kid string) {
	t.Helper()
	h.admin(t, http.MethodDelete, "/admin/keys/"+h.JWKSSet+"/"+url.PathEscape(kid), nil, http.StatusNoContent, nil)
}

// admin calls the admin API and fails the test unless it answers want.
func (h *Hydra) admin(t testing.TB, method, path string, body any, want int, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, h.Admin+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatalf("hydra admin %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("hydra admin %s %s: %s %s (want %d)", method, path, resp.Status, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("hydra admin %s %s: %v", method, path, err)
		}
	}
}

// IntrospectURL is the admin API's RFC 7662 introspection endpoint.
func (h *Hydra) IntrospectURL() string { return h.Admin + "/admin/oauth2/introspect" }

// Revoke revokes token (RFC 7009) at the public API, as its client.
func (h *Hydra) Revoke(t testing.TB, id, secret, token string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(h.Issuer, "/")+"/oauth2/revoke", strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatalf("hydra revoke: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("hydra revoke: %s %s", resp.Status, b)
	}
}
