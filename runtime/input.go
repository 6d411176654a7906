package runtime

// Input validation: each workflow's InputSchema is compiled once in New
// (santhosh-tekuri/jsonschema). A run first copies the parameters, applies
// the schema's defaults (top-level properties, and nested object properties
// where the object is given), then validates. Problems are reported as an
// *InputError whose messages name the parameter and the rule, never the
// value: the library's own messages quote values, so they are rebuilt here
// from the error kinds. Arguments the schema does not declare are
// rejected, naming the declared parameters.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/vmcp-dev/vmcp/ir"
)

func compileInputSchema(wf *ir.Workflow) (*jsonschema.Schema, error) {
	if len(wf.InputSchema) == 0 {
		return nil, nil
	}
	s, err := compileSchema(wf.InputSchema, "vmcp:///"+wf.Name+"/input.json")
	if err != nil {
		return nil, fmt.Errorf("workflow %q (%s): input schema: %v", wf.Name, wf.Pos, err)
	}
	if anyObjectSchema(wf.InputSchema) {
		// Parameters are always an object: nothing to validate per run.
		return nil, nil
	}
	return s, nil
}

// compileAnswerSchema compiles the form of an elicitation step, against
// which every accepted answer is validated.
func compileAnswerSchema(st *ir.Step) (*jsonschema.Schema, error) {
	if len(st.Schema) == 0 {
		return nil, nil
	}
	s, err := compileSchema(st.Schema, "vmcp:///steps/"+st.ID+"/schema.json")
	if err != nil {
		return nil, fmt.Errorf("step %q (%s): elicitation schema: %v", st.ID, st.Pos, err)
	}
	return s, nil
}

// compileSchema compiles one schema of the plan under url.
func compileSchema(schema map[string]any, url string) (*jsonschema.Schema, error) {
	return compileSchemaWith(schema, url, nil)
}

// compileSchemaWith compiles schema under url; loader, when set, loads
// the resources its $refs name outside it.
func compileSchemaWith(schema map[string]any, url string, loader jsonschema.URLLoader) (*jsonschema.Schema, error) {
	// Round-trip through JSON so every number is in the form the library
	// expects, whatever Go types the plan holds.
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("cannot be encoded: %v", err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if loader != nil {
		c.UseLoader(loader)
	}
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("does not compile: %v", err)
	}
	return s, nil
}

// checkAnswer validates an accepted elicitation answer against the step's
// form. The error names the fields and the rules, never the values
// (answers may be secrets).
func checkAnswer(schema *jsonschema.Schema, answer map[string]any) error {
	if schema == nil {
		return nil
	}
	err := schema.Validate(normalizeInstance(answer))
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return errors.New("the answer cannot be validated against the elicitation schema")
	}
	problems := map[string]bool{}
	collectProblems(ve, "field", problems)
	return fmt.Errorf("the answer does not match the elicitation schema: %s",
		strings.Join(sortedProblems(problems, "the answer does not match the form"), "; "))
}

