package authoring

// Samples of step outputs for vmcp_workflow_run. An agent explores the
// backends' data by running drafts; whole outputs cost it most of what it
// reads, so by default a run's report shows each output as a sample that
// keeps its shape and says what it left out:
//
//   - an array keeps its first SampleItems items; when it had more, a last
//     string item says "… N more items (M in all)";
//   - a string longer than SampleChars characters keeps its first
//     SampleChars and ends with "… (M chars in all)";
//   - an object longer than SampleKeys keys keeps its first SampleKeys
//     keys in sorted order and a key "…" says "N more keys (M in all)";
//   - below SampleDepth levels, and once the sample holds SampleValues
//     values, an array or object is replaced by a string naming its size
//     ("[array of 12 items]", "{object of 3 keys}").
//
// Numbers, booleans and null are kept as they are. The walk is one pass
// over the value; it never copies more than it keeps.

import (
	"fmt"
	"sort"
	"unicode/utf8"
)

// The sample rules (see the top of the file); the tool description and
// the guide state the same numbers (TestSampleRulesAreDocumented).
const (
	SampleItems  = 3
	SampleChars  = 200
	SampleKeys   = 30
	SampleDepth  = 8
	SampleValues = 500
)

// Sample returns v as a compact sample and whether anything was left out.
func Sample(v any) (any, bool) {
	s := sampler{left: SampleValues}
	out := s.value(v, 0)
	return out, s.cut
}

// sampler walks one value; left counts down the values it may still keep.
type sampler struct {
	cut  bool
	left int
}

func (s *sampler) value(v any, depth int) any {
	s.left--
	full := depth >= SampleDepth || s.left < 0
	switch x := v.(type) {
	case string:
		return s.text(x)
	case []any:
		if full && len(x) > 0 {
			s.cut = true
			return fmt.Sprintf("[array of %d items]", len(x))
		}
		return s.array(x, depth)
	case map[string]any:
		if full && len(x) > 0 {
			s.cut = true
			return fmt.Sprintf("{object of %d keys}", len(x))
		}
		return s.object(x, depth)
	}
	return v
}

func (s *sampler) text(x string) string {
	if utf8.RuneCountInString(x) <= SampleChars {
		return x
	}
	s.cut = true
	n, end := 0, 0
	for i := range x {
		if n == SampleChars {
			end = i
			break
		}
		n++
	}
	return fmt.Sprintf("%s… (%d chars in all)", x[:end], utf8.RuneCountInString(x))
}

func (s *sampler) array(x []any, depth int) []any {
	keep := min(len(x), SampleItems)
	out := make([]any, 0, keep+1)
	for _, item := range x[:keep] {
		out = append(out, s.value(item, depth+1))
	}
	if len(x) > keep {
		s.cut = true
		out = append(out, fmt.Sprintf("… %d more items (%d in all)", len(x)-keep, len(x)))
	}
	return out
}

func (s *sampler) object(x map[string]any, depth int) map[string]any {
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	keep := min(len(keys), SampleKeys)
	out := make(map[string]any, keep+1)
	for _, k := range keys[:keep] {
		out[k] = s.value(x[k], depth+1)
	}
	if len(keys) > keep {
		s.cut = true
		out["…"] = fmt.Sprintf("%d more keys (%d in all)", len(keys)-keep, len(keys))
	}
	return out
}
