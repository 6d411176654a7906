package parser

import "github.com/vmcp-dev/vmcp/ir"

// File is one parsed source file. It may hold several workflows (a
// multi-document stream, or a config with a compositeTools list).
type File struct {
	Name string // as given to Parse, forward slashes
	Src  []byte
	// Workflows in source order.
	Workflows []*Workflow
	// Skipped lists documents that are not composite-tool definitions
	// (MCPServer, VirtualMCPServer, ...), so vmcpc -v can say so.
	Skipped []Skipped
	// Unknown lists mapping keys that are not fields of the object they sit
	// in, for the checker to report with a "did you mean" hint.
	Unknown []UnknownKey
}

// Skipped is a document of another kind.
type Skipped struct {
	Kind string
	Name string // metadata.name, when present
	Pos  ir.Pos
}

// UnknownKey is a key that names no field of its object.
type UnknownKey struct {
	Key    string
	Pos    ir.Pos // of the key
	Path   string // YAML path of the key, e.g. steps[1].dependOn
	Object string // what the object is: "workflow", "step", "onError", ...
	Known  []string
}

// Workflow is one composite-tool definition. Every field is the raw node
// (nil when absent); the checker validates types and values. Keys were
// matched in camelCase and snake_case, so the fields hold either spelling.
type Workflow struct {
	Node *Node // the whole mapping (for a Kubernetes document: spec)
	// Doc is the 0-based index of the YAML document in the stream.
	Doc int
	// Resource is metadata.name of a Kubernetes document, else empty.
	Resource string

	Name        *Node
	Description *Node
	Parameters  *Node
	Timeout     *Node
	FailureMode *Node
	MaxParallel *Node
	Vars        *Node
	Output      *Output
	Annotations *Node
	StepsNode   *Node // the steps sequence itself
	Steps       []*Step
	// FinallyNode is the finally sequence itself (nil when absent), and
	// Finally its steps: they run after every other step has ended.
	FinallyNode *Node
	Finally     []*Step
}

// Step is one entry of a steps list, or the inner step of a forEach.
type Step struct {
	Node *Node // the whole mapping

	ID             *Node
	Type           *Node
	Tool           *Node
	Arguments      *Node
	DependsOn      *Node
	Condition      *Node
	OnError        *OnError
	Timeout        *Node
	DefaultResults *Node
	// Idempotent is idempotent: (a boolean): calling the step again after
	// a crash has the same effect as calling it once.
	Idempotent *Node

	// Elicitation.
	Message   *Node
	Schema    *Node
	OnDecline *Response
	OnCancel  *Response

	// ForEach.
	Collection    *Node
	ItemVar       *Node
	MaxParallel   *Node
	MaxIterations *Node
	Inner         *Step // the forEach's step:
	// StepsNode is the forEach's steps: sequence (its body), nil when
	// absent; Body holds its steps and Output the loop's output:, which
	// shapes each iteration's output.
	StepsNode *Node
	Body      []*Step
	Output    *Output

	// Workflow steps (arguments are shared with tool steps).
	Workflow *Node
}

// OnError is a step's error policy.
type OnError struct {
	Node       *Node
	Action     *Node
	MaxRetries *Node // maxRetries, max_retries, retryCount or retry_count
	RetryDelay *Node
	// Retry tuning, for action retry.
	MaxDelay       *Node
	Multiplier     *Node
	AttemptTimeout *Node
	RetryOn        *Node
}

// Response is an onDecline or onCancel handler.
type Response struct {
	Node   *Node
	Action *Node
}

// Output is the composite tool's output declaration.
type Output struct {
	Node       *Node
	Properties []*OutputProperty
	Required   *Node
	// PropertiesNode is the properties value itself (nil when absent), so
	// the checker can report one that is not a mapping.
	PropertiesNode *Node
}

// OutputProperty is one declared output field.
type OutputProperty struct {
	Name        string
	Node        *Node // the property's mapping; Node.Pos is where it starts
	KeyPos      ir.Pos
	Type        *Node
	Description *Node
	Value       *Node
	Default     *Node
	Properties  []*OutputProperty
	Required    *Node
	// PropertiesNode is the properties value itself (nil when absent).
	PropertiesNode *Node
}

// Kind is the kind of a Node.
type Kind int

const (
	Null Kind = iota
	Bool
	Int
	Float
	String
	Map
	Seq
)

func (k Kind) String() string {
	return [...]string{"null", "boolean", "integer", "number", "string", "mapping", "sequence"}[k]
}

// Style is how a string scalar was written; it decides how an offset inside
// the value maps back to a file position.
type Style int

const (
	Plain Style = iota
	SingleQuoted
	DoubleQuoted
	Literal // |
	Folded  // >
)

// Node is a YAML value with its position and path. Scalars hold their Go
// value in Value: nil, bool, int64, float64 or string.
type Node struct {
	Kind  Kind
	Pos   ir.Pos // where the value starts (for quoted strings, the quote)
	Path  string // YAML path, e.g. steps[2].arguments.body
	Value any
	Style Style
	// Fields of a mapping, in source order.
	Fields []*Field
	// Items of a sequence.
	Items []*Node

	// lines maps the string value back to the file for OffsetPos
	// (ir.Segment, the table the compiler carries into ir.Template).
	lines []ir.Segment
}

// Field is one key/value pair of a mapping.
type Field struct {
	Key    string
	KeyPos ir.Pos
	Value  *Node
}

// Str returns the string value and whether the node is a string.
func (n *Node) Str() (string, bool) {
	if n == nil || n.Kind != String {
		return "", false
	}
	s, ok := n.Value.(string)
	return s, ok
}

// Get returns the value of the mapping field key, or nil.
func (n *Node) Get(key string) *Node {
	if n == nil {
		return nil
	}
	for _, f := range n.Fields {
		if f.Key == key {
			return f.Value
		}
	}
	return nil
}

// OffsetPos returns the file position of the byte at offset off of a string
// value, so that an error inside a template points at the exact column,
// for plain, quoted and block scalars alike. Columns count runes. The
// mapping is ir.OffsetPos, which the runtime uses too.
func (n *Node) OffsetPos(off int) ir.Pos {
	if n == nil {
		return ir.Pos{}
	}
	if len(n.lines) == 0 {
		return n.Pos
	}
	s, _ := n.Value.(string)
	return ir.OffsetPos(n.Pos.File, n.lines, s, off)
}

// Segments returns the table that maps the string value back to the file,
// for ir.Template.Segments: nil when the value is one run of the file's
// text from OffsetPos(0), which is all a template without segments means.
func (n *Node) Segments() []ir.Segment {
	if n == nil || len(n.lines) <= 1 {
		return nil
	}
	return n.lines
}

// Interface converts the node to plain Go data: map[string]any, []any,
// string, bool, int64, float64 or nil.
func (n *Node) Interface() any {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case Map:
		m := make(map[string]any, len(n.Fields))
		for _, f := range n.Fields {
			m[f.Key] = f.Value.Interface()
		}
		return m
	case Seq:
		s := make([]any, len(n.Items))
		for i, it := range n.Items {
			s[i] = it.Interface()
		}
		return s
	}
	return n.Value
}
