package spell

// "Did you mean": the one policy for suggesting a valid name in place of
// a mistyped one, in the compiler's diagnostics (checker) and in
// vmcp.yaml's (config).
//
// Names are compared folded: in lower case, without '_' and '-', so a
// name that differs from a candidate only in its case or its separators
// (max_retries, max-retries, MaxRetries for maxRetries) is at distance 0. A candidate is suggested when the Levenshtein distance
// (Distance) between the folded names is under 3 and smaller than the
// name itself (so "x" does not "mean" every other one-letter name).
// Among equally close candidates the first in sorted order wins, so
// suggestions are deterministic. When nothing is that close, a name of
// three or more characters that is the start of exactly one candidate
// ("incident" for incident_id) suggests that candidate. The name itself
// is never suggested.

import (
	"sort"
	"strings"
)

// maxDistance is the largest edit distance still worth suggesting.
const maxDistance = 2

// fold is s in the spelling Suggest compares: lower case, without the
// separators '_' and '-'.
func fold(s string) string { return separators.Replace(strings.ToLower(s)) }

var separators = strings.NewReplacer("_", "", "-", "")

// Suggest returns the candidate closest to name, or "" when none is close
// enough (see the top of the file).
func Suggest(name string, candidates []string) string {
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	folded := fold(name)
	best, bestDist := "", maxDistance+1
	for _, c := range sorted {
		if c == name || c == "" {
			continue
		}
		if d := Distance(folded, fold(c)); d < bestDist && d < len([]rune(name)) {
			best, bestDist = c, d
		}
	}
	if best != "" || len(name) < 3 {
		return best
	}
	var prefixed []string
	for _, c := range sorted {
		if c != name && strings.HasPrefix(fold(c), folded) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	return ""
}

// DidYouMean is Suggest as a message suffix, "; did you mean X?", or ""
// when nothing is close.
func DidYouMean(name string, candidates []string) string {
	if s := Suggest(name, candidates); s != "" {
		return "; did you mean " + s + "?"
	}
	return ""
}
