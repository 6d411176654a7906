package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/runtime"
	"github.com/vmcp-dev/vmcp/store/sqlite"
)

// TestRunsListSearch: `vmcp runs list --db` with the search flags and
// --cursor paging, on a real SQLite file.
func TestRunsListSearch(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state.db")
	s, err := sqlite.Open(db, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i, r := range []struct{ id, owner, trigger, msg string }{
		{"r1", "ada", "schedule:nightly", "backend github: 502 Bad Gateway"},
		{"r2", "bob", "", ""},
		{"r3", "ada", "schedule:nightly", ""},
		{"r4", "ada", "", "timed out"},
	} {
		run := &runtime.Run{ID: r.id, Workflow: "sync", Owner: r.owner, Trigger: r.trigger, Status: runtime.RunRunning, StartedAt: t0.Add(time.Duration(i) * 24 * time.Hour)}
		if err := s.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		run.Status, run.EndedAt = runtime.RunCompleted, run.StartedAt.Add(time.Second)
		if r.msg != "" {
			run.Status, run.Error = runtime.RunFailed, &runtime.StepError{Step: "fetch", Msg: r.msg}
		}
		if err := s.FinishRun(ctx, run); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	list := func(args ...string) (httpapi.RunList, string, int) {
		t.Helper()
		var out, errb bytes.Buffer
		code := execute(ctx, append([]string{"runs", "list", "--db", db, "--json"}, args...), streams{in: strings.NewReader(""), out: &out, err: &errb})
		var l httpapi.RunList
		if code == 0 {
			if err := json.Unmarshal(out.Bytes(), &l); err != nil {
				t.Fatalf("runs list %v: %v\n%s", args, err, out.String())
			}
		}
		return l, errb.String(), code
	}
	ids := func(l httpapi.RunList) []string {
		var out []string
		for _, r := range l.Runs {
			out = append(out, r.ID)
		}
		return out
	}
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--owner", "ada"}, []string{"r4", "r3", "r1"}},
		{[]string{"--trigger", "schedule:nightly"}, []string{"r3", "r1"}},
		{[]string{"--error", "bad gateway"}, []string{"r1"}},
		{[]string{"--from", "2026-12-02", "--to", "2026-12-04"}, []string{"r3", "r2"}},
		{[]string{"--owner", "ada", "--status", "failed", "--from", "2026-12-01T10:00:00Z"}, []string{"r4", "r1"}},
	}
	for _, c := range cases {
		l, stderr, code := list(c.args...)
		if code != 0 || !slices.Equal(ids(l), c.want) {
			t.Errorf("runs list %v = %v (exit %d, %s); want %v", c.args, ids(l), code, stderr, c.want)
		}
	}
	// Pages of one, each from the cursor the last one gave.
	var paged []string
	args := []string{"--limit", "1"}
	for range 10 {
		l, stderr, code := list(args...)
		if code != 0 {
			t.Fatalf("runs list %v: exit %d %s", args, code, stderr)
		}
		paged = append(paged, ids(l)...)
		if l.NextCursor == "" {
			break
		}
		args = []string{"--limit", "1", "--cursor", l.NextCursor}
	}
	if want := []string{"r4", "r3", "r2", "r1"}; !slices.Equal(paged, want) {
		t.Errorf("pages of one = %v; want %v", paged, want)
	}
	// The text form says how to get the next page.
	var out bytes.Buffer
	execute(ctx, []string{"runs", "list", "--db", db, "--limit", "2"}, streams{in: strings.NewReader(""), out: &out, err: &bytes.Buffer{}})
	if !strings.Contains(out.String(), "more runs: add --cursor ") {
		t.Errorf("runs list --limit 2 printed\n%s\nwant a line with the next page's --cursor", out.String())
	}
	for _, bad := range [][]string{{"--from", "yesterday"}, {"--status", "done"}, {"--cursor", "x"}} {
		if _, stderr, code := list(bad...); code != 2 || !strings.Contains(stderr, "--"+strings.TrimPrefix(bad[0], "--")) {
			t.Errorf("runs list %v = exit %d, %q; want exit 2 naming %s", bad, code, stderr, bad[0])
		}
	}
}
