package e2e

// authoring.limits through a real `vmcp run` on stdio with authoring.dir:
// a save past the workflow count is refused with the limit's name, a name
// keeps its newest versions only (on disk too), and Windows device names
// are refused.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

func TestAuthoringLimitsOverStdio(t *testing.T) {
	cfg := writeConfig(t, `
backends:
  tb: {command: "${TB}"}
authoring:
  enabled: true
  dir: "${DIR}/authored"
  limits: {workflows: 2, versions: 2}
`, "")
	c, _ := stdioVMCP(t, cfg)
	src := func(name string) string {
		return "name: " + name + "\ndescription: say hi\nsteps:\n  - {id: say, tool: tb.echo, arguments: {text: hi}}\n"
	}
	save := func(name string, replace bool) (string, bool) {
		res, err := callTool(t, c, "vmcp_workflow_save", map[string]any{"source": src(name), "replace": replace}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return testenv.ResultText(res), res.IsError
	}
	for _, name := range []string{"one", "two"} {
		if text, isErr := save(name, false); isErr {
			t.Fatalf("save %s: %s", name, text)
		}
	}
	if text, isErr := save("three", false); !isErr || !strings.Contains(text, "authoring.limits.workflows") {
		t.Errorf("save of a third workflow with workflows: 2 = %q (isError %v); want a refusal naming authoring.limits.workflows", text, isErr)
	}
	for range 3 {
		if text, isErr := save("two", true); isErr {
			t.Fatalf("replace two: %s", text)
		}
	}
	res, err := callTool(t, c, "vmcp_workflow_get", map[string]any{"name": "two", "version": 1}, nil)
	if err != nil || !res.IsError || !strings.Contains(testenv.ResultText(res), "has no version 1 (it has 3 to 4") {
		t.Errorf("get two version 1 after 4 saves with versions: 2 = %v, %v; want not found, versions 3 to 4 kept", testenv.ResultText(res), err)
	}
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(cfg), "authored", "two.v*.yaml"))
	if len(files) != 2 {
		t.Errorf("version files of two on disk = %v; want two.v3.yaml and two.v4.yaml", files)
	}
	if text, isErr := save("con", false); !isErr || !strings.Contains(text, "device name on Windows") {
		t.Errorf("save con = %q (isError %v); want it refused as a Windows device name", text, isErr)
	}
}
