package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/postgres"
)

// Ports of this test's cluster: 17040-17049.
const runsPGLo, runsPGHi = 17040, 17049

// TestRunsOnPostgres: `vmcp runs list` and `show` with --db naming the
// postgres database that replicas share, on a real throwaway cluster; a
// run another replica still runs is listed as running, and nothing is
// taken over by reading.
func TestRunsOnPostgres(t *testing.T) {
	url := testenv.StartPostgres(t, runsPGLo, runsPGHi, testenv.PostgresOptions{}).NewDatabase(t)
	ctx := context.Background()
	s, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	done := &runtime.Run{ID: "done", Workflow: "sync", Owner: "ada", Status: runtime.RunRunning, StartedAt: t0,
		Steps: []runtime.StepState{{ID: "fetch", Status: runtime.StepPending}}}
	live := &runtime.Run{ID: "live", Workflow: "sync", Owner: "bob", Status: runtime.RunRunning, StartedAt: t0.Add(time.Minute)}
	for _, r := range []*runtime.Run{done, live} {
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	done.Status, done.EndedAt, done.Output = runtime.RunCompleted, t0.Add(time.Second), map[string]any{"synced": int64(3)}
	done.Steps[0] = runtime.StepState{ID: "fetch", Status: runtime.StepCompleted, Attempts: 1, Output: map[string]any{"n": int64(3)}}
	if err := s.FinishRun(ctx, done); err != nil {
		t.Fatal(err)
	}
	cli := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := execute(ctx, args, streams{in: strings.NewReader(""), out: &out, err: &errb})
		return out.String(), errb.String(), code
	}
	out, errOut, code := cli("runs", "list", "--db", url, "--json")
	var l httpapi.RunList
	if code != 0 || json.Unmarshal([]byte(out), &l) != nil {
		t.Fatalf("runs list --db postgres = %d %s %s", code, out, errOut)
	}
	got := map[string]string{}
	for _, r := range l.Runs {
		got[r.ID] = string(r.Status) + "/" + r.Owner
	}
	if got["done"] != "completed/ada" || got["live"] != "running/bob" || len(got) != 2 {
		t.Errorf("runs list --db postgres = %v; want done completed/ada and live running/bob", got)
	}
	out, errOut, code = cli("runs", "show", "done", "--db", url)
	if code != 0 || !strings.Contains(out, "completed") || !strings.Contains(out, "fetch") {
		t.Errorf("runs show done --db postgres = %d:\n%s%s\nwant the completed run with its step", code, out, errOut)
	}
	if _, errOut, code = cli("runs", "cancel", "live", "--db", url); code == 0 || !strings.Contains(errOut, "needs a running vmcp") {
		t.Errorf("runs cancel --db postgres = %d %s; want the usage error naming --url", code, errOut)
	}
	// Reading took nothing over: the live run is still the first
	// store's (its write goes through).
	live.Status, live.EndedAt = runtime.RunCompleted, time.Now()
	if err := s.FinishRun(ctx, live); err != nil {
		t.Errorf("the run's own replica finishing it after the CLI read = %v; want its lease intact", err)
	}
}
