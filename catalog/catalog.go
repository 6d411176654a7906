package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/vmcp-dev/vmcp/ir"
)

// Version identifies the lock file layout.
const Version = "vmcp.tools/v1"

// Catalog maps backend names to their tools.
type Catalog struct {
	Version  string              `json:"version"`
	Backends map[string]*Backend `json:"backends"`
}

// Backend is one backend server's tool list.
type Backend struct {
	Tools []*Tool `json:"tools"`
}

// Tool is one backend tool.
type Tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	InputSchema map[string]any `json:"inputSchema"`
	// OutputSchema is the JSON Schema of the tool's structuredContent, when
	// the backend declares one (nil otherwise).
	OutputSchema map[string]any `json:"outputSchema,omitempty"`
	// Annotations are the MCP tool annotations the backend declares; nil
	// (or a nil hint) means the backend did not say. They are the type a
	// workflow advertises (its Derived list is a workflow's, empty here).
	Annotations *ir.Annotations `json:"annotations,omitempty"`
}

// New returns an empty catalog.
func New() *Catalog { return &Catalog{Version: Version, Backends: map[string]*Backend{}} }

// Tool returns the named tool of a backend and whether both exist.
func (c *Catalog) Tool(backend, name string) (*Tool, bool) {
	if c == nil {
		return nil, false
	}
	b, ok := c.Backends[backend]
	if !ok {
		return nil, false
	}
	for _, t := range b.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// InputSchema implements runtime.SchemaSource.
func (c *Catalog) InputSchema(backend, tool string) (map[string]any, bool) {
	t, ok := c.Tool(backend, tool)
	if !ok || t.InputSchema == nil {
		return nil, false
	}
	return t.InputSchema, true
}

// BackendNames returns the backend names, sorted.
func (c *Catalog) BackendNames() []string {
	names := make([]string, 0, len(c.Backends))
	for n := range c.Backends {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ToolNames returns the tool names of a backend, sorted.
func (c *Catalog) ToolNames(backend string) []string {
	b, ok := c.Backends[backend]
	if !ok {
		return nil
	}
	names := make([]string, 0, len(b.Tools))
	for _, t := range b.Tools {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	return names
}

// Encode writes the catalog as indented JSON, tools sorted by name, so the
// lock file diffs cleanly.
func (c *Catalog) Encode() ([]byte, error) {
	for _, b := range c.Backends {
		sort.Slice(b.Tools, func(i, j int) bool { return b.Tools[i].Name < b.Tools[j].Name })
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Read parses a lock file written by Encode.
func Read(data []byte) (*Catalog, error) {
	var c Catalog
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("tool lock file is not valid JSON: %w", err)
	}
	if c.Version != Version {
		return nil, fmt.Errorf("tool lock file version %q is not supported (want %q); run vmcpc tools pull again", c.Version, Version)
	}
	if c.Backends == nil {
		c.Backends = map[string]*Backend{}
	}
	return &c, nil
}
