package spell

import "testing"

func TestSuggest(t *testing.T) {
	cands := []string{"dependsOn", "condition", "defaultResults", "onError", "id"}
	tests := []struct {
		name, want string
	}{
		{"dependOn", "dependsOn"},
		{"depends_on", "dependsOn"},
		{"depends-on", "dependsOn"},
		{"DependsOn", "dependsOn"},
		{"conditon", "condition"},
		{"onErrors", "onError"},
		{"default", "defaultResults"}, // the start of one candidate
		{"banana", ""},
		{"x", ""},
		{"dependsOn", ""},
	}
	for _, tt := range tests {
		if got := Suggest(tt.name, cands); got != tt.want {
			t.Errorf("Suggest(%q) = %q; want %q", tt.name, got, tt.want)
		}
	}
}

// TestSuggestConfigKeys: vmcp.yaml's keys may be written in snake_case;
// a typo there is measured against the camelCase key.
func TestSuggestConfigKeys(t *testing.T) {
	known := []string{"maxResultBytes", "maxParallel", "perSecond"}
	for _, tt := range []struct{ name, want string }{
		{"max_result_byte", "maxResultBytes"},
		{"maxResultByte", "maxResultBytes"},
		{"per_secnd", "perSecond"},
		{"max", ""}, // the start of two
	} {
		if got := Suggest(tt.name, known); got != tt.want {
			t.Errorf("Suggest(%q) = %q; want %q", tt.name, got, tt.want)
		}
	}
}

func TestSuggestTiesGoToTheFirstInOrder(t *testing.T) {
	if got := Suggest("cat", []string{"hat", "bat"}); got != "bat" {
		t.Errorf("Suggest(cat, [hat bat]) = %q; want bat (sorted first of two at distance 1)", got)
	}
}

func TestDidYouMean(t *testing.T) {
	if got := DidYouMean("scope", []string{"scopes"}); got != "; did you mean scopes?" {
		t.Errorf("DidYouMean(scope) = %q", got)
	}
	if got := DidYouMean("zzz", []string{"scopes"}); got != "" {
		t.Errorf("DidYouMean(zzz) = %q; want empty", got)
	}
}
