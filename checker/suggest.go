package checker

// "Did you mean" suggestions.
//
// An unknown name (a field, a step id, a parameter, a backend, ...) is
// compared with every name that would have been valid there using the
// Levenshtein edit distance (internal/spell): the number of single-rune
// insertions, deletions and substitutions that turn one string into the
// other. A candidate
// is suggested when its distance is under 3 and smaller than the name
// itself (so "x" does not "mean" every other one-letter name). Names that
// differ only in case (or in '_' versus '-') count as distance 0. Among
// equally close candidates the first in sorted order wins, so suggestions
// are deterministic. When nothing is that close, a name of three or more
// characters that is the start of exactly one candidate (".params.incident"
// for incident_id) suggests that candidate.

import (
	"sort"
	"strings"

	"github.com/vmcp-dev/vmcp/internal/spell"
)

// maxSuggestDistance is the largest edit distance still worth suggesting.
const maxSuggestDistance = 2

// normalizeName folds the differences that are never meaningful in a typo:
// case and the choice between '-' and '_'.
func normalizeName(s string) string {
	return strings.ReplaceAll(strings.ToLower(s), "-", "_")
}

// suggest returns the candidate closest to name, or "" when none is close
// enough. The name itself is never suggested.
func suggest(name string, candidates []string) string {
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	best, bestDist := "", maxSuggestDistance+1
	for _, c := range sorted {
		if c == name || c == "" {
			continue
		}
		d := spell.Distance(name, c)
		if normalizeName(c) == normalizeName(name) {
			d = 0
		}
		if d < bestDist && d < len([]rune(name)) {
			best, bestDist = c, d
		}
	}
	if best != "" || len(name) < 3 {
		return best
	}
	var prefixed []string
	for _, c := range sorted {
		if c != name && strings.HasPrefix(normalizeName(c), normalizeName(name)) {
			prefixed = append(prefixed, c)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	return ""
}

// didYouMean formats a suggestion as a message suffix: "; did you mean X?"
// or "" when there is nothing close.
func didYouMean(name string, candidates []string) string {
	if s := suggest(name, candidates); s != "" {
		return "; did you mean " + s + "?"
	}
	return ""
}
