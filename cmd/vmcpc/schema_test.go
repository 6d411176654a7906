package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema compiles the schema `vmcpc schema` prints, so the test
// checks the bytes users get, not the Go value.
func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	var out bytes.Buffer
	if err := writeSchema(&out); err != nil {
		t.Fatalf("writeSchema: %v", err)
	}
	doc, err := jsonschema.UnmarshalJSON(&out)
	if err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("vmcp.schema.json", doc); err != nil {
		t.Fatalf("AddResource: %v", err)
	}
	sch, err := c.Compile("vmcp.schema.json")
	if err != nil {
		t.Fatalf("schema does not compile as draft-07: %v", err)
	}
	return sch
}

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
	sch := compileSchema(t)
	var files []string
	for _, pattern := range []string{"*.yaml", "*.yml", "*.json"} {
		m, err := filepath.Glob(filepath.Join("..", "..", "examples", pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found %d example files; want the full set of at least 10", len(files))
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
	sch := compileSchema(t)
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
	s := workflowSchema()
	defs := s["definitions"].(obj)
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
	sch := compileSchema(t)
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
