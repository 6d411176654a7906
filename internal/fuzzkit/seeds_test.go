package fuzzkit

import (
	"strings"
	"testing"
)

// TestSplit: one seed per workflow, each with the keys that lead to the
// list; a file without a workflow list is one seed; no seed is longer
// than MaxSize.
func TestSplit(t *testing.T) {
	src := "# about X\nkind: X\nspec:\n  compositeTools:\n    - name: a\n      steps: []\n    - name: b\n      parameters:\n        - name: p\n"
	got := Split([]byte(src))
	want := []string{
		"kind: X\nspec:\n  compositeTools:\n    - name: a\n      steps: []\n",
		"kind: X\nspec:\n  compositeTools:\n    - name: b\n      parameters:\n        - name: p\n",
	}
	if len(got) != len(want) {
		t.Fatalf("Split = %q; want %q", got, want)
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("seed %d = %q; want %q", i, got[i], want[i])
		}
	}
	if got := Split([]byte("name: a # the name\nsteps: []\n")); len(got) != 1 || string(got[0]) != "name: a # the name\nsteps: []\n" {
		t.Errorf("Split of a single workflow = %q; want the file", got)
	}
	long := strings.Repeat("key: value\n", 1000)
	if got := Split([]byte(long)); len(got) != 1 || len(got[0]) > MaxSize || !strings.HasSuffix(string(got[0]), "\n") {
		t.Errorf("Split of %d bytes = one seed of %d bytes; want one of at most %d ending a line", len(long), len(got[0]), MaxSize)
	}
}

// TestGoText: a message with Go's rendering of a value is caught, unless
// the input holds the same text.
func TestGoText(t *testing.T) {
	for _, tc := range []struct{ msg, input, want string }{
		{"unknown step map[a:1]", "steps: []", "map["},
		{"workflow w could not start: <nil>", "", "<nil>"},
		{`unknown step "map[x"`, "dependsOn: [map[x]", ""},
		{`unknown step "fetch": did you mean "fetch_logs"?`, "", ""},
	} {
		if got := GoText(tc.msg, tc.input); got != tc.want {
			t.Errorf("GoText(%q, %q) = %q; want %q", tc.msg, tc.input, got, tc.want)
		}
	}
}
