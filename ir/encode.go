package ir

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Encode writes the plan as indented JSON with a trailing newline.
func Encode(p *Plan) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Decode reads a plan written by Encode, checks its version and validates
// it (Validate): the runtime trusts what it decodes.
func Decode(data []byte) (*Plan, error) {
	var p Plan
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("plan is not valid JSON: %w", err)
	}
	if p.Version != Version && p.Version != compatibleVersion {
		return nil, versionError(p.Version)
	}
	normalizePlanNumbers(&p)
	if err := Validate(&p); err != nil {
		return nil, err
	}
	return &p, nil
}

// versionError explains why a plan of another version cannot be run.
func versionError(v string) error {
	for _, old := range olderVersions {
		if v == old {
			return fmt.Errorf("plan version %q was written by an older vmcpc and is not supported (this runtime reads %q); recompile the workflow sources with this vmcpc (vmcpc compile -o plan.json)", v, Version)
		}
	}
	return fmt.Errorf("plan version %q is not supported (want %q); recompile it with this vmcpc", v, Version)
}

// normalizePlanNumbers turns json.Number values inside literal values back into
// the types the compiler produced (int64 when integral, else float64), so a
// decoded plan equals the plan that was encoded.
func normalizePlanNumbers(p *Plan) {
	for _, w := range p.Workflows {
		w.InputSchema, _ = NormalizeNumbers(w.InputSchema).(map[string]any)
		for _, v := range w.Vars {
			fixValue(v.Value)
		}
		if w.Output != nil {
			w.Output.Schema, _ = NormalizeNumbers(w.Output.Schema).(map[string]any)
			fixProps(w.Output.Properties)
		}
		for _, s := range w.Steps {
			fixStep(s)
		}
		for _, s := range w.Finally {
			fixStep(s)
		}
	}
}

func fixStep(s *Step) {
	s.DefaultResults = NormalizeNumbers(s.DefaultResults)
	if s.Schema != nil {
		s.Schema, _ = NormalizeNumbers(s.Schema).(map[string]any)
	}
	fixValue(s.Arguments)
	if s.ForEach != nil {
		fixValue(s.ForEach.Items)
	}
	if s.ForEach != nil && s.ForEach.Step != nil {
		fixStep(s.ForEach.Step)
	}
	if s.ForEach != nil {
		for _, b := range s.ForEach.Steps {
			fixStep(b)
		}
		if s.ForEach.Output != nil {
			s.ForEach.Output.Schema, _ = NormalizeNumbers(s.ForEach.Output.Schema).(map[string]any)
			fixProps(s.ForEach.Output.Properties)
		}
	}
}

func fixProps(props []*OutputProperty) {
	for _, p := range props {
		p.Default = NormalizeNumbers(p.Default)
		fixProps(p.Properties)
	}
}

func fixValue(v *Value) {
	if v == nil {
		return
	}
	v.Literal = NormalizeNumbers(v.Literal)
	for _, f := range v.Fields {
		fixValue(f.Value)
	}
	for _, it := range v.Items {
		fixValue(it)
	}
}

// NormalizeNumbers turns the json.Number values of a value decoded with
// UseNumber into the types plans use: int64 when integral, else float64.
// Maps and slices are changed in place.
func NormalizeNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = NormalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = NormalizeNumbers(e)
		}
	}
	return v
}