// anyObjectSchema reports whether a schema accepts every object: it says
// type object and nothing else (an empty properties map adds nothing).
func anyObjectSchema(schema map[string]any) bool {
	if t, _ := schema["type"].(string); t != "object" {
		return false
	}
	for k, v := range schema {
		switch k {
		case "type":
		case "properties":
			if p, ok := v.(map[string]any); !ok || len(p) != 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// validateParams returns the parameters with defaults applied, or an
// *InputError. An argument the schema's properties do not declare is
// rejected (a misspelt name would otherwise be dropped silently), unless
// the schema allows extra properties (additionalProperties other than
// false, or patternProperties) or has no properties keyword at all. A
// declared parameter that the caller left out and that has no default is
// then null (design.md "Templates"), so templates read it as null, not as
// a missing field; it is added after validation, which would reject a null
// of a declared type.
func (wp *workflowPlan) validateParams(params map[string]any) (map[string]any, error) {
	problems := map[string]bool{}
	undeclaredParams(params, wp.wf.InputSchema, problems)
	out := make(map[string]any, len(params)+4)
	for k, v := range params {
		out[k] = v
	}
	applyDefaults(out, wp.wf.InputSchema, 0)
	if wp.input != nil {
		if err := wp.input.Validate(normalizeInstance(out)); err != nil {
			var ve *jsonschema.ValidationError
			if !errors.As(err, &ve) {
				return nil, &InputError{Workflow: wp.wf.Name, Problems: []string{"arguments cannot be validated"}}
			}
			collectProblems(ve, "parameter", problems)
			if len(problems) == 0 {
				problems["arguments do not match the input schema"] = true
			}
		}
	}
	if len(problems) > 0 {
		return nil, &InputError{Workflow: wp.wf.Name, Problems: sortedProblems(problems, "")}
	}
	props, _ := wp.wf.InputSchema["properties"].(map[string]any)
	for name := range props {
		if _, given := out[name]; !given {
			out[name] = nil
		}
	}
	return out, nil
}

// sortedProblems lists problems in order, or none when there is none.
func sortedProblems(problems map[string]bool, none string) []string {
	list := make([]string, 0, len(problems))
	for p := range problems {
		list = append(list, p)
	}
	sort.Strings(list)
	if len(list) == 0 && none != "" {
		list = append(list, none)
	}
	return list
}

// undeclaredParams records a problem for each argument that schema does
// not declare, naming the declared parameters.
func undeclaredParams(params, schema map[string]any, out map[string]bool) {
	props, declares := schema["properties"].(map[string]any)
	if !declares {
		return // {type: object} alone accepts any object (the compiler always writes properties)
	}
	if ap, set := schema["additionalProperties"]; set && ap != false {
		return
	}
	if _, set := schema["patternProperties"]; set {
		return
	}
	var unknown []string
	for name := range params {
		if _, ok := props[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return
	}
	declared := make([]string, 0, len(props))
	for name := range props {
		declared = append(declared, name)
	}
	sort.Strings(declared)
	hint := "the workflow declares no parameters"
	if len(declared) > 0 {
		hint = "the declared parameters are " + strings.Join(declared, ", ")
	}
	for _, name := range unknown {
		out[fmt.Sprintf("parameter %q is not declared (%s)", name, hint)] = true
	}
}

// normalizeInstance converts Go values the validator does not know (for
// example []string, or named types) into JSON form.
func normalizeInstance(m map[string]any) any {
	for _, v := range m {
		switch v.(type) {
		case nil, string, bool, int, int64, int32, float64, float32, json.Number, map[string]any, []any:
			continue
		}
		b, err := json.Marshal(m)
		if err != nil {
			return m
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return m
		}
		return doc
	}
	return m
}

// applyDefaults sets missing properties that declare a default. Nested
// objects given by the caller are copied before defaults go into them.
func applyDefaults(obj map[string]any, schema map[string]any, d int) {
	if d > maxArgumentDepth {
		return
	}
	props, _ := schema["properties"].(map[string]any)
	for name, ps := range props {
		pm, _ := ps.(map[string]any)
		if pm == nil {
			continue
		}
		v, ok := obj[name]
		if !ok {
			if def, has := pm["default"]; has {
				v := deepCopy(def)
				if sub, isObj := v.(map[string]any); isObj {
					applyDefaults(sub, pm, d+1)
				}
				obj[name] = v
			}
			continue
		}
		if sub, isObj := v.(map[string]any); isObj {
			if _, hasProps := pm["properties"]; hasProps {
				cp := make(map[string]any, len(sub))
				for k, e := range sub {
					cp[k] = e
				}
				applyDefaults(cp, pm, d+1)
				obj[name] = cp
			}
		}
	}
}

// collectProblems walks the error tree and records one message per leaf;
// noun says what a top-level property is (parameter, field).
func collectProblems(e *jsonschema.ValidationError, noun string, out map[string]bool) {
	collectProblemsAt(e, noun, func(loc []string) string { return strings.Join(loc, ".") }, out)
}

// collectProblemsAt is collectProblems with path writing an instance
// location as the message shows it.
func collectProblemsAt(e *jsonschema.ValidationError, noun string, path func([]string) string, out map[string]bool) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collectProblemsAt(c, noun, path, out)
		}
		return
	}
	param := path(e.InstanceLocation)
	name := func() string {
		if param == "" {
			if noun == "field" {
				return "the answer"
			}
			return "arguments"
		}
		return fmt.Sprintf("%s %q", noun, param)
	}
	sub := func(p string) string {
		if param == "" {
			return p
		}
		return param + "." + p
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		for _, m := range k.Missing {
			out[fmt.Sprintf("%s %q is required", noun, sub(m))] = true
		}
	case *kind.AdditionalProperties:
		if param == "" && noun == "parameter" {
			break // reported by undeclaredParams, with the declared names
		}
		for _, p := range k.Properties {
			out[fmt.Sprintf("%s %q is not declared", noun, sub(p))] = true
		}
	case *kind.Type:
		out[fmt.Sprintf("%s must be %s (got %s)", name(), strings.Join(k.Want, " or "), k.Got)] = true
	case *kind.Enum:
		out[fmt.Sprintf("%s must be one of the values its enum allows", name())] = true
	case *kind.Const:
		out[fmt.Sprintf("%s must equal its const value", name())] = true
	case *kind.Format:
		out[fmt.Sprintf("%s is not a valid %s", name(), k.Want)] = true
	case *kind.Pattern:
		out[fmt.Sprintf("%s does not match the pattern %s", name(), k.Want)] = true
	case *kind.MinLength:
		out[fmt.Sprintf("%s must be at least %d characters long", name(), k.Want)] = true
	case *kind.MaxLength:
		out[fmt.Sprintf("%s must be at most %d characters long", name(), k.Want)] = true
	case *kind.Minimum:
		out[fmt.Sprintf("%s must be >= %s", name(), k.Want.RatString())] = true
	case *kind.Maximum:
		out[fmt.Sprintf("%s must be <= %s", name(), k.Want.RatString())] = true
	case *kind.ExclusiveMinimum:
		out[fmt.Sprintf("%s must be > %s", name(), k.Want.RatString())] = true
	case *kind.ExclusiveMaximum:
		out[fmt.Sprintf("%s must be < %s", name(), k.Want.RatString())] = true
	case *kind.MultipleOf:
		out[fmt.Sprintf("%s must be a multiple of %s", name(), k.Want.RatString())] = true
	case *kind.MinItems:
		out[fmt.Sprintf("%s must have at least %d items", name(), k.Want)] = true
	case *kind.MaxItems:
		out[fmt.Sprintf("%s must have at most %d items", name(), k.Want)] = true
	case *kind.UniqueItems:
		out[fmt.Sprintf("%s must not contain duplicate items", name())] = true
	case *kind.MinProperties:
		out[fmt.Sprintf("%s must have at least %d properties", name(), k.Want)] = true
	case *kind.MaxProperties:
		out[fmt.Sprintf("%s must have at most %d properties", name(), k.Want)] = true
	case *kind.FalseSchema:
		out[fmt.Sprintf("%s is not allowed", name())] = true
	default:
		out[fmt.Sprintf("%s fails the %q rule", name(), strings.Join(e.ErrorKind.KeywordPath(), "/"))] = true
	}
}
