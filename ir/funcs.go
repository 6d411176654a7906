package ir

// Template functions. The checker parses templates against these names
// and the runtime implements exactly these, so the two cannot drift: a
// name added here without an implementation fails the runtime's tests.

// Workflow template functions, on top of text/template's built-ins.
const (
	FuncJSON     = "json"     // encode a value as JSON text
	FuncFromJSON = "fromJson" // decode JSON text into a value
	FuncQuote    = "quote"    // a value as a JSON string literal
	FuncQuery    = "query"    // query EXPR VALUE [NAME VALUE]...: JMESPath over any value, named inputs as $NAME
)

// TemplateFuncs are the workflow functions, sorted.
var TemplateFuncs = []string{FuncFromJSON, FuncJSON, FuncQuery, FuncQuote}

// TemplateBuiltins are text/template's predefined functions, sorted. The
// runtime replaces the comparison functions (eq, ne, lt, le, gt, ge) with
// versions that compare numbers by value whatever their Go type.
var TemplateBuiltins = []string{"and", "call", "eq", "ge", "gt", "html", "index", "js", "le", "len", "lt", "ne", "not", "or", "print", "printf", "println", "slice", "urlquery"}
