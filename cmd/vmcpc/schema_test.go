package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/vmcp-dev/vmcp/authoring/guide"
)

// vmcpc schema prints the editors' dialect of the schema that
// authoring/guide builds and tests (against the parser's field tables, the
// examples and the corpus).
func TestSchemaCommandPrintsEditorSchema(t *testing.T) {
	var out bytes.Buffer
	if err := writeSchema(&out); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), guide.EditorSchema()) {
		t.Fatal("vmcpc schema does not print guide.EditorSchema()")
	}
	var v map[string]any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("vmcpc schema prints invalid JSON: %v", err)
	}
	if v["$schema"] != "http://json-schema.org/draft-07/schema#" {
		t.Errorf("vmcpc schema prints $schema %v; want draft-07 for yaml-language-server", v["$schema"])
	}
	if _, ok := v["definitions"]; !ok {
		t.Error("vmcpc schema has no definitions section")
	}
}
