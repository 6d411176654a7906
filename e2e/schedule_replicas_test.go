package e2e

// A schedule on two replicas that share one Postgres database: both
// processes fire every tick, and each tick makes one run (its id is the
// tick's, so the second CreateRun is refused) and one backend call, also
// across a replica killed with SIGKILL and started again.

import (
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/httpapi"
)

const replicaScheduleConfig = `
backends:
  tb: {command: "${TB}", args: [-stamp, -record, "${REC}"]}
state: {store: postgres, url: "${PGURL}", lease: 1s}
schedules:
  - {name: fast, workflow: stamp_one, every: 1s}
compositeTools:
  - name: stamp_one
    description: One stamp per tick
    steps:
      - {id: stamp, tool: tb.stamp, arguments: {label: tick}}
`

func TestScheduleFiresOncePerTickAcrossReplicas(t *testing.T) {
	rs := newReplicaSet(t, replicaScheduleConfig)
	a, b := rs.start(t), rs.start(t)
	// ticks are the ticks both replicas' logs say they fired, and how
	// many of the fires were refused because the other made the run.
	ticks := func(logs ...string) (map[string]bool, int) {
		out, refused := map[string]bool{}, 0
		for _, l := range logs {
			for _, fs := range fires(l) {
				for _, f := range fs {
					out[f[0]] = true
				}
			}
			refused += len(refusedRE.FindAllString(l, -1))
		}
		return out, refused
	}
	// A replica fires every tick, and one of the two makes its run: count
	// the fires, whichever replica won them.
	fired := func(log string) int { return len(fireRE.FindAllString(log, -1)) }
	waitFor(t, "three ticks fired by both replicas", func() bool {
		return fired(a.stderr.String()) >= 3 && fired(b.stderr.String()) >= 3
	})
	killedLog := b.stderr.String()
	b.kill(t)
	time.Sleep(2 * time.Second) // two ticks with A alone
	b = b.restart(t)
	waitFor(t, "three more ticks fired by the restarted replica", func() bool { return fired(b.stderr.String()) >= 3 })
	logs := []string{a.stderr.String(), killedLog, b.stderr.String()}

	var list httpapi.RunList
	if code := a.getJSON(t, "/api/v1/runs?trigger=schedule:fast&limit=1000", &list); code != 200 {
		t.Fatalf("GET /api/v1/runs = %d", code)
	}
	firedTicks, refused := ticks(logs...)
	if refused == 0 {
		t.Errorf("no replica's fire was refused; both should fire each tick while both are up:\n%s", strings.Join(logs, "\n"))
	}
	// Every tick either replica fired (and saw through) is one run; no
	// tick made two. The runs the store holds are the ticks' run ids.
	stamps := len(stampTimes(t, rs.rec))
	completed := 0
	for _, r := range list.Runs {
		if r.Status == "completed" {
			completed++
		}
	}
	if len(list.Runs) < len(firedTicks)-1 || len(list.Runs) > len(firedTicks) {
		// The last tick may be fired and its run not yet listed.
		t.Errorf("%d runs of the schedule for %d fired ticks; want one run per tick", len(list.Runs), len(firedTicks))
	}
	if stamps < completed || stamps > len(list.Runs) {
		t.Errorf("the backend was called %d times for %d runs (%d completed); want one call per run", stamps, len(list.Runs), completed)
	}
	t.Logf("%d ticks, %d runs (%d completed), %d backend calls, %d fires refused as the other replica's", len(firedTicks), len(list.Runs), completed, stamps, refused)
}
