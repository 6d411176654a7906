package guide

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/vmcp-dev/vmcp/compiler"
	"github.com/vmcp-dev/vmcp/parser"
)

// compileSchema compiles a schema's bytes, so the tests check what agents
// and editors get, not the Go value.
func compileSchema(t *testing.T, data []byte) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("vmcp.schema.json", doc); err != nil {
		t.Fatalf("AddResource: %v", err)
	}
	sch, err := c.Compile("vmcp.schema.json")
	if err != nil {
		t.Fatalf("schema does not compile: %v", err)
	}
	return sch
}

// dialects are the two schemas, each tested the same way.
var dialects = []struct {
	name string
	data func() []byte
}{{"2020-12", Schema}, {"draft-07", EditorSchema}}

// documents decodes every YAML (or JSON) document in src into JSON values.
func documents(t *testing.T, name string, src []byte) []any {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var docs []any
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: not YAML: %v", name, err)
		}
		if v == nil {
			continue
		}
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		jv, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		docs = append(docs, jv)
	}
	return docs
}

func TestSchemaAcceptsExamples(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) { acceptsExamples(t, compileSchema(t, d.data())) })
	}
}

// acceptsExamples validates every workflow file under examples/, in every
// directory (vmcp.yaml and vmcp-*.yaml files there are server configs, not
// workflows).
func acceptsExamples(t *testing.T, sch *jsonschema.Schema) {
	var files []string
	err := filepath.WalkDir(filepath.Join("..", "..", "examples"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch filepath.Ext(p) {
		case ".yaml", ".yml", ".json":
			if d.Name() != "vmcp.yaml" && !strings.HasPrefix(d.Name(), "vmcp-") {
				files = append(files, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 15 {
		t.Fatalf("found %d example files; want the full set of at least 15", len(files))
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range documents(t, f, src) {
			if err := sch.Validate(doc); err != nil {
				t.Errorf("schema rejects %s document %d:\n%v", f, i, err)
			}
		}
	}
}

func TestSchemaRejectsBadFiles(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) { rejectsBadFiles(t, compileSchema(t, d.data())) })
	}
}

func rejectsBadFiles(t *testing.T, sch *jsonschema.Schema) {
	const header = "apiVersion: toolhive.stacklok.dev/v1beta1\nkind: VirtualMCPCompositeToolDefinition\nmetadata: {name: x}\nspec:\n"
	valid := header + `  name: ok
  description: fine
  steps:
    - id: a
      tool: b.c
`
	tests := []struct {
		name string
		src  string
		// want is a fragment of the validation error, naming the rule.
		want string
	}{
		{"unknown step field", strings.Replace(valid, "tool: b.c", "tool: b.c\n      dependOn: [x]", 1), "dependOn"},
		{"unknown workflow field", strings.Replace(valid, "description: fine", "description: fine\n  timout: 5m", 1), "timout"},
		{"missing description", strings.Replace(valid, "  description: fine\n", "", 1), "description"},
		{"bad name", strings.Replace(valid, "name: ok", "name: Not_OK", 1), "pattern"},
		{"bad failureMode", strings.Replace(valid, "description: fine", "description: fine\n  failureMode: explode", 1), "/spec/failureMode"},
		{"bad duration", strings.Replace(valid, "tool: b.c", "tool: b.c\n      timeout: 5 minutes", 1), "pattern"},
		{"tool with an empty backend", strings.Replace(valid, "tool: b.c", "tool: .fetch", 1), "pattern"},
		{"tool with an empty name", strings.Replace(valid, "tool: b.c", "tool: fetch.", 1), "pattern"},
		{"tool step without tool", strings.Replace(valid, "      tool: b.c\n", "", 1), "tool"},
		{"forEach without collection", strings.Replace(valid, "tool: b.c", "type: forEach\n      step: {tool: b.c}", 1), "collection"},
		{"forEach maxParallel over 50", strings.Replace(valid, "tool: b.c", "type: forEach\n      collection: \"{{.params.x}}\"\n      maxParallel: 60\n      step: {tool: b.c}", 1), "maximum"},
		{"itemVar index", strings.Replace(valid, "tool: b.c", "type: forEach\n      collection: \"{{.params.x}}\"\n      itemVar: index\n      step: {tool: b.c}", 1), "itemVar"},
		{"elicitation without message", strings.Replace(valid, "tool: b.c", "type: elicitation", 1), "message"},
		{"workflow step without workflow", strings.Replace(valid, "tool: b.c", "type: workflow", 1), "workflow"},
		{"workflow step with a bad name", strings.Replace(valid, "tool: b.c", "type: workflow\n      workflow: Not_OK", 1), "pattern"},
		{"inner workflow step without workflow", strings.Replace(valid, "tool: b.c", "type: forEach\n      collection: \"{{.params.x}}\"\n      step: {type: workflow}", 1), "workflow"},
		{"bad onError action", strings.Replace(valid, "tool: b.c", "tool: b.c\n      on_error: {action: explode}", 1), "/spec/steps/0/on_error/action"},
		{"bad retryOn kind", strings.Replace(valid, "tool: b.c", "tool: b.c\n      onError: {action: retry, retryOn: [errors]}", 1), "/spec/steps/0/onError/retryOn/0"},
		{"multiplier under 1", strings.Replace(valid, "tool: b.c", "tool: b.c\n      onError: {action: retry, multiplier: 0.5}", 1), "minimum"},
		{"bad attemptTimeout", strings.Replace(valid, "tool: b.c", "tool: b.c\n      onError: {action: retry, attempt_timeout: soon}", 1), "pattern"},
		{"collection neither template nor list", strings.Replace(valid, "tool: b.c", "type: forEach\n      collection: {a: 1}\n      step: {tool: b.c}", 1), "collection"},
		{"too many steps", header + "  name: big\n  description: d\n  steps:\n" + strings.Repeat("    - {id: s, tool: b.c}\n", 101), "maxItems"},
		{"empty steps", header + "  name: e\n  description: d\n  steps: []\n", "minItems"},
		{"finally elicitation", valid + "  finally:\n    - {id: ask, type: elicitation, message: m}\n", "/spec/finally/0/type"},
		{"finally abort", valid + "  finally:\n    - {id: f, tool: b.c, onError: {action: abort}}\n", "/spec/finally/0/onError/action"},
		{"finally unknown field", valid + "  finally:\n    - {id: f, tool: b.c, dependOn: [a]}\n", "dependOn"},
		{"forEach with step and steps", strings.Replace(valid, "tool: b.c", "type: forEach\n      collection: [1]\n      step: {tool: b.c}\n      steps: [{id: x, tool: b.c}]", 1), "oneOf"},
		{"body step unknown field", strings.Replace(valid, "tool: b.c", "type: forEach\n      collection: [1]\n      steps: [{id: x, tool: b.c, dependOn: [y]}]", 1), "dependOn"},
		{"empty loop body", strings.Replace(valid, "tool: b.c", "type: forEach\n      collection: [1]\n      steps: []", 1), "minItems"},
		{"loop output without properties", strings.Replace(valid, "tool: b.c", "type: forEach\n      collection: [1]\n      steps: [{id: x, tool: b.c}]\n      output: {propertys: {}}", 1), "propertys"},
		{"config without composite tools", "backends: {}\n", "compositeTools"},
		{"composite definition without spec", "apiVersion: toolhive.stacklok.dev/v1beta1\nkind: VirtualMCPCompositeToolDefinition\nmetadata: {name: x}\n", "spec"},
	}
	// The valid base must pass, or every rejection below proves nothing;
	// so must bare and aggregated tool names, which vmcp resolves.
	workflowSteps := strings.Replace(valid, "tool: b.c", "type: workflow\n      workflow: child\n      arguments: {x: 1}\n    - id: each\n      type: forEach\n      collection: \"{{.params.x}}\"\n      step: {type: workflow, workflow: child}", 1)
	for _, src := range []string{valid, strings.Replace(valid, "tool: b.c", "tool: fetch", 1), strings.Replace(valid, "tool: b.c", "tool: b_c", 1), workflowSteps} {
		for _, doc := range documents(t, "valid", []byte(src)) {
			if err := sch.Validate(doc); err != nil {
				t.Fatalf("schema rejects a valid document: %v\n%s", err, src)
			}
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			docs := documents(t, tc.name, []byte(tc.src))
			if len(docs) != 1 {
				t.Fatalf("test input has %d documents; want 1", len(docs))
			}
			err := sch.Validate(docs[0])
			if err == nil {
				t.Fatalf("schema accepts %s:\n%s", tc.name, tc.src)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) {
				t.Errorf("schema error for %s = %q; want it to mention %q", tc.name, msg, tc.want)
			}
		})
	}
}

func TestSchemaBothSpellings(t *testing.T) {
	s := build(draft2020)
	defs := s["$defs"].(obj)
	step := defs["step"].(obj)["properties"].(obj)
	for _, name := range []string{"dependsOn", "depends_on", "onError", "on_error", "defaultResults", "default_results", "itemVar", "item_var", "maxIterations", "max_iterations"} {
		if _, ok := step[name]; !ok {
			t.Errorf("step schema lacks %q", name)
		}
	}
	onError := defs["onError"].(obj)["properties"].(obj)
	for _, name := range []string{"maxRetries", "max_retries", "retryCount", "retry_count", "retryDelay", "retry_delay",
		"maxDelay", "max_delay", "multiplier", "attemptTimeout", "attempt_timeout", "retryOn", "retry_on"} {
		if _, ok := onError[name]; !ok {
			t.Errorf("onError schema lacks %q", name)
		}
	}
	config := defs["config"].(obj)["properties"].(obj)
	for _, name := range []string{"compositeTools", "composite_tools"} {
		if _, ok := config[name]; !ok {
			t.Errorf("config schema lacks %q", name)
		}
	}
}

// The new step and onError fields validate when they are right.
func TestSchemaAcceptsRetryTuningAndLiteralCollections(t *testing.T) {
	sch := compileSchema(t, Schema())
	src := `compositeTools:
  - name: ok
    description: fine
    steps:
      - id: a
        tool: b.c
        onError: {action: retry, maxRetries: 3, maxDelay: 10s, multiplier: 2, attemptTimeout: 5s, retryOn: [error, toolError]}
      - id: each
        type: forEach
        collection: [ConfigMap, "{{.steps.a.output.kind}}", {kind: Service}]
        maxIterations: 1500
        step: {tool: b.c, arguments: {q: "{{query \"items[].name\" .forEach.item}}"}}
`
	for _, doc := range documents(t, "tuned", []byte(src)) {
		if err := sch.Validate(doc); err != nil {
			t.Errorf("schema rejects retry tuning or a literal collection:\n%v", err)
		}
	}
}

// Each object's properties in the schema are exactly the spellings the
// parser accepts for it (parser.FieldTables), so a field added to the
// language cannot be missing from the schema.
func TestSchemaMatchesParserFields(t *testing.T) {
	defs := build(draft2020)["$defs"].(obj)
	defOf := map[string]string{
		parser.ObjWorkflow: "workflow", parser.ObjStep: "step", parser.ObjOnError: "onError",
		parser.ObjOnDecline: "response", parser.ObjOnCancel: "response",
		parser.ObjOutput: "output", parser.ObjOutputProperty: "outputProperty",
	}
	for _, ft := range parser.FieldTables() {
		name, ok := defOf[ft.Object]
		if !ok {
			t.Errorf("parser object %q has no schema definition; add one to build and to defOf", ft.Object)
			continue
		}
		props := defs[name].(obj)["properties"].(obj)
		var want, got []string
		for k := range ft.Spellings {
			want = append(want, k)
		}
		for k := range props {
			got = append(got, k)
		}
		sort.Strings(want)
		sort.Strings(got)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("schema $defs/%s properties differ from the parser's %s fields (-parser +schema):\n%s", name, ft.Object, diff)
		}
		if ft.Object == parser.ObjStep {
			for k := range defs["innerStep"].(obj)["properties"].(obj) {
				if _, ok := ft.Spellings[k]; !ok {
					t.Errorf("schema $defs/innerStep has %q, which is not a step field", k)
				}
			}
		}
	}
}

