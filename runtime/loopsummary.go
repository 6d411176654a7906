package runtime

// LoopSummary reads a forEach step's counts back from its output
// (ir.ForEachOutputFields: {iterations, count, completed, failed,
// skipped}), for the places that report a run (the MCP result's timeline,
// vmcp_workflow_run's report).

import "github.com/vmcp-dev/vmcp/ir"

// LoopCounts counts a forEach step's iterations: Count items, of which
// Completed ran to the end, Failed failed and Skipped did not run (their
// condition was false, or the loop stopped first).
type LoopCounts struct {
	Count     int64 `json:"count"`
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
	Skipped   int64 `json:"skipped"`
}

// LoopSummary returns the counts of out when it is a forEach step's
// output: an object with exactly ir.ForEachOutputFields, iterations an array and
// the counts numbers (int64 as the engine makes them, float64 once they
// crossed JSON, as on Temporal or from a store).
func LoopSummary(out any) (LoopCounts, bool) {
	m, ok := out.(map[string]any)
	if !ok || len(m) != len(ir.ForEachOutputFields) {
		return LoopCounts{}, false
	}
	if _, ok := m["iterations"].([]any); !ok {
		return LoopCounts{}, false
	}
	var lc LoopCounts
	for key, dst := range map[string]*int64{"count": &lc.Count, "completed": &lc.Completed, "failed": &lc.Failed, "skipped": &lc.Skipped} {
		n, ok := wholeNumber(m[key])
		if !ok {
			return LoopCounts{}, false
		}
		*dst = n
	}
	return lc, true
}

// wholeNumber reads a count that is an int64, an int or a whole float64.
func wholeNumber(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	}
	return 0, false
}
