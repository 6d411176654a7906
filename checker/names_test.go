package checker

import (
	"regexp"
	"testing"
)

// TestNameMatchers checks isName and isIdentifier against the regular
// expressions they implement, on every string of up to three characters
// over an alphabet that exercises each character class.
func TestNameMatchers(t *testing.T) {
	nameRE := regexp.MustCompile(`^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$`)
	identRE := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	alphabet := []string{"a", "z", "A", "Z", "0", "9", "_", "-", ".", " ", "é", "\n", "$"}
	words := []string{""}
	for n, prev := 0, []string{""}; n < 3; n++ {
		var next []string
		for _, p := range prev {
			for _, c := range alphabet {
				next = append(next, p+c)
			}
		}
		words = append(words, next...)
		prev = next
	}
	words = append(words, "my-workflow_2", "fetch_data", "x-", "-x", "Step1", "1step")
	for _, w := range words {
		if got, want := isName(w), nameRE.MatchString(w); got != want {
			t.Errorf("isName(%q) = %v; want %v", w, got, want)
		}
		if got, want := isIdentifier(w), identRE.MatchString(w); got != want {
			t.Errorf("isIdentifier(%q) = %v; want %v", w, got, want)
		}
	}
}