// Every file of the published corpus that the compiler accepts validates
// against both schemas: the schema is never stricter than the compiler.
func TestSchemaAcceptsCorpus(t *testing.T) {
	root := filepath.Join("..", "..", "testdata", "corpus", "toolhive")
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch filepath.Ext(p) {
		case ".yaml", ".yml", ".json":
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	schemas := []*jsonschema.Schema{compileSchema(t, Schema()), compileSchema(t, EditorSchema())}
	accepted := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		plan, _ := compiler.Compile([]compiler.Source{{Name: f, Src: src}}, compiler.Options{})
		if plan == nil || len(plan.Workflows) == 0 {
			continue
		}
		accepted++
		for i, doc := range documents(t, f, src) {
			for j, sch := range schemas {
				if err := sch.Validate(doc); err != nil {
					t.Errorf("schema %s rejects %s document %d, which compiles:\n%v", dialects[j].name, f, i, err)
				}
			}
		}
	}
	if accepted < 10 {
		t.Errorf("only %d corpus files compile; want the corpus (at least 10)", accepted)
	}
}

// The schema bytes are the same on every call (sorted keys), so the
// resource is stable for caching and diffing.
func TestSchemaDeterministic(t *testing.T) {
	a, b := Schema(), Schema()
	if !bytes.Equal(a, b) {
		t.Fatal("Schema() differs between calls")
	}
	var v map[string]any
	if err := json.Unmarshal(a, &v); err != nil {
		t.Fatal(err)
	}
	if v["$schema"] != "https://json-schema.org/draft/2020-12/schema" || v["$id"] != SchemaURI {
		t.Errorf("Schema() has $schema %v and $id %v; want 2020-12 and %s", v["$schema"], v["$id"], SchemaURI)
	}
}
