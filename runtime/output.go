package runtime

// Outputs. A step's output comes from the backend's ToolResult (design.md
// "Step output"): an object Structured value is the output; otherwise the
// output is the content map, built as ToolHive's ContentArrayToMap builds
// it: the first text item is "text", later ones "text_1", "text_2", ...;
// images are "image_0", "image_1", ... (their base64 data); the first
// embedded resource is "resource" (its text, or else its blob), later ones
// "resource_1", ...; beyond ToolHive, audio items are "audio_0", ... (their
// data) and resource links "link_0", ... (their URI). The content map is
// also .steps.<id>.content, whether or not there is structured content.
// IsError makes the step fail with the result's text.
//
// The composite tool's result is built after every step has finished:
// with an output block, each property's value template is evaluated (typed),
// converted to the declared type, and replaced by its default when the data
// is missing or, as in ToolHive, does not convert to that type; required
// properties without either are errors; nested properties build objects.
// Without an output block the result is the output of the single sink step,
// or an object keyed by sink step id when there are several.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/vmcp-dev/vmcp/ir"
)

// noContent is the content map of a step without a tool result (skipped,
// failed, an elicitation or a forEach). Shared and never modified.
var noContent = map[string]any{}

// stepOutput converts a backend result into a step output and its content
// map, or an error message when the result is an error.
func stepOutput(res *ToolResult) (output any, content map[string]any, msg string, ok bool) {
	if res == nil {
		return map[string]any{}, noContent, "", true
	}
	if res.IsError {
		var texts []string
		for _, c := range res.Content {
			if c.Type == "text" || (c.Type == "" && c.Text != "") {
				texts = append(texts, c.Text)
			}
		}
		msg := strings.Join(texts, "\n")
		if msg == "" {
			msg = "the tool returned an error without text"
		}
		return nil, nil, msg, false
	}
	content = contentMap(res.Content)
	if m, ok := res.Structured.(map[string]any); ok {
		return m, content, "", true
	}
	if res.Structured != nil {
		if v, err := toJSONValue(res.Structured); err == nil {
			if m, ok := v.(map[string]any); ok {
				return m, content, "", true
			}
		}
	}
	return content, content, "", true
}

// contentMap builds the content map of a result's items (see the file
// comment). Items of other kinds are left out.
func contentMap(items []Content) map[string]any {
	if len(items) == 0 {
		return noContent
	}
	out := make(map[string]any, len(items))
	var texts, images, audio, resources, links int
	// key names the n-th item of a kind; first is the key of item 0 when
	// it has no number (text, resource).
	key := func(prefix string, n *int, first string) string {
		k := first
		if *n > 0 || first == "" {
			k = prefix + "_" + strconv.Itoa(*n)
		}
		*n++
		return k
	}
	for _, c := range items {
		switch c.Type {
		case "text", "":
			out[key("text", &texts, "text")] = c.Text
		case "image":
			out[key("image", &images, "")] = c.Data
		case "audio":
			out[key("audio", &audio, "")] = c.Data
		case "resource":
			v := c.Text
			if v == "" {
				v = c.Data
			}
			out[key("resource", &resources, "resource")] = v
		case "resource_link":
			out[key("link", &links, "")] = c.URI
		}
	}
	return out
}

// compositeResult builds the run's output after all steps are done.
func (r *Machine) compositeResult() (any, *StepError) {
	wp := r.wp
	if wp.wf.Output == nil {
		if len(wp.sinks) == 1 {
			return r.run.Steps[wp.sinks[0]].Output, nil
		}
		m := make(map[string]any, len(wp.sinks))
		for _, i := range wp.sinks {
			m[wp.steps[i].id] = r.run.Steps[i].Output
		}
		return m, nil
	}
	return r.buildObject(r.data, wp.output, wp.wf.Output.Required, "")
}

// buildObject evaluates output properties over data: the run's root data
// for the workflow's output, an iteration's for a loop's (body.go).
func (r *Machine) buildObject(data map[string]any, props []*outputPlan, required []string, prefix string) (map[string]any, *StepError) {
	out := make(map[string]any, len(props))
	req := make(map[string]bool, len(required))
	for _, n := range required {
		req[n] = true
	}
	for _, op := range props {
		p := op.prop
		name := prefix + p.Name
		var (
			v       any
			present bool
		)
		switch {
		case len(op.props) > 0:
			obj, err := r.buildObject(data, op.props, p.Required, name+".")
			if err != nil {
				return nil, err
			}
			v, present = obj, true
		case op.value != nil:
			x, err := op.value.value(data)
			switch {
			case err == nil:
				v, present = x, x != nil
			case errors.Is(err, errMissing):
				// absent data: default, required check or omission below
			default:
				return nil, templateStepError("", op.value, err, "output property "+strconv.Quote(name))
			}
		}
		if present {
			cv, err := convertOutput(v, p.Type)
			switch {
			case err == nil:
				v = cv
			case p.HasDefault:
				// As in ToolHive: a value of the wrong type gives way to the default.
				present = false
			default:
				return nil, &StepError{Pos: p.Pos, Msg: fmt.Sprintf("output property %q: %v; give it a default to use instead", name, err)}
			}
		}
		if !present && p.HasDefault {
			v, present = deepCopy(p.Default), true
		}
		if !present {
			if req[p.Name] {
				return nil, &StepError{Pos: p.Pos, Msg: fmt.Sprintf("output property %q is required but its value is missing and it has no default", name)}
			}
			continue
		}
		out[p.Name] = v
	}
	return out, nil
}

// convertOutput converts a property value to its declared type. Strings
// rendered by templates are parsed; values of the right type pass through.
func convertOutput(v any, typ string) (any, error) {
	switch typ {
	case "", "any":
		return v, nil
	case "string":
		switch x := v.(type) {
		case string:
			return x, nil
		case map[string]any, []any:
			s, err := jsonFunc(x)
			return s, err
		}
		return fmt.Sprint(v), nil
	}
	nv, _, cerr := coerce(v, map[string]any{"type": typ}, 0)
	if cerr != nil {
		return nil, fmt.Errorf("value is not a valid %s", typ)
	}
	ok := false
	switch typ {
	case "integer":
		switch x := nv.(type) {
		case int64, int:
			ok = true
		case float64:
			if x == float64(int64(x)) {
				nv, ok = int64(x), true
			}
		}
	case "number":
		switch nv.(type) {
		case int64, int, float64:
			ok = true
		}
	case "boolean":
		_, ok = nv.(bool)
	case "object":
		_, ok = nv.(map[string]any)
	case "array":
		_, ok = nv.([]any)
	default:
		ok = true
	}
	if !ok {
		return nil, fmt.Errorf("value is %s, not a valid %s", typeName(nv), typ)
	}
	return nv, nil
}

// templateStepError turns a template evaluation error into a StepError at
// the template's position.
func templateStepError(step string, t *tmpl, err error, what string) *StepError {
	var te *templateError
	if errors.As(err, &te) {
		pos := te.pos
		if !pos.IsValid() {
			pos = t.src.Pos
		}
		return &StepError{Step: step, Pos: pos, Msg: what + ": " + te.msg}
	}
	return &StepError{Step: step, Pos: t.src.Pos, Msg: what + ": " + err.Error()}
}

// posOr returns p, or the fallback when p is unknown.
func posOr(p, fallback ir.Pos) ir.Pos {
	if p.IsValid() {
		return p
	}
	return fallback
}
