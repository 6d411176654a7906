package catalog

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEncodeReadRoundTrip(t *testing.T) {
	c := New()
	c.Backends["ev"] = &Backend{Tools: []*Tool{
		{Name: "get-sum", InputSchema: map[string]any{"type": "object", "required": []any{"a", "b"}}},
		{Name: "echo", Description: "echoes", InputSchema: map[string]any{"type": "object"}},
	}}
	c.Backends["memory"] = &Backend{Tools: []*Tool{{Name: "read_graph"}}}
	data, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Read(data)
	if err != nil {
		t.Fatalf("Read(Encode(c)) = %v", err)
	}
	if diff := cmp.Diff(c, got); diff != "" {
		t.Errorf("Read(Encode(c)) differs (-want +got):\n%s", diff)
	}
	if want := []string{"echo", "get-sum"}; !cmp.Equal(got.ToolNames("ev"), want) {
		t.Errorf("ToolNames(ev) = %v; want %v (sorted)", got.ToolNames("ev"), want)
	}
	if want := []string{"ev", "memory"}; !cmp.Equal(got.BackendNames(), want) {
		t.Errorf("BackendNames() = %v; want %v", got.BackendNames(), want)
	}
	if s, ok := got.InputSchema("ev", "get-sum"); !ok || s["type"] != "object" {
		t.Errorf("InputSchema(ev, get-sum) = %v, %v; want the object schema", s, ok)
	}
	if _, ok := got.InputSchema("memory", "read_graph"); ok {
		t.Errorf("InputSchema of a tool without a schema reports ok")
	}
	if _, ok := got.Tool("nope", "echo"); ok {
		t.Errorf("Tool(nope, echo) found a tool of an unknown backend")
	}
	var nilCat *Catalog
	if _, ok := nilCat.Tool("ev", "echo"); ok {
		t.Errorf("a nil catalog found a tool")
	}
}

func TestReadRejects(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{`, "not valid JSON"},
		{`{"version": "vmcp.tools/v0", "backends": {}}`, "run vmcpc tools pull again"},
	} {
		if _, err := Read([]byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Read(%s) error = %v; want it to contain %q", tt.in, err, tt.want)
		}
	}
}
