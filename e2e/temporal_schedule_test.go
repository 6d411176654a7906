package e2e

// Schedules with executor: temporal are Temporal Schedules
// (temporalrun/schedules.go), against a real dev server, a real worker and
// two real vmcp run processes on one task queue (each with its own SQLite
// store): every tick makes exactly one Temporal workflow and one backend
// call, both processes record every run (owned by and triggered by
// schedule:NAME), ticks fired while no vmcp run is up are recorded by the
// next one, and a schedule taken out of vmcp.yaml is deleted from
// Temporal at the next start.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/temporalrun"
)

// Ports of these tests: 17750-17769 (the tracing tests on Temporal take 17780-17799).
const tschedLo, tschedHi = 17750, 17769

const tickWorkflow = `
  - name: tick
    description: one call per tick
    parameters: {label: {type: string, required: true}}
    steps:
      - id: call
        tool: g.step
        arguments: {label: "{{.params.label}}"}
`

func TestTemporalSchedulesFireOncePerTick(t *testing.T) {
	ts := testenv.StartTemporal(t, tschedLo, tschedHi)
	g := startGateBackendIn(t, tschedLo, tschedHi)
	schedules := `
state: {store: sqlite, path: state.db}
schedules:
  - {name: fast, workflow: tick, every: 1s, arguments: {label: fast}}`
	cfgA := temporalConfig(t, ts.Address, g.url, tickWorkflow, schedules)
	text, err := os.ReadFile(cfgA)
	if err != nil {
		t.Fatal(err)
	}
	cfgB := writeConfig(t, string(text), "") // the same queue, another store
	startWorker(t, cfgA, "w1")
	t.Setenv("VMCP_WORKER", "vmcp-run")
	addr := func() string { return fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, tschedLo, tschedHi)) }
	a, b := startVMCPHTTP(t, cfgA, addr()), startVMCPHTTP(t, cfgB, addr())

	queue := queueOf(t, string(text))
	id := temporalrun.ScheduleID(queue, "fast")
	tc, err := client.Dial(client.Options{HostPort: ts.Address, Logger: tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()

	// scheduledRuns are the completed runs of the schedule a vmcp records.
	scheduledRuns := func(v *vmcpHTTP) map[string]bool {
		out := map[string]bool{}
		for _, r := range v.runs(t) {
			if r["trigger"] == "schedule:fast" && r["status"] == "completed" {
				out[r["id"].(string)] = true
			}
		}
		return out
	}
	waitFor(t, "four completed scheduled runs in both processes", func() bool {
		return len(scheduledRuns(a)) >= 4 && len(scheduledRuns(b)) >= 4
	})
	run := a.run(t, firstKey(scheduledRuns(a)))
	if run["owner"] != "schedule:fast" || !strings.HasPrefix(fmt.Sprint(run["id"]), id+"-") {
		t.Errorf("a scheduled run = id %v owner %v; want id %s-TIMESTAMP, owner schedule:fast", run["id"], run["owner"], id)
	}

	// While no vmcp run is up the Schedule goes on firing; the next vmcp
	// run records those runs too.
	a.kill(t)
	b.kill(t)
	down := time.Now()
	waitFor(t, "two ticks fired while no vmcp run is up", func() bool {
		return len(firedSince(t, tc, id, down)) >= 2
	})
	whileDown := firedSince(t, tc, id, down)
	a = startVMCPHTTP(t, cfgA, addr())
	waitFor(t, "the ticks fired while vmcp was down, recorded", func() bool {
		got := scheduledRuns(a)
		for _, w := range whileDown {
			if !got[w] {
				return false
			}
		}
		return true
	})
	a.kill(t)

	// Exactly once: one workflow per scheduled time, one backend call per
	// workflow (the worker's calls say so).
	all := firedSince(t, tc, id, time.Time{})
	seen := map[string]string{}
	for _, w := range all {
		tick := strings.TrimPrefix(w, id+"-")
		if prev, dup := seen[tick]; dup {
			t.Errorf("tick %s fired twice: %s and %s", tick, prev, w)
		}
		seen[tick] = w
	}
	t.Logf("%d workflows fired, %d while no vmcp run was up", len(all), len(whileDown))
	waitFor(t, "every fired workflow's call", func() bool { return g.countOf("fast") >= len(all) })
	if calls := g.countOf("fast"); calls != len(all) && calls != len(all)+1 {
		// +1: a tick may fire after the list above was read.
		t.Errorf("the backend got %d calls for %d fired workflows; want one per workflow", calls, len(all))
	}

	// Out of vmcp.yaml, out of Temporal.
	cfgNone := writeConfig(t, strings.Replace(string(text), "schedules:\n  - {name: fast, workflow: tick, every: 1s, arguments: {label: fast}}", "", 1), "")
	c := startVMCPHTTP(t, cfgNone, addr())
	waitFor(t, "the Temporal Schedule deleted", func() bool {
		_, err := tc.ScheduleClient().GetHandle(context.Background(), id).Describe(context.Background())
		var nf *serviceerror.NotFound
		return errors.As(err, &nf)
	})
	if !strings.Contains(c.stderr.String(), "Temporal Schedule deleted") {
		t.Errorf("vmcp run did not log the deletion:\n%s", c.stderr.String())
	}
}

// firedSince lists the workflows Schedule id started at or after since,
// by workflow id.
func firedSince(t *testing.T, tc client.Client, id string, since time.Time) []string {
	t.Helper()
	q := fmt.Sprintf("TemporalScheduledById = '%s'", id)
	if !since.IsZero() {
		q += fmt.Sprintf(" AND StartTime >= '%s'", since.UTC().Format(time.RFC3339Nano))
	}
	var ids []string
	var token []byte
	for {
		resp, err := tc.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: q, NextPageToken: token})
		if err != nil {
			t.Fatalf("listing the scheduled workflows: %v", err)
		}
		for _, e := range resp.GetExecutions() {
			ids = append(ids, e.GetExecution().GetWorkflowId())
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			sort.Strings(ids)
			return ids
		}
	}
}

// queueOf is the task queue a temporalConfig text names.
func queueOf(t *testing.T, cfg string) string {
	t.Helper()
	_, rest, ok := strings.Cut(cfg, "taskQueue: \"")
	if !ok {
		t.Fatalf("no taskQueue in\n%s", cfg)
	}
	q, _, _ := strings.Cut(rest, "\"")
	return q
}

func firstKey(m map[string]bool) string {
	for k := range m {
		return k
	}
	return ""
}
