package config

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

// TestLoadErrorCodes loads, for every diagnostic code, a config that must
// produce it, and fails when a code in codes has no such config: a code
// that nothing produces is a promise nobody checks.
func TestLoadErrorCodes(t *testing.T) {
	cases := map[string]struct {
		src string
		env map[string]string
	}{
		CodeYAMLSyntax:        {src: "backends:\n  a: {command: x\n"},
		CodeMultipleDocuments: {src: "server: {listen: \"127.0.0.1:17001\"}\n---\nserver: {}\n"},
		CodeBadType:           {src: "backends: [a]\n"},
		CodeBadKey:            {src: "backends:\n  ~: {command: x}\n"},
		CodeDuplicateKey:      {src: "server: {max_parallel: 2, maxParallel: 3}\n"},
		CodeUnknownField:      {src: "server: {lisen: \"127.0.0.1:17001\"}\n"},
		CodeMissingField:      {src: "backends:\n  a: {}\n"},
		CodeBadValue:          {src: "server: {listen: localhost}\n"},
		CodeBadName:           {src: "backends:\n  \"my.srv\": {command: x}\n"},
		CodeBadEnvRef:         {src: "backends:\n  a: {command: \"${1X}\"}\n"},
		CodeMissingEnv:        {src: "backends:\n  a: {command: \"${VMCP_TEST_UNSET}\"}\n"},
		CodeBadEnvValue:       {src: "server: {maxParallel: \"${N}\"}\n", env: map[string]string{"N": "many"}},
		CodeEmptyToken:        {src: "server:\n  auth: {tokens: [\"${VMCP_TOKEN}\"]}\n", env: map[string]string{"VMCP_TOKEN": ""}},
		CodeUnknownScope:      {src: "server:\n  auth: {tokens: [{token: abc, scopes: [runn]}]}\n"},
		CodeUnknownBackend:    {src: "authoring: {enabled: true, backends: [nope]}\n"},
		CodeWorkflowNotFound:  {src: "workflows: [missing.yaml]\n"},
		CodeDuplicateOwner:    {src: "server:\n  auth: {tokens: [{token: a, name: ci, scopes: [run]}, {token: b, name: ci, scopes: [run]}]}\n"},
	}
	for _, code := range codes {
		c, ok := cases[code]
		if !ok {
			t.Errorf("no config in TestLoadErrorCodes produces %s", code)
			continue
		}
		dir := writeTree(t, map[string]string{"vmcp.yaml": c.src})
		_, err := Load(filepath.Join(dir, "vmcp.yaml"), envOf(c.env))
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: Load(%q) = %v; want a *config.Error", code, c.src, err)
			continue
		}
		var got []string
		for _, d := range ce.Diags {
			got = append(got, d.Code)
		}
		if !slices.Contains(got, code) {
			t.Errorf("%s: Load(%q) gave codes %v:\n%v", code, c.src, got, err)
		}
	}
	for code := range cases {
		if !slices.Contains(codes, code) {
			t.Errorf("TestLoadErrorCodes has a config for %s, which codes does not list", code)
		}
	}
}

// TestLoadAnchoredKey: a key with an anchor or a tag is still a string
// key, not a bad one.
func TestLoadAnchoredKey(t *testing.T) {
	dir := writeTree(t, map[string]string{"vmcp.yaml": "backends:\n  &gh github: {command: gh}\n  !!str jira: {command: jira}\n"})
	c, err := Load(filepath.Join(dir, "vmcp.yaml"), envOf(nil))
	if err != nil {
		t.Fatalf("Load = %v", err)
	}
	if c.Backends["github"] == nil || c.Backends["jira"] == nil {
		t.Fatalf("backends = %v; want github and jira", c.Backends)
	}
}
