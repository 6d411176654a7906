package parser

// The wording of every diagnostic the parser reports, one constructor per
// kind. Codes are stable: tools and tests match on them.
//
// The parser reports only what stops it from building the syntax tree:
// broken YAML, documents that are not mappings, duplicate keys, limits.
// Unknown keys are recorded in File.Unknown and worded by the checker, and
// the kinds and values of fields are the checker's business too.

import (
	"fmt"
	"strconv"
	"unicode"

	"github.com/vmcp-dev/vmcp/diag"
	"github.com/vmcp-dev/vmcp/ir"
)

// Diagnostic codes reported by the parser.
const (
	CodeSyntax         = "yaml_syntax"
	CodeNotAMapping    = "not_a_mapping"
	CodeNotASequence   = "not_a_sequence"
	CodeDuplicateKey   = "duplicate_key"
	CodeDuplicateField = "duplicate_field"
	CodeNestingTooDeep = "nesting_too_deep"
	CodeTooLarge       = "document_too_large"
	CodeAliasBudget    = "alias_budget"
	CodeUnknownAnchor  = "unknown_anchor"
	CodeComplexKey     = "complex_key"
	CodeBadMerge       = "bad_merge"
	CodeUnsupported    = "unsupported_yaml"
	CodeMissingSpec    = "missing_spec"
	CodeAPIVersion     = "unsupported_api_version"
	CodeInvalidUTF8    = "invalid_utf8"
)

func errorAt(pos ir.Pos, path, code, format string, args ...any) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Error, Pos: pos, Path: path, Code: code, Message: fmt.Sprintf(format, args...)}
}

// goyamlTabMessages are go-yaml's messages for a tab used as indentation.
var goyamlTabMessages = map[string]bool{
	"tab character cannot use as a map key directly":   true,
	"found character '\t' that cannot start any token": true,
}

// syntaxWording rewrites go-yaml messages that read badly.
var syntaxWording = map[string]string{
	"mapping value is not allowed in this context": "unexpected ':' (a value that contains \": \" must be quoted)",
	"value is not allowed in this context":         "value not allowed here (check the indentation)",
	"could not find flow map content":              "unexpected '{': a mapping in braces is not closed properly",
}

func errSyntax(pos ir.Pos, msg string) diag.Diagnostic {
	if goyamlTabMessages[msg] {
		msg = "tab characters cannot be used for indentation"
	}
	if better, ok := syntaxWording[msg]; ok {
		msg = better
	}
	return errorAt(pos, "", CodeSyntax, "invalid YAML: %s", msg)
}

// errUnquotedTemplate is a syntax error at a template that starts a plain
// value.
func errUnquotedTemplate(pos ir.Pos, msg string) diag.Diagnostic {
	d := errSyntax(pos, msg)
	d.Message = "invalid YAML: a value that starts with {{ must be quoted"
	d.Detail = []string{`write it as "{{...}}": unquoted, YAML reads { as the start of a mapping`}
	return d
}

// errDocumentNotAMapping reports a document that is not a mapping; idx is
// 0-based. stepList says that it looks like a bare list of steps.
func errDocumentNotAMapping(pos ir.Pos, idx int, kind Kind, stepList bool) diag.Diagnostic {
	d := errorAt(pos, "", CodeNotAMapping,
		"document %d is a %s; a workflow definition must be a mapping (with steps, a Kubernetes kind, or compositeTools)", idx+1, kind)
	if stepList {
		d.Detail = []string{"this looks like a list of steps: put it under a steps: key, with a name and a description"}
	}
	return d
}

func errCompositeToolsNotList(pos ir.Pos, key string, kind Kind) diag.Diagnostic {
	return errorAt(pos, key, CodeNotASequence, "%s must be a list of workflow definitions, not a %s", key, kind)
}

func errCompositeToolNotMapping(pos ir.Pos, path string, kind Kind) diag.Diagnostic {
	return errorAt(pos, path, CodeNotAMapping, "%s is a %s; each entry of the list must be a workflow definition (a mapping)", path, kind)
}

