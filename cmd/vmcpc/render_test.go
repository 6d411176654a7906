package main

import "testing"

func TestDotID(t *testing.T) {
	tests := []struct{ in, want string }{
		{"fetch_logs", `"fetch_logs"`},
		{`say "hi"`, `"say \"hi\""`},
		{`back\slash`, `"back\\slash"`},
		{"two\nlines", `"two\nlines"`},
	}
	for _, tc := range tests {
		if got := dotID(tc.in); got != tc.want {
			t.Errorf("dotID(%q) = %s; want %s", tc.in, got, tc.want)
		}
	}
}

func TestMermaidText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"logs.fetch_logs", "logs.fetch_logs"},
		{`a "quoted" <b>`, "a #quot;quoted#quot; #lt;b#gt;"},
		{"two\nlines", "two lines"},
	}
	for _, tc := range tests {
		if got := mermaidText(tc.in); got != tc.want {
			t.Errorf("mermaidText(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestFirstLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"one line", "one line"},
		{"  Process data:\n  - fetch\n", "Process data:"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := firstLine(tc.in); got != tc.want {
			t.Errorf("firstLine(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}
