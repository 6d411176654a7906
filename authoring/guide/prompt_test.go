package guide

import (
	"strings"
	"testing"
)

func TestDesignPromptWalksTheLoop(t *testing.T) {
	p := DesignPrompt("  sync the cluster into the graph  ", "")
	if !strings.Contains(p, "\nsync the cluster into the graph\n") {
		t.Errorf("prompt does not state the goal (trimmed) on its own line:\n%s", p)
	}
	// The design loop, in order: read, list tools, check, save, call.
	order := []string{DocsURI, ToolBackendTools, ToolCheck, ToolRun, ToolSave, "Call the new tool"}
	last := -1
	for _, w := range order {
		i := strings.Index(p, w)
		if i < 0 {
			t.Errorf("prompt does not mention %q:\n%s", w, p)
			continue
		}
		if i < last {
			t.Errorf("prompt mentions %q before the step that comes first", w)
		}
		last = i
	}
	for _, w := range []string{SchemaURI, ToolList, ToolGet, ToolDelete, "dependsOn"} {
		if !strings.Contains(p, w) {
			t.Errorf("prompt does not mention %q", w)
		}
	}
}

func TestDesignPromptBackends(t *testing.T) {
	p := DesignPrompt("g", " k8s, graph ,")
	for _, w := range []string{`vmcp_backend_tools {backend: "k8s"}`, `vmcp_backend_tools {backend: "graph"}`, "Use only the backends k8s, graph."} {
		if !strings.Contains(p, w) {
			t.Errorf("prompt for backends k8s, graph lacks %q:\n%s", w, p)
		}
	}
	if strings.Contains(DesignPrompt("g", ""), "Use only the backends") {
		t.Error("prompt without backends restricts them")
	}
}

func TestPromptArguments(t *testing.T) {
	args := PromptArguments()
	if len(args) != 2 || args[0].Name != "goal" || !args[0].Required || args[1].Name != "backends" || args[1].Required {
		t.Fatalf("PromptArguments() = %+v; want goal (required) and backends (optional)", args)
	}
}
