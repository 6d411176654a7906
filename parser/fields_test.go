package parser

import "testing"

func TestFieldTables(t *testing.T) {
	tables := FieldTables()
	objects := []string{ObjWorkflow, ObjStep, ObjOnError, ObjOnDecline, ObjOnCancel, ObjOutput, ObjOutputProperty}
	if len(tables) != len(objects) {
		t.Fatalf("FieldTables() has %d tables; want %d", len(tables), len(objects))
	}
	for i, o := range objects {
		if tables[i].Object != o {
			t.Errorf("FieldTables()[%d].Object = %q; want %q", i, tables[i].Object, o)
		}
	}
	step, onError := tables[1], tables[2]
	for key, want := range map[string]string{"dependsOn": "dependsOn", "depends_on": "dependsOn", "item_var": "itemVar"} {
		if got := step.Spellings[key]; got != want {
			t.Errorf("step spelling %q -> %q; want %q", key, got, want)
		}
	}
	if onError.Synonyms["retryCount"] != "maxRetries" || onError.Spellings["retry_count"] != "maxRetries" {
		t.Errorf("onError synonyms = %v; want retryCount (and retry_count) -> maxRetries", onError.Synonyms)
	}
	// The tables are copies: changing one does not change the parser.
	step.Spellings["dependOn"] = "dependsOn"
	if _, ok := FieldTables()[1].Spellings["dependOn"]; ok {
		t.Error("FieldTables returns the parser's own maps")
	}
}
