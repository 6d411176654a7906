package runtime

// Outputs. A step's output comes from the backend's ToolResult (design.md
// "Step output"): an object Structured value is the output; otherwise text
// items become {text, text_1, ...} and other content kinds keep their MCP
// form under content; IsError makes the step fail with the result's text.
//
// The composite tool's result is built after every step has finished:
// with an output block, each property's value template is evaluated (typed),
// converted to the declared type, replaced by its default when the data is
// missing, and checked for required; nested properties build objects.
// Without an output block the result is the output of the single sink step,
// or an object keyed by sink step id when there are several.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/vmcp-dev/vmcp/ir"
)

// stepOutput converts a backend result into a step output, or an error
// message when the result is an error.
func stepOutput(res *ToolResult) (any, string, bool) {
	if res == nil {
		return map[string]any{}, "", true
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
		return nil, msg, false
	}
	if m, ok := res.Structured.(map[string]any); ok {
		return m, "", true
	}
	if res.Structured != nil {
		if v, err := toJSONValue(res.Structured); err == nil {
			if m, ok := v.(map[string]any); ok {
				return m, "", true
			}
		}
	}
	out := make(map[string]any, len(res.Content))
	var other []any
	n := 0
	for _, c := range res.Content {
		if c.Type == "text" || (c.Type == "" && c.Raw == nil) {
			key := "text"
			if n > 0 {
				key = "text_" + strconv.Itoa(n)
			}
			out[key] = c.Text
			n++
			continue
		}
		raw := make(map[string]any, len(c.Raw)+1)
		for k, v := range c.Raw {
			raw[k] = v
		}
		if _, ok := raw["type"]; !ok {
			raw["type"] = c.Type
		}
		other = append(other, raw)
	}
	if other != nil {
		out["content"] = other
	}
	return out, "", true
}

// compositeResult builds the run's output after all steps are done.
func (r *runState) compositeResult() (any, *StepError) {
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
	return r.buildObject(wp.output, wp.wf.Output.Required, "")
}

func (r *runState) buildObject(props []*outputPlan, required []string, prefix string) (map[string]any, *StepError) {
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
			obj, err := r.buildObject(op.props, p.Required, name+".")
			if err != nil {
				return nil, err
			}
			v, present = obj, true
		case op.value != nil:
			x, err := op.value.value(r.data)
			switch {
			case err == nil:
				v, present = x, x != nil
			case errors.Is(err, errMissing):
				// absent data: default, required check or omission below
			default:
				return nil, r.templateStepError("", op.value, err, "output property "+strconv.Quote(name))
			}
		}
		if present {
			cv, err := convertOutput(v, p.Type)
			if err != nil {
				return nil, &StepError{Pos: p.Pos, Msg: fmt.Sprintf("output property %q: %v", name, err)}
			}
			v = cv
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
	nv, _, err := coerce(v, map[string]any{"type": typ}, "", 0)
	if err != nil {
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
func (r *runState) templateStepError(step string, t *tmpl, err error, what string) *StepError {
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
