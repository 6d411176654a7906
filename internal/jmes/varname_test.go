package jmes

import "testing"

func TestIsVarName(t *testing.T) {
	for name, want := range map[string]bool{
		"roles": true, "_x": true, "a1_b2": true, "Items": true,
		"": false, "1a": false, "a-b": false, "a.b": false, "$a": false, "é": false, "a b": false,
	} {
		if got := IsVarName(name); got != want {
			t.Errorf("IsVarName(%q) = %v; want %v", name, got, want)
		}
	}
}
