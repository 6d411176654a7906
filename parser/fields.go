package parser

// Field tables and the extraction of workflow objects from mappings.
//
// Each object (workflow, step, onError, ...) has a table of canonical
// camelCase field names. A key matches a field when it is the canonical
// name, its snake_case form (dependsOn -> depends_on), or a listed synonym
// (retryCount and retry_count for maxRetries). A key that matches nothing
// is recorded in File.Unknown; two keys that match the same field are a
// duplicate_field error, and the first one wins.

import (
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/internal/spell"
)

// Object names used in UnknownKey.Object.
const (
	ObjWorkflow       = "workflow"
	ObjStep           = "step"
	ObjOnError        = "onError"
	ObjOnDecline      = "onDecline"
	ObjOnCancel       = "onCancel"
	ObjOutput         = "output"
	ObjOutputProperty = "output property"
)

// fieldSet is the table of one object's fields.
type fieldSet struct {
	object   string
	known    []string          // canonical names, in documentation order
	synonyms map[string]string // extra names (camelCase) -> canonical name
	spell    map[string]string // accepted spelling -> canonical name
}

func newFieldSet(object string, known []string, synonyms map[string]string) *fieldSet {
	fs := &fieldSet{object: object, known: known, synonyms: synonyms, spell: map[string]string{}}
	for _, k := range known {
		fs.spell[k] = k
		fs.spell[spell.Snake(k)] = k
	}
	for syn, canon := range synonyms {
		fs.spell[syn] = canon
		fs.spell[spell.Snake(syn)] = canon
	}
	return fs
}

var (
	workflowFields = newFieldSet(ObjWorkflow, []string{
		"name", "description", "parameters", "timeout", "failureMode", "maxParallel",
		"vars", "output", "annotations", "steps", "finally",
	}, nil)
	stepFields = newFieldSet(ObjStep, []string{
		"id", "type", "tool", "arguments", "dependsOn", "condition", "onError", "timeout",
		"defaultResults", "message", "schema", "onDecline", "onCancel", "collection",
		"itemVar", "maxParallel", "maxIterations", "step", "steps", "output", "workflow", "idempotent",
	}, nil)
	onErrorFields = newFieldSet(ObjOnError, []string{
		"action", "maxRetries", "retryDelay", "maxDelay", "multiplier", "attemptTimeout", "retryOn",
	},
		map[string]string{"retryCount": "maxRetries"})
	onDeclineFields      = newFieldSet(ObjOnDecline, []string{"action"}, nil)
	onCancelFields       = newFieldSet(ObjOnCancel, []string{"action"}, nil)
	outputFields         = newFieldSet(ObjOutput, []string{"properties", "required"}, nil)
	outputPropertyFields = newFieldSet(ObjOutputProperty, []string{
		"type", "description", "value", "default", "properties", "required",
	}, nil)
)

// FieldTable is one object's accepted fields, for the generators and tests
// of documentation and schemas (authoring/guide), so that they take the
// language from the parser rather than from a copy.
type FieldTable struct {
	Object string   // ObjWorkflow, ObjStep, ...
	Fields []string // canonical camelCase names, in documentation order
	// Synonyms maps each extra accepted camelCase name to its canonical
	// field (retryCount -> maxRetries).
	Synonyms map[string]string
	// Spellings maps every accepted key (canonical, snake_case twins and
	// synonyms in both spellings) to its canonical field.
	Spellings map[string]string
}

// FieldTables returns the field table of every object, in the order of the
// Obj* constants. The returned values are copies.
func FieldTables() []FieldTable {
	sets := []*fieldSet{workflowFields, stepFields, onErrorFields, onDeclineFields, onCancelFields, outputFields, outputPropertyFields}
	out := make([]FieldTable, len(sets))
	for i, fs := range sets {
		t := FieldTable{Object: fs.object, Fields: append([]string(nil), fs.known...),
			Synonyms: map[string]string{}, Spellings: make(map[string]string, len(fs.spell))}
		for k, v := range fs.synonyms {
			t.Synonyms[k] = v
		}
		for k, v := range fs.spell {
			t.Spellings[k] = v
		}
		out[i] = t
	}
	return out
}

// extractor turns converted Nodes into workflow objects, recording unknown
// keys in the file and duplicate spellings as diagnostics.
type extractor struct {
	file  *File
	diags *diag.List
}

// fields matches the keys of mapping n against fs. It returns nil when n
// is not a mapping.
func (x *extractor) fields(n *Node, fs *fieldSet) map[string]*Node {
	if n == nil || n.Kind != Map {
		return nil
	}
	out := make(map[string]*Node, len(n.Fields))
	for _, f := range n.Fields {
		canon, ok := fs.spell[f.Key]
		if !ok {
			x.file.Unknown = append(x.file.Unknown, UnknownKey{
				Key:    f.Key,
				Pos:    f.KeyPos,
				Path:   fieldPath(n.Path, f.Key),
				Object: fs.object,
				Known:  fs.known,
			})
			continue
		}
		if _, dup := out[canon]; dup {
			first := firstSpelling(n, fs, canon)
			x.diags.Add(errDuplicateField(f.KeyPos, fieldPath(n.Path, f.Key), fs.object, canon, f.Key, first.Key, first.KeyPos))
			continue
		}
		out[canon] = f.Value
	}
	return out
}

