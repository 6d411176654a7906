package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSchedulesLoad(t *testing.T) {
	src := `schedules:
  - name: sync
    workflow: cmdb_sync
    cron: "*/15 * * * *"
    timezone: Europe/Paris
    arguments: {region: eu, limit: 5}
    catch_up: true
  - name: tick
    workflow: ping
    every: 2s
    overlap: allow
`
	dir := writeTree(t, map[string]string{"vmcp.yaml": src})
	cfg, err := Load(filepath.Join(dir, "vmcp.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []*Schedule{
		{Name: "sync", Workflow: "cmdb_sync", Cron: "*/15 * * * *", Timezone: "Europe/Paris",
			Arguments: map[string]any{"region": "eu", "limit": uint64(5)}, Overlap: OverlapSkip, CatchUp: true},
		{Name: "tick", Workflow: "ping", Every: 2 * time.Second, Overlap: OverlapAllow},
	}
	if d := cmp.Diff(want, cfg.Schedules, cmpopts.IgnoreFields(Schedule{}, "Pos", "WorkflowPos", "ArgumentsPos")); d != "" {
		t.Errorf("Load(schedules) mismatch (-want +got):\n%s", d)
	}
	if p := cfg.Schedules[0].WorkflowPos; p.Line != 3 || p.Col != 15 {
		t.Errorf("schedules[0].WorkflowPos = %v; want line 3 col 15", p)
	}
	if p := cfg.Schedules[0].ArgumentsPos; p.Line != 6 || p.Col != 16 {
		t.Errorf("schedules[0].ArgumentsPos = %v; want line 6 col 16", p)
	}
}

func TestSchedulesErrors(t *testing.T) {
	cases := []struct {
		src, want string // want: "line:col: code: text"
	}{
		{"schedules: {a: 1}\n", `1:12: bad_type: schedules must be a list`},
		{"schedules:\n  - {workflow: w, every: 1s}\n", `2:5: missing_field: schedules[0] needs a name`},
		{"schedules:\n  - {name: a, every: 1s}\n", `2:5: missing_field: schedule "a" needs a workflow`},
		{"schedules:\n  - {name: a, workflow: w}\n", `2:5: missing_field: schedule "a" needs cron`},
		{"schedules:\n  - {name: a, workflow: w, every: 1s, cron: \"* * * * *\"}\n", `2:5: bad_value: schedule "a" has both cron and every`},
		{"schedules:\n  - {name: a, workflow: w, cron: \"* * *\"}\n", `2:34: bad_value: schedule "a": "* * *" is not a cron expression`},
		{"schedules:\n  - {name: a, workflow: w, cron: \"* * * * *\", timezone: Mars/Base}\n", `2:57: bad_value: schedule "a": timezone "Mars/Base" is not in the tz database`},
		{"schedules:\n  - {name: a, workflow: w, every: 1s, timezone: UTC}\n", `2:49: bad_value: schedule "a": timezone applies to cron only`},
		{"schedules:\n  - {name: a, workflow: w, every: 10ms}\n", `2:35: bad_value: schedules[0].every must be at least 1s`},
		{"schedules:\n  - {name: a, workflow: w, every: 1s, overlap: never}\n", `2:48: bad_value: schedules[0].overlap "never" is not one of skip, allow`},
		{"schedules:\n  - {name: a.b, workflow: w, every: 1s}\n", `2:12: bad_name: schedule name "a.b" must be letters`},
		{"schedules:\n  - {name: a, workflow: w, every: 1s, arguments: [1]}\n", `2:50: bad_type: schedules[0].arguments must be a mapping`},
		{"schedules:\n  - {name: a, workflow: w, every: 1s, catchup: true}\n", `2:39: unknown_field: unknown key "catchup" in schedules[0]; did you mean catchUp?`},
		{"schedules:\n  - {name: a, workflow: w, every: 1s}\n  - {name: a, workflow: v, every: 2s}\n", `3:5: duplicate_key: schedules[1] has the name "a", as schedules[0] has`},
	}
	for _, c := range cases {
		dir := writeTree(t, map[string]string{"vmcp.yaml": c.src})
		_, err := Load(filepath.Join(dir, "vmcp.yaml"), nil)
		var ce *Error
		if !errors.As(err, &ce) {
			t.Errorf("Load(%q) = %v; want a *config.Error", c.src, err)
			continue
		}
		var got []string
		found := false
		for _, d := range ce.Diags {
			line := strings.TrimPrefix(d.Pos.String(), d.Pos.File+":") + ": " + d.Code + ": " + d.Message
			got = append(got, line)
			if strings.HasPrefix(line, c.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("Load(%q) reported %q; want one starting %q", c.src, got, c.want)
		}
	}
}
