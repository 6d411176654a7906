package e2e

// Schedules through real vmcp run processes: `every: 1s` and `every: 2s`
// schedules fire runs owned by schedule:NAME, the process is stopped and
// started again on the same SQLite store, and across the restart no tick
// fires twice; the schedule with catchUp runs its missed tick once at
// startup, the one without only logs it. A schedule naming an unknown
// workflow, or arguments the workflow does not take, stops vmcp at
// startup with the config's position.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/testenv"
)

// schedPortLo and schedPortHi are this file's ports.
const schedPortLo, schedPortHi = 17500, 17549

const scheduleConfig = `
backends:
  tb: {command: "${TB}"}
state: {store: sqlite, path: "${DIR}/state.db"}
schedules:
  - name: fast
    workflow: ping
    every: 1s
    arguments: {label: fast}
  - name: slow
    workflow: ping
    every: 2s
    catchUp: true
    arguments: {label: slow}
compositeTools:
  - name: ping
    description: Echo the label
    parameters:
      label: {type: string, required: true}
    steps:
      - id: echo
        tool: tb.echo
        arguments: {text: "{{.params.label}}"}
`

// fireRE matches a "schedule fired" log line.
var fireRE = regexp.MustCompile(`msg="schedule fired" schedule=(\S+) tick=(\S+) run=(\S+)`)

// refusedRE matches the line of a fired tick whose run did not start (a
// tick as the shutdown begins).
var refusedRE = regexp.MustCompile(`msg="schedule's run did not start" schedule=\S+ tick=\S+ run=(\S+)`)

// fires are the ticks and run ids a vmcp's log says it fired, by schedule,
// less those whose run did not start.
func fires(log string) map[string][][2]string {
	refused := map[string]bool{}
	for _, m := range refusedRE.FindAllStringSubmatch(log, -1) {
		refused[m[1]] = true
	}
	out := map[string][][2]string{}
	for _, m := range fireRE.FindAllStringSubmatch(log, -1) {
		if !refused[m[3]] {
			out[m[1]] = append(out[m[1]], [2]string{m[2], m[3]})
		}
	}
	return out
}

func TestSchedulesAcrossARestart(t *testing.T) {
	cfg := writeConfig(t, scheduleConfig, "")
	_, log1, stop := startHTTPVMCP(t, cfg, schedPortLo, schedPortHi)
	waitFor(t, "both schedules to fire twice", func() bool {
		f := fires(log1.String())
		return len(f["fast"]) >= 2 && len(f["slow"]) >= 2
	})
	stop()
	first := fires(log1.String())
	// Down for longer than a tick of each: the tick after slow's last
	// run is past when vmcp starts again.
	lastSlow, err := time.Parse(time.RFC3339Nano, first["slow"][len(first["slow"])-1][0])
	if err != nil {
		t.Fatal(err)
	}
	for time.Now().Before(lastSlow.Add(2*2*time.Second + 100*time.Millisecond)) {
		time.Sleep(50 * time.Millisecond)
	}

	_, log2, stop := startHTTPVMCP(t, cfg, schedPortLo, schedPortHi)
	waitFor(t, "slow's catch-up and fast's missed ticks to be logged", func() bool {
		l := log2.String()
		return strings.Contains(l, `msg="schedule catching up a tick missed while vmcp was down" schedule=slow`) &&
			strings.Contains(l, `msg="schedule missed ticks while vmcp was down; not caught up (catchUp: false)" schedule=fast`)
	})
	waitFor(t, "fast to fire twice after the restart", func() bool { return len(fires(log2.String())["fast"]) >= 2 })
	stop()
	second := fires(log2.String())
	if n := strings.Count(log2.String(), "schedule catching up"); n != 1 {
		t.Errorf("%d catch-up lines after the restart; want 1 (slow's missed ticks run once)", n)
	}

	// No tick fired twice, across both processes, and each fire is one
	// run in the store, owned by and triggered by its schedule: read the
	// SQLite file once both processes are gone.
	out, errOut, code := run(t, time.Minute, filepath.Dir(cfg), bins.vmcp, "runs", "list", "--db", filepath.Join(filepath.Dir(cfg), "state.db"), "--limit", "1000", "--json")
	var list httpapi.RunList
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil {
		t.Fatalf("vmcp runs list --db = %d %s %s", code, out, errOut)
	}
	stored := map[string]httpapi.RunSummary{}
	for _, r := range list.Runs {
		stored[r.ID] = r
	}
	total := 0
	for _, name := range []string{"fast", "slow"} {
		seen := map[string]bool{}
		for _, f := range append(first[name], second[name]...) {
			tick, id := f[0], f[1]
			if seen[tick] {
				t.Errorf("schedule %s fired tick %s twice", name, tick)
			}
			seen[tick] = true
			r, ok := stored[id]
			switch {
			case !ok:
				t.Errorf("schedule %s's run %s (tick %s) is not in the store", name, id, tick)
			case r.Trigger != "schedule:"+name || r.Owner != "schedule:"+name || r.Status != "completed":
				t.Errorf("run %s = trigger %q, owner %q, %s; want trigger and owner schedule:%s, completed", id, r.Trigger, r.Owner, r.Status, name)
			}
			total++
		}
	}
	if len(list.Runs) != total {
		t.Errorf("the store has %d runs of ping; the logs fired %d", len(list.Runs), total)
	}
	t.Logf("fires: first process fast %d slow %d; second fast %d slow %d (one of them the catch-up)",
		len(first["fast"]), len(first["slow"]), len(second["fast"]), len(second["slow"]))
}

// TestScheduleStartupErrors: a schedule of a workflow that is not served,
// or with arguments its workflow does not take, stops vmcp run at startup
// with the config's file:line:col and the source line.
func TestScheduleStartupErrors(t *testing.T) {
	cases := []struct{ from, to, want string }{
		{"workflow: ping\n    every: 1s", "workflow: pong\n    every: 1s",
			`vmcp.yaml:7:15: error: schedule "fast" runs workflow "pong", which is not served; did you mean ping?`},
		{"arguments: {label: slow}", "arguments: {label: 7}",
			`vmcp.yaml:14:16: error: schedule "slow": the arguments do not match the parameters of workflow "ping": parameter "label" must be string (got number)`},
	}
	for _, c := range cases {
		cfg := writeConfig(t, strings.Replace(scheduleConfig, c.from, c.to, 1), "")
		addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, schedPortLo, schedPortHi))
		_, errOut, code := run(t, 2*time.Minute, filepath.Dir(cfg), bins.vmcp, "run", "--config", "vmcp.yaml", "--transport", "http", "--listen", addr)
		if code != 1 || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "error(s) in the schedules of vmcp.yaml") {
			t.Errorf("vmcp run with %q: exit %d, stderr:\n%s\nwant exit 1 and %q", c.to, code, errOut, c.want)
		}
	}
}
