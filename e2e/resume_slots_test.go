package e2e

// Resume after a SIGKILL that lands while runs wait for backend slots,
// and resume of runs whose stored rows cannot be read. Both run a real
// `vmcp run` over HTTP with the SQLite store and the stdio test backend,
// kill it with SIGKILL and start it again on the same database.

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the test edits the state file directly

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/internal/testenv"
	"github.com/vmcp-dev/vmcp/runtime"
)

// Ports of these tests: 17950-17999.
const slotsPortLo, slotsPortHi = 17950, 17999

// slotsConfig: one step that calls tb.gated (not idempotent) with the
// run's label and waits for ${DIR}/open. server.maxParallel is left at
// its default, 10.
const slotsConfig = `
backends:
  tb: {command: "${TB}", args: [-record, "${REC}", -gated]}
state:
  store: sqlite
  path: "${DIR}/state.db"
compositeTools:
  - name: one_call
    description: One call that waits for the gate
    parameters: {label: {type: string, required: true}}
    steps:
      - id: call
        tool: tb.gated
        arguments: {label: "{{.params.label}}", gate: "${DIR}/open"}
`

// TestResumeAfterSIGKILLWithRunsWaitingForSlots: 20 runs of a step that
// is not idempotent at the default server.maxParallel of 10. vmcp is
// killed once every run has started its step: 10 calls reached the
// backend, 10 wait for a slot. After the restart only the 10 runs whose
// call the backend's record shows end interrupted; the other 10 were never
// called, so they are called now, once each, and complete.
func TestResumeAfterSIGKILLWithRunsWaitingForSlots(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "backend.log")
	cfg := writeConfig(t, slotsConfig, rec)
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, slotsPortLo, slotsPortHi))
	p := startKillable(t, cfg, addr)
	tasks := &testenv.ExtTasks{URL: p.base + "/mcp"}
	const runs, slots = 20, 10
	ids := map[string]string{} // label -> run id
	for k := range runs {
		label := fmt.Sprintf("r%02d", k)
		ids[label] = tasks.StartTask(t, "one_call", map[string]any{"label": label})
	}
	// Every run's machine has started its step (the debug log says so),
	// and the backend holds the 10 calls that have a slot.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		started := strings.Count(p.stderr.String(), `msg="step started"`)
		if started == runs && len(backendCalls(t, rec)) == slots {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("want %d steps started and %d calls at the backend within 60s; have %d and %v\nstderr:\n%s",
				runs, slots, started, backendCalls(t, rec), p.stderr.String())
		}
	}
	p.kill(t)
	received := backendCalls(t, rec)
	if len(received) != slots {
		t.Fatalf("the backend got %v before the kill; want %d calls", received, slots)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(cfg), "open"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	p2 := startKillable(t, cfg, addr)
	for label, id := range ids {
		d := waitFinished(t, p2, id)
		want := runtime.RunCompleted
		if received[label] > 0 {
			want = runtime.RunInterrupted // its call may have had its effect
		}
		if d.Status != want {
			t.Errorf("run %s (label %s, called before the kill: %v) = %s, error %+v; want %s",
				id, label, received[label] > 0, d.Status, d.Error, want)
		}
	}
	calls := backendCalls(t, rec)
	for label := range ids {
		if calls[label] != 1 {
			t.Errorf("the backend got %d calls labelled %s; want 1 (before the kill or after the restart, never both)", calls[label], label)
		}
	}
}

// corruptConfig: s1 (returns at once), then s2, which waits for
// ${DIR}/open and is idempotent, so a readable run resumes and completes.
const corruptConfig = `
backends:
  tb: {command: "${TB}", args: [-record, "${REC}", -gated]}
state:
  store: sqlite
  path: "${DIR}/state.db"
compositeTools:
  - name: two_calls
    description: A call, then one that waits for the gate
    parameters: {label: {type: string, required: true}}
    steps:
      - id: s1
        tool: tb.gated
        arguments: {label: "{{.params.label}} s1"}
      - id: s2
        tool: tb.gated_idempotent
        dependsOn: [s1]
        arguments: {label: "{{.params.label}} s2", gate: "${DIR}/open"}
`

// TestResumeWithUnreadableRows: runs left running by a SIGKILL whose
// stored row the test then breaks (bad JSON in the run's params, in s1's
// output, in s1's content) end interrupted after the restart, with an
// error that names the column and not its content; their API pages and
// the run list load. A run whose row is intact resumes and completes.
func TestResumeWithUnreadableRows(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "backend.log")
	cfg := writeConfig(t, corruptConfig, rec)
	dir := filepath.Dir(cfg)
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t, slotsPortLo, slotsPortHi))
	p := startKillable(t, cfg, addr)
	tasks := &testenv.ExtTasks{URL: p.base + "/mcp"}
	const secret = `{"secret-content`
	breaks := []struct {
		label, sql, want string
	}{
		{"params", `UPDATE runs SET params = ? WHERE id = ?`, "params"},
		{"output", `UPDATE steps SET output = ? WHERE run_id = ? AND idx = 0`, `step "s1" output`},
		{"content", `UPDATE steps SET content = ? WHERE run_id = ? AND idx = 0`, `step "s1" content`},
		{"intact", "", ""},
	}
	ids := make([]string, len(breaks))
	for k, b := range breaks {
		ids[k] = tasks.StartTask(t, "two_calls", map[string]any{"label": b.label})
	}
	for deadline := time.Now().Add(60 * time.Second); len(backendCalls(t, rec)) != 2*len(breaks); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("s2 of every run not in flight within 60s; backend calls %v\nstderr:\n%s", backendCalls(t, rec), p.stderr.String())
		}
	}
	p.kill(t)
	db, err := sql.Open("sqlite", filepath.Join(dir, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	for k, b := range breaks {
		if b.sql == "" {
			continue
		}
		if res, err := db.Exec(b.sql, secret, ids[k]); err != nil {
			t.Fatal(err)
		} else if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("%s changed %d rows; want 1", b.sql, n)
		}
	}
	db.Close()
	if err := os.WriteFile(filepath.Join(dir, "open"), nil, 0o644); err != nil {
		t.Fatal(err)
	}

	p2 := startKillable(t, cfg, addr)
	for k, b := range breaks {
		d := waitFinished(t, p2, ids[k])
		if b.sql == "" {
			if d.Status != runtime.RunCompleted {
				t.Errorf("intact run %s = %s, error %+v; want completed", ids[k], d.Status, d.Error)
			}
			continue
		}
		if d.Status != runtime.RunInterrupted || d.Error == nil || !strings.Contains(d.Error.Msg, b.want) || !strings.Contains(d.Error.Msg, "not valid JSON") {
			t.Errorf("run %s with bad JSON in its %s = %s, error %+v; want interrupted with an error naming %s as not valid JSON", ids[k], b.label, d.Status, d.Error, b.want)
		}
		page, _ := json.Marshal(d)
		if strings.Contains(string(page), "secret-content") {
			t.Errorf("the API page of run %s shows the unreadable content: %s", ids[k], page)
		}
	}
	var list httpapi.RunList
	if code := p2.getJSON(t, "/api/v1/runs", &list); code != http.StatusOK || len(list.Runs) != len(breaks) {
		t.Errorf("GET /api/v1/runs = %d with %d runs; want 200 with %d", code, len(list.Runs), len(breaks))
	}
}