func errDuplicateKey(pos ir.Pos, path, key string, first ir.Pos) diag.Diagnostic {
	d := errorAt(pos, path, CodeDuplicateKey, "duplicate key %q in this mapping (first at line %d)", key, first.Line)
	d.Detail = []string{fmt.Sprintf("%s: first %q is here; only the first is used", first, key)}
	return d
}

func errDuplicateField(pos ir.Pos, path, object, field, key, firstKey string, first ir.Pos) diag.Diagnostic {
	d := errorAt(pos, path, CodeDuplicateField,
		"duplicate field: %q and %q both set %s %s; write it once", firstKey, key, object, field)
	d.Detail = []string{fmt.Sprintf("%s: %q is set here first; only that one is used", first, firstKey)}
	return d
}

func errNestingTooDeep(pos ir.Pos, path string, limit int) diag.Diagnostic {
	return errorAt(pos, path, CodeNestingTooDeep, "values nest more than %d levels deep", limit)
}

func errDocumentTooLarge(pos ir.Pos, limit int) diag.Diagnostic {
	d := errorAt(pos, "", CodeTooLarge,
		"document holds more than %d values by this line; it is not parsed", limit)
	d.Detail = []string{"a workflow has at most 100 steps: move a part into a workflow of its own " +
		"(a type: workflow step runs it), fold repeated steps into a forEach, or read large data from a backend"}
	return d
}

func errAliasBudget(pos ir.Pos, path string, limit int) diag.Diagnostic {
	return errorAt(pos, path, CodeAliasBudget,
		"aliases here expand to more than %d values (aliases of aliases?); refusing to expand further", limit)
}

func errUnknownAnchor(pos ir.Pos, path, name string) diag.Diagnostic {
	return errorAt(pos, path, CodeUnknownAnchor, "alias %s names no anchor defined before it", aliasName(name))
}

// aliasName prints an alias as written, *name, when the name is plain
// printable text, and otherwise quoted (*"a\nb"): a quoted alias name may
// span lines or hold escapes, and a message must stay on one line.
func aliasName(name string) string {
	for _, r := range name {
		if !unicode.IsPrint(r) || r == '"' {
			return "*" + strconv.Quote(name)
		}
	}
	return "*" + name
}

func errComplexKey(pos ir.Pos, path string) diag.Diagnostic {
	return errorAt(pos, path, CodeComplexKey, "mapping keys must be strings or other scalars, not mappings or lists")
}

func errBadMerge(pos ir.Pos, path string, kind Kind) diag.Diagnostic {
	return errorAt(pos, path, CodeBadMerge, "merge key << needs a mapping or a list of mappings, not a %s", kind)
}

func errUnsupportedNode(pos ir.Pos, path, typ string) diag.Diagnostic {
	return errorAt(pos, path, CodeUnsupported, "unsupported YAML construct (%s)", typ)
}

func errMissingSpec(pos ir.Pos, name string) diag.Diagnostic {
	if name == "" {
		return errorAt(pos, "", CodeMissingSpec, "VirtualMCPCompositeToolDefinition has no spec mapping holding the workflow")
	}
	return errorAt(pos, "", CodeMissingSpec, "VirtualMCPCompositeToolDefinition %q has no spec mapping holding the workflow", name)
}

func errAPIVersion(pos ir.Pos, got string) diag.Diagnostic {
	if got == "" {
		return errorAt(pos, "apiVersion", CodeAPIVersion,
			"VirtualMCPCompositeToolDefinition needs apiVersion toolhive.stacklok.dev/v1alpha1 or toolhive.stacklok.dev/v1beta1")
	}
	return errorAt(pos, "apiVersion", CodeAPIVersion,
		"unsupported apiVersion %q for VirtualMCPCompositeToolDefinition (want toolhive.stacklok.dev/v1alpha1 or toolhive.stacklok.dev/v1beta1)", got)
}

func errInvalidUTF8(pos ir.Pos) diag.Diagnostic {
	return errorAt(pos, "", CodeInvalidUTF8, "the file is not valid UTF-8 (first bad byte here); YAML and JSON sources must be UTF-8")
}