// firstSpelling returns the first field of n that spells canon (one is
// known to exist).
func firstSpelling(n *Node, fs *fieldSet, canon string) *Field {
	for _, f := range n.Fields {
		if c, ok := fs.spell[f.Key]; ok && c == canon {
			return f
		}
	}
	return nil
}

// workflow builds a Workflow from its mapping.
func (x *extractor) workflow(n *Node, doc int, resource string) *Workflow {
	f := x.fields(n, workflowFields)
	w := &Workflow{
		Node:        n,
		Doc:         doc,
		Resource:    resource,
		Name:        f["name"],
		Description: f["description"],
		Parameters:  f["parameters"],
		Timeout:     f["timeout"],
		FailureMode: f["failureMode"],
		MaxParallel: f["maxParallel"],
		Vars:        f["vars"],
		Output:      x.output(f["output"]),
		Annotations: f["annotations"],
		StepsNode:   f["steps"],
	}
	if w.StepsNode != nil && w.StepsNode.Kind == Seq {
		for _, item := range w.StepsNode.Items {
			w.Steps = append(w.Steps, x.step(item))
		}
	}
	w.FinallyNode = f["finally"]
	if w.FinallyNode != nil && w.FinallyNode.Kind == Seq {
		for _, item := range w.FinallyNode.Items {
			w.Finally = append(w.Finally, x.step(item))
		}
	}
	return w
}

// step builds a Step from its mapping. A step that is not a mapping keeps
// only its Node, for the checker to report.
func (x *extractor) step(n *Node) *Step {
	f := x.fields(n, stepFields)
	s := &Step{
		Node:           n,
		ID:             f["id"],
		Type:           f["type"],
		Tool:           f["tool"],
		Arguments:      f["arguments"],
		DependsOn:      f["dependsOn"],
		Condition:      f["condition"],
		Timeout:        f["timeout"],
		DefaultResults: f["defaultResults"],
		Idempotent:     f["idempotent"],
		Message:        f["message"],
		Schema:         f["schema"],
		Collection:     f["collection"],
		ItemVar:        f["itemVar"],
		MaxParallel:    f["maxParallel"],
		MaxIterations:  f["maxIterations"],
		Workflow:       f["workflow"],
	}
	if n := f["onError"]; n != nil {
		g := x.fields(n, onErrorFields)
		s.OnError = &OnError{
			Node: n, Action: g["action"], MaxRetries: g["maxRetries"], RetryDelay: g["retryDelay"],
			MaxDelay: g["maxDelay"], Multiplier: g["multiplier"], AttemptTimeout: g["attemptTimeout"], RetryOn: g["retryOn"],
		}
	}
	if n := f["onDecline"]; n != nil {
		s.OnDecline = &Response{Node: n, Action: x.fields(n, onDeclineFields)["action"]}
	}
	if n := f["onCancel"]; n != nil {
		s.OnCancel = &Response{Node: n, Action: x.fields(n, onCancelFields)["action"]}
	}
	if n := f["step"]; n != nil {
		s.Inner = x.step(n)
	}
	s.StepsNode = f["steps"]
	if s.StepsNode != nil && s.StepsNode.Kind == Seq {
		for _, item := range s.StepsNode.Items {
			s.Body = append(s.Body, x.step(item))
		}
	}
	s.Output = x.output(f["output"])
	return s
}

// output builds the workflow's output declaration.
func (x *extractor) output(n *Node) *Output {
	if n == nil {
		return nil
	}
	f := x.fields(n, outputFields)
	o := &Output{Node: n, PropertiesNode: f["properties"], Required: f["required"]}
	o.Properties = x.outputProperties(o.PropertiesNode)
	return o
}

// outputProperties builds the properties of an output or of an object
// property, in source order.
func (x *extractor) outputProperties(n *Node) []*OutputProperty {
	if n == nil || n.Kind != Map {
		return nil
	}
	var props []*OutputProperty
	for _, fld := range n.Fields {
		p := &OutputProperty{Name: fld.Key, Node: fld.Value, KeyPos: fld.KeyPos}
		f := x.fields(fld.Value, outputPropertyFields)
		p.Type = f["type"]
		p.Description = f["description"]
		p.Value = f["value"]
		p.Default = f["default"]
		p.PropertiesNode = f["properties"]
		p.Required = f["required"]
		p.Properties = x.outputProperties(p.PropertiesNode)
		props = append(props, p)
	}
	return props
}
