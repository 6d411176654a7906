package e2e

// Backend rate limits (backends.NAME.rateLimit) through a real vmcp run
// process and a real backend process that records when each call arrived.

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// stampAllWorkflow stamps every label of its list at once.
const stampAllWorkflow = `  - name: stamp_all
    description: Stamp every label at once
    parameters:
      labels: {type: array, required: true}
    steps:
      - id: each
        type: forEach
        collection: "{{.params.labels}}"
        maxParallel: 20
        step:
          tool: tb.stamp
          arguments: {label: "{{.forEach.item}}"}`

const rateLimitConfig = `
backends:
  tb:
    command: "${TB}"
    args: [-stamp, -record, "${REC}"]
    rateLimit: {perSecond: 10, burst: 2}
  slow:
    command: "${TB}"
    args: [-stamp]
    rateLimit: {perSecond: 0.1, burst: 1}
server: {maxParallel: 50}
compositeTools:
` + stampAllWorkflow + `
  - name: twice_slow
    description: Call the slow backend twice; the second call waits 10s for its turn
    steps:
      - id: first
        tool: slow.stamp
        arguments: {label: first}
      - id: second
        dependsOn: [first]
        tool: slow.stamp
        timeout: 1s
        arguments: {label: second}
`

// TestBackendRateLimitAcrossRuns makes 20 calls to a backend limited to
// 10 a second with a burst of 2, from two runs at once, and checks the
// times the backend recorded: by t after the first call, at most
// burst + 10*t calls (plus one for timing slack) have arrived. It never
// asserts on how long the whole took. A step whose deadline passes
// while it waits for its turn fails with an error naming the limit.
func TestBackendRateLimitAcrossRuns(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "calls.log")
	c, _ := stdioVMCP(t, writeConfig(t, rateLimitConfig, rec))
	var wg sync.WaitGroup
	for run := 0; run < 2; run++ {
		var labels []any
		for i := 0; i < 10; i++ {
			labels = append(labels, fmt.Sprintf("r%d-%d", run, i))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := callTool(t, c, "stamp_all", map[string]any{"labels": labels}, nil)
			if err != nil || res.IsError {
				t.Errorf("stamp_all = %v, %v; want a result", res, err)
			}
		}()
	}
	wg.Wait()
	times := stampTimes(t, rec)
	if len(times) != 20 {
		t.Fatalf("the backend recorded %d calls; want 20", len(times))
	}
	const perSecond, burst = 10.0, 2
	for k, at := range times {
		since := at.Sub(times[0]).Seconds()
		if allowed := burst + int(perSecond*since) + 1; k+1 > allowed {
			t.Errorf("%d calls had arrived %.3fs after the first; a 10/s burst-2 limit allows at most %d (with one for slack)", k+1, since, allowed)
		}
	}

	res, err := callTool(t, c, "twice_slow", nil, nil)
	if err != nil {
		t.Fatalf("twice_slow: %v", err)
	}
	text := testenv.ResultText(res)
	want := `waiting for backend "slow"'s rate limit (backends.slow.rateLimit: 0.1 per second, burst 1): the step's deadline would pass before its turn`
	if !res.IsError || !strings.Contains(text, want) {
		t.Errorf("twice_slow = %s (isError %v); want an error containing %q", text, res.IsError, want)
	}
}

// stampTimes reads the times of the stamp lines the test backend
// recorded, sorted.
func stampTimes(t *testing.T, rec string) []time.Time {
	t.Helper()
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	var out []time.Time
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "stamp" {
			continue
		}
		ns, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			t.Fatalf("record line %q: %v", line, err)
		}
		out = append(out, time.Unix(0, ns))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}
