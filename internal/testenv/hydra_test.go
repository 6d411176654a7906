package testenv

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// TestHydraIssuesTokensAndRotatesKeys starts Hydra, creates a client,
// gets a JWT access token for an audience, and rotates and imports keys
// into the published JWKS.
func TestHydraIssuesTokensAndRotatesKeys(t *testing.T) {
	h := StartHydra(t, 17200, 17299)
	h.CreateClient(t, HydraClient{ID: "c1", Secret: "c1-secret-0123456789", Scopes: []string{"vmcp:run"}, Audience: []string{"https://vmcp.test/mcp"}})
	header, claims := decodeJWT(t, h.Token(t, "c1", "c1-secret-0123456789", "vmcp:run", "https://vmcp.test/mcp"))
	if claims["iss"] != h.Issuer || claims["sub"] != "c1" || !strings.Contains(mustJSON(claims["aud"]), "https://vmcp.test/mcp") || !strings.Contains(mustJSON(claims["scp"]), "vmcp:run") {
		t.Errorf("token claims = %v; want iss %s, sub c1, aud and scp", claims, h.Issuer)
	}
	if _, err := h.TryToken("c1", "c1-secret-0123456789", "vmcp:admin"); err == nil {
		t.Error("Hydra granted a scope the client may not ask for")
	}
	h.RotateKey(t, "rotated")
	if h2, _ := decodeJWT(t, h.Token(t, "c1", "c1-secret-0123456789", "vmcp:run")); h2["kid"] != "rotated" || h2["kid"] == header["kid"] {
		t.Errorf("after RotateKey the token's kid = %v; want rotated", h2["kid"])
	}
	k, _ := rsa.GenerateKey(rand.Reader, 2048)
	priv, _ := json.Marshal(jose.JSONWebKey{Key: k, KeyID: "imported", Algorithm: "RS256", Use: "sig"})
	h.ImportKey(t, "imported", priv)
	resp, err := http.Get(h.Issuer + ".well-known/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		t.Fatal(err)
	}
	if len(set.Key("imported")) != 1 || !set.Key("imported")[0].IsPublic() {
		t.Errorf("the published JWKS has no public key imported: %v", set.Keys)
	}
	h.DeleteKey(t, "imported")
}

func TestFindHydraNamesTheBuildCommand(t *testing.T) {
	noPath := func(string) (string, error) { return "", errors.New("not found") }
	empty := t.TempDir()
	_, err := findHydra(noPath, func(k string) string { return map[string]string{"HOME": empty}[k] })
	if err == nil || !strings.Contains(err.Error(), HydraBuild) {
		t.Errorf("findHydra with no binary = %v; want an error naming %q", err, HydraBuild)
	}
	cache := filepath.Join(empty, "cache")
	os.MkdirAll(cache, 0o755)
	os.WriteFile(filepath.Join(cache, "hydra-"+HydraVersion), []byte("#!/bin/sh\n"), 0o755)
	if p, err := findHydra(noPath, func(k string) string { return map[string]string{"VMCP_BIN_CACHE": cache}[k] }); err != nil || p != filepath.Join(cache, "hydra-"+HydraVersion) {
		t.Errorf("findHydra with VMCP_BIN_CACHE = %q, %v", p, err)
	}
}

func decodeJWT(t *testing.T, tok string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	for i, into := range []*map[string]any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatal(err)
		}
	}
	return header, claims
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
