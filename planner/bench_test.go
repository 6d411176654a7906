package planner

import (
	"fmt"
	"testing"

	"github.com/vmcp-dev/vmcp/ir"
)

// chainOfFans returns specs for n steps (n a multiple of 5): blocks of a
// hub, three fan steps and a join, each block after the previous join.
func chainOfFans(n int) []spec {
	var specs []spec
	prev := ""
	for b := 0; b*5 < n; b++ {
		hub := fmt.Sprintf("hub%d", b)
		if prev == "" {
			specs = append(specs, spec(hub))
		} else {
			specs = append(specs, spec(hub+"<-"+prev))
		}
		for f := 0; f < 3; f++ {
			specs = append(specs, spec(fmt.Sprintf("fan%d_%d<-%s", b, f, hub)))
		}
		join := fmt.Sprintf("join%d", b)
		specs = append(specs, spec(fmt.Sprintf("%s<-fan%d_0,fan%d_1,fan%d_2", join, b, b, b)))
		prev = join
	}
	return specs
}

// BenchmarkPlan measures the planner alone on chain-of-fan shapes.
func BenchmarkPlan(b *testing.B) {
	for _, n := range []int{10, 100} {
		specs := chainOfFans(n)
		b.Run(fmt.Sprintf("steps=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				w := build(b, specs...)
				b.StartTimer()
				if _, diags := Plan([]*ir.Workflow{w}); len(diags) != 0 {
					b.Fatal(diags)
				}
			}
		})
	}
}
