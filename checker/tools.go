package checker

// Checks against a tool catalog (only with Options.Tools), shared by
// workflow sources (Check) and compiled plans (CheckPlan):
//
//   - Tool references. backend.tool must name a known backend and one of
//     its tools. A bare or aggregated name is resolved with
//     catalog.Resolve: exactly one match resolves it, none is an unknown
//     tool, several are an ambiguity listing the candidates.
//   - Arguments against the tool's input schema. For an object schema:
//     every argument must be a declared property unless
//     additionalProperties allows more; every required property must be
//     given; and a literal value must have the declared JSON type. Strings
//     that the runtime will coerce count as having the type when they parse
//     ("5" for an integer, "true" for a boolean), and a template is never
//     type-checked, because its value is known only at run time. Nested
//     objects and array items are checked the same way, recursively.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/vmcp-dev/vmcp/catalog"
	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/parser"
)

// checkToolExists reports a backend.tool reference whose backend or tool
// the catalog lacks. Without a catalog there is nothing to check.
func checkToolExists(cat *catalog.Catalog, tr *ir.ToolRef, path string) diag.List {
	var out diag.List
	if cat == nil {
		return out
	}
	if _, ok := cat.Backends[tr.Backend]; !ok {
		out.Add(errUnknownBackend(tr.Pos, path, tr.Backend, cat.BackendNames()))
		return out
	}
	if _, ok := cat.Tool(tr.Backend, tr.Name); !ok {
		out.Add(errUnknownTool(tr.Pos, path, tr.Backend, tr.Name, cat.ToolNames(tr.Backend)))
	}
	return out
}

// resolveToolRef resolves a bare or aggregated reference (tr.Ref) against
// the catalog, filling in tr.Backend and tr.Name when exactly one backend
// tool matches.
func resolveToolRef(cat *catalog.Catalog, tr *ir.ToolRef, path string) diag.List {
	var out diag.List
	matches := cat.Resolve(tr.Ref)
	switch len(matches) {
	case 1:
		tr.Backend, tr.Name = matches[0].Backend, matches[0].Tool
	case 0:
		var names []string
		for _, b := range cat.BackendNames() {
			for _, t := range cat.ToolNames(b) {
				names = append(names, t, b+"_"+t)
			}
		}
		out.Add(errNoToolNamed(tr.Pos, path, tr.Ref, names))
	default:
		candidates := make([]string, len(matches))
		for i, m := range matches {
			candidates[i] = m.String()
		}
		out.Add(errAmbiguousToolRef(tr.Pos, path, tr.Ref, candidates))
	}
	return out
}

// checkToolArgs checks a tool step's arguments (nil when absent) against
// the input schema of the resolved tool tr.
func (w *wfCheck) checkToolArgs(tr *ir.ToolRef, s *parser.Step, args *parser.Node) {
	if tr == nil || !tr.Resolved() || s.Tool == nil {
		return
	}
	// Missing arguments are reported at the arguments key, or at the tool
	// reference when there are no arguments.
	pos, path := s.Tool.Pos, s.Tool.Path
	if args != nil {
		pos, path = keyPos(s.Node, args, "arguments")
	}
	for _, d := range checkArguments(w.c.opts.Tools, tr, args, pos, path) {
		w.add(d)
	}
}

// checkArguments checks args (nil when absent) against the input schema
// of tool tr. Missing required arguments are reported at missingPos.
func checkArguments(cat *catalog.Catalog, tr *ir.ToolRef, args *parser.Node, missingPos ir.Pos, missingPath string) diag.List {
	var out diag.List
	tool, ok := cat.Tool(tr.Backend, tr.Name)
	if !ok || tool.InputSchema == nil {
		return out
	}
	checkObjectArgs(&out, "tool "+tr.String(), "", tool.InputSchema, args, missingPos, missingPath)
	return out
}

