package e2e

// A backend's rate limit shared by two replicas on one Postgres database
// (cmd/vmcp/ratelimits.go): 20 calls split across the two, each replica
// with its own backend process, all recording into one log. Together
// they keep to the configured 10 a second, burst 2 (with two for slack:
// each replica's bucket rounds the burst up); unshared, each would allow
// 10 a second of its own.

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

const sharedRateConfig = `
backends:
  tb:
    command: "${TB}"
    args: [-stamp, -record, "${REC}"]
    rateLimit: {perSecond: 10, burst: 2}
state: {store: postgres, url: "${PGURL}", lease: 1s}
server: {maxParallel: 50}
compositeTools:
` + stampAllWorkflow + `
`

func TestBackendRateLimitSharedByReplicas(t *testing.T) {
	rs := newReplicaSet(t, sharedRateConfig)
	a := rs.start(t)
	b := rs.start(t)
	// A counts again every third of the lease; B counted both at start.
	waitFor(t, "both replicas to share the limit", func() bool {
		return strings.Contains(a.stderr.String(), `msg="backend rate limits shared among replicas" replicas=2`) &&
			strings.Contains(b.stderr.String(), `msg="backend rate limits shared among replicas" replicas=2`)
	})
	var wg sync.WaitGroup
	for i, p := range []*killableVMCP{a, b} {
		c := testenv.HTTPClient(t, p.base+"/mcp")
		var labels []any
		for k := range 10 {
			labels = append(labels, fmt.Sprintf("r%d-%d", i, k))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res, err := callTool(t, c, "stamp_all", map[string]any{"labels": labels}, nil); err != nil || res.IsError {
				t.Errorf("stamp_all on replica %d = %v, %v; want a result", i, res, err)
			}
		}()
	}
	wg.Wait()
	times := stampTimes(t, rs.rec)
	if len(times) != 20 {
		t.Fatalf("the backends recorded %d calls; want 20", len(times))
	}
	const perSecond, burst = 10.0, 2
	for k, at := range times {
		since := at.Sub(times[0]).Seconds()
		if allowed := burst + int(perSecond*since) + 2; k+1 > allowed {
			t.Errorf("%d calls had arrived %.3fs after the first, from both replicas; a shared 10/s burst-2 limit allows at most %d (with two for slack)", k+1, since, allowed)
		}
	}
}
