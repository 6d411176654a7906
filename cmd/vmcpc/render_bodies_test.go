package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const finallyBodySrc = `
compositeTools:
  - name: fin
    description: a finally loop with a body
    steps:
      - {id: a, tool: b.c}
    finally:
      - id: cleanup
        type: forEach
        collection: [1, 2]
        steps:
          - {id: undo, tool: b.undo}
          - {id: note, tool: b.note, dependsOn: [undo]}
`

// TestPlanFinallyBodies: a finally loop's body is drawn inside the
// finally section in every format, as a top-level loop's is.
func TestPlanFinallyBodies(t *testing.T) {
	file := filepath.Join(t.TempDir(), "fin.yaml")
	if err := os.WriteFile(file, []byte(finallyBodySrc), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"text":    {"  body of cleanup (for each item; 2 steps, 2 levels)\n", "    note  b.note  after undo\n"},
		"dot":     {"    subgraph \"cluster_body_cleanup\" {\n", "    \"undo\" -> \"note\";\n"},
		"mermaid": {"    subgraph bf0 [\"body of cleanup: for each item\"]\n", "      f0_0 --> f0_1\n", "    f0 -.-> bf0\n"},
	}
	for format, parts := range want {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"plan", "--format", format, file}, &stdout, &stderr); code != exitOK {
			t.Fatalf("vmcpc plan --format %s = exit %d: %s", format, code, stderr.String())
		}
		for _, p := range parts {
			if !strings.Contains(stdout.String(), p) {
				t.Errorf("vmcpc plan --format %s lacks %q:\n%s", format, p, stdout.String())
			}
		}
	}
}
