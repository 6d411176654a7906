package main

// The printed report: three markdown tables (the totals per workflow,
// where the bytes go, and the amortised comparison over K runs), in a
// fixed order so that docs/performance.md can hold the output verbatim and a test
// can compare them.

import (
	"fmt"
	"io"
	"strings"
)

// Runs are the K of the amortised table (the paper's Table 5 has 1 to 365).
var Runs = []int{1, 10, 365}

// Result is one measured scenario.
type Result struct {
	Scenario Scenario
	Counts   Counts
}

// WriteTables writes the report for results, in order.
func WriteTables(w io.Writer, results []Result) {
	fmt.Fprintln(w, "Tokens through an agent's context, per workflow (1 token = 4 bytes of JSON or markdown, rounded up):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| workflow | backend calls per run | agent in the loop, per run | one composite call, per run | design loop, once |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|")
	for _, r := range results {
		c := r.Counts
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", r.Scenario.Label, num(c.Calls),
			num(Tokens(c.Loop())), num(Tokens(c.Composite())), num(Tokens(c.Design())))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Where the bytes go (bytes):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| workflow | loop: tool lists | loop: requests | loop: results | call: definition | call: request | call: result | design: guide | design: schema | design: backend tools | design: check + answer | design: save + answer |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, r := range results {
		c := r.Counts
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Scenario.Label,
			num(c.ToolList), num(c.Requests), num(c.Results),
			num(c.Definition), num(c.CallRequest), num(c.CallResult),
			num(c.Guide), num(c.Schema), num(c.BackendTools), num(c.Check+c.CheckAnswer), num(c.Save+c.SaveAnswer))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Amortised over K runs (tokens; vmcp = the design loop once + K composite calls):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| workflow | K | agent in the loop | vmcp | saved |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|")
	for _, r := range results {
		loop, call, design := Tokens(r.Counts.Loop()), Tokens(r.Counts.Composite()), Tokens(r.Counts.Design())
		for _, k := range Runs {
			agent, engine := k*loop, design+k*call
			fmt.Fprintf(w, "| %s | %d | %s | %s | %s |\n", r.Scenario.Label, k, num(agent), num(engine), saved(agent, engine))
		}
	}
}

// saved is the share of the agent's tokens that vmcp saves; negative when
// vmcp costs more (a design loop bigger than a few runs in the loop).
func saved(agent, engine int) string {
	return fmt.Sprintf("%.1f%%", 100*float64(agent-engine)/float64(agent))
}

// num prints n with thousands separators: 1234567 -> 1,234,567.
func num(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + num(-n)
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