// checkObjectArgs checks the mapping n (nil when absent) against an object
// schema. callee names the tool or workflow for messages ("tool b.t"), and
// prefix the enclosing argument ("" at the top).
func checkObjectArgs(out *diag.List, tool, prefix string, schema map[string]any, n *parser.Node, missingPos ir.Pos, missingPath string) {
	props, _ := schema["properties"].(map[string]any)
	var names []string
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	open := false
	switch ap := schema["additionalProperties"].(type) {
	case bool:
		open = ap
	case map[string]any:
		open = true
	}
	if props == nil {
		open = true
	}
	given := map[string]bool{}
	if n != nil {
		for _, f := range n.Fields {
			given[f.Key] = true
			argName := prefix + f.Key
			ps, declared := props[f.Key].(map[string]any)
			if !declared {
				if !open {
					out.Add(errUnknownArgument(f.KeyPos, pathJoin(n.Path, f.Key), tool, argName, names, describeArgs(names, props, schema)))
				}
				continue
			}
			checkArgValue(out, tool, argName, ps, f.Value)
		}
	}
	for _, r := range stringList(schema["required"]) {
		if !given[r] {
			ps, _ := props[r].(map[string]any)
			out.Add(errMissingArgument(missingPos, missingPath, tool, prefix+r, r, joinOr(stringList(ps["type"]))))
		}
	}
}

// describeArgs lists an object schema's properties with their types and
// whether they are required: "channel (string, required)".
func describeArgs(names []string, props, schema map[string]any) []string {
	required := map[string]bool{}
	for _, r := range stringList(schema["required"]) {
		required[r] = true
	}
	out := make([]string, len(names))
	for i, name := range names {
		ps, _ := props[name].(map[string]any)
		var facts []string
		if t := joinOr(stringList(ps["type"])); t != "" {
			facts = append(facts, t)
		}
		if required[name] {
			facts = append(facts, "required")
		}
		out[i] = name
		if len(facts) > 0 {
			out[i] += " (" + strings.Join(facts, ", ") + ")"
		}
	}
	return out
}

func checkArgValue(out *diag.List, tool, name string, schema map[string]any, n *parser.Node) {
	if n.Kind == parser.String {
		if s, _ := n.Str(); isTemplate(s) {
			return
		}
	}
	types := stringList(schema["type"])
	if len(types) > 0 && !literalFits(n, types) {
		out.Add(errArgumentType(n.Pos, n.Path, tool, name, joinOr(types), describeValue(n.Interface())))
		return
	}
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 && !inEnum(n.Interface(), enum) {
		var names []string
		for _, e := range enum {
			names = append(names, fmt.Sprint(e))
		}
		out.Add(errArgumentEnum(n.Pos, n.Path, tool, name, names, fmt.Sprint(n.Interface())))
		return
	}
	switch n.Kind {
	case parser.Map:
		if _, ok := schema["properties"].(map[string]any); ok {
			checkObjectArgs(out, tool, name+".", schema, n, n.Pos, n.Path)
		}
	case parser.Seq:
		if items, ok := schema["items"].(map[string]any); ok {
			for i, it := range n.Items {
				checkArgValue(out, tool, fmt.Sprintf("%s[%d]", name, i), items, it)
			}
		}
	}
}

// literalFits reports whether a literal node is acceptable for one of the
// types, allowing the string coercions the runtime performs.
func literalFits(n *parser.Node, types []string) bool {
	v := n.Interface()
	if valueHasType(v, types) {
		return true
	}
	s, isStr := v.(string)
	if !isStr {
		return false
	}
	for _, t := range types {
		switch t {
		case "integer":
			if _, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
				return true
			}
		case "number":
			if _, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
				return true
			}
		case "boolean":
			if l := strings.ToLower(strings.TrimSpace(s)); l == "true" || l == "false" {
				return true
			}
		case "array", "object":
			var x any
			if json.Unmarshal([]byte(s), &x) == nil && valueHasType(x, []string{t}) {
				return true
			}
		}
	}
	return false
}

// inEnum reports whether v equals one of the enum values, comparing
// numbers by value.
func inEnum(v any, enum []any) bool {
	for _, e := range enum {
		if reflect.DeepEqual(v, e) {
			return true
		}
		if a, ok := toFloat(v); ok {
			if b, ok := toFloat(e); ok && a == b {
				return true
			}
		}
	}
	return false
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case int:
		return float64(x), true
	case string:
		// The runtime coerces numeric strings for number arguments.
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return f, err == nil
	}
	return 0, false
}

// stringList reads a JSON Schema keyword that is a string or a list of them.
func stringList(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case []string:
		return x
	}
	return nil
}
