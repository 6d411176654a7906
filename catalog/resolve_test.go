package catalog

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/ir"
)

func TestResolve(t *testing.T) {
	c := New()
	c.Backends["a"] = &Backend{Tools: []*Tool{{Name: "echo"}, {Name: "b_c"}}}
	c.Backends["a_b"] = &Backend{Tools: []*Tool{{Name: "c"}}}
	c.Backends["docs"] = &Backend{Tools: []*Tool{{Name: "echo"}, {Name: "search"}}}
	c.Backends["x"] = &Backend{Tools: []*Tool{{Name: "a_b_c"}}}
	for _, tt := range []struct {
		ref  string
		want []string
	}{
		{"search", []string{"docs.search"}},
		{"docs_search", []string{"docs.search"}},
		{"echo", []string{"a.echo", "docs.echo"}},
		{"a_echo", []string{"a.echo"}},
		// a's b_c, a_b's c and x's bare a_b_c all answer to a_b_c.
		{"a_b_c", []string{"a.b_c", "a_b.c", "x.a_b_c"}},
		{"nope", nil},
		{"docs_", nil},
		{"", nil},
	} {
		var got []string
		for _, m := range c.Resolve(tt.ref) {
			got = append(got, m.String())
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Resolve(%q) differs (-want +got):\n%s", tt.ref, diff)
		}
	}
	var nilCat *Catalog
	if got := nilCat.Resolve("echo"); got != nil {
		t.Errorf("a nil catalog resolved echo to %v", got)
	}
}

func TestAnnotationsRoundTrip(t *testing.T) {
	yes, no := true, false
	c := New()
	c.Backends["ev"] = &Backend{Tools: []*Tool{
		{Name: "read", Annotations: &ir.Annotations{Title: "Read", ReadOnlyHint: &yes, OpenWorldHint: &no}},
		{Name: "unknown"},
	}}
	data, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Read(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, got); diff != "" {
		t.Errorf("Read(Encode(c)) differs (-want +got):\n%s", diff)
	}
	if tool, _ := got.Tool("ev", "unknown"); tool.Annotations != nil {
		t.Errorf("a tool without annotations read back as %s", fmt.Sprint(*tool.Annotations))
	}
}
