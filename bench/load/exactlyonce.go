package main

// The checks of the replica load (replicas.go). After the load, the
// harness waits until no run of the database is pending or running (the
// killed replica's leases lapse after the lease, and a survivor resumes
// them), then checks the exactly-once rules of
// docs/tasks.md against the store, the call record and the replicas' logs:
//   - every call has at most one run, and every run has ended: completed,
//     or interrupted because join, which is not idempotent, was in flight
//     at the kill;
//   - a run sent to a replica that was not killed under it called each
//     step exactly once and completed; a run of the killed replica called
//     join at most once and each idempotent step at most twice (once
//     before the kill, once resumed); a completed run called join exactly
//     once;
//   - each run of the killed replica that another replica ended (the
//     store's lease holder is another's name) was resumed exactly once
//     ("resuming run left unfinished" in exactly one replica's log), and
//     no other run was;
//   - every call a client saw succeed is a completed run; every task a
//     client was handed ended, as the client saw it, as the store says
//     (completed; failed for interrupted): no task lost.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// callRecord reads the backends' record: calls[msg][step].
func callRecord(path string) (map[string]map[string]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	calls := map[string]map[string]int{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "call" {
			continue
		}
		if calls[f[1]] == nil {
			calls[f[1]] = map[string]int{}
		}
		calls[f[1]][f[2]]++
	}
	return calls, nil
}

// storedRun is a run as the Postgres store has it.
type storedRun struct {
	id, msg, status, errText string
	holder                   string // the replica that ended it (its lease)
}

// storedRuns waits until no run of the database is pending or running
// (at most wait), then reads the diamond's runs.
func storedRuns(url string, wait time.Duration) ([]storedRun, error) {
	ctx, cancel := context.WithTimeout(context.Background(), wait+30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	for deadline := time.Now().Add(wait); ; time.Sleep(200 * time.Millisecond) {
		var open int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM runs WHERE status IN ('pending', 'running')`).Scan(&open); err != nil {
			return nil, err
		}
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d runs still pending or running %s after the load", open, wait)
		}
	}
	rows, err := conn.Query(ctx, `SELECT id, status, coalesce(params, ''), coalesce(error, ''), lease_holder FROM runs WHERE workflow = 'diamond'`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (storedRun, error) {
		var r storedRun
		var params string
		if err := row.Scan(&r.id, &r.status, &params, &r.errText, &r.holder); err != nil {
			return r, err
		}
		var p struct {
			Msg string `json:"msg"`
		}
		if err := json.Unmarshal([]byte(params), &p); err != nil {
			return r, fmt.Errorf("run %s: params %q: %v", r.id, params, err)
		}
		r.msg = p.Msg
		return r, nil
	})
}

// resumes counts, per run id, the "resuming run left unfinished" lines of
// the replicas' logs.
func resumes(l *leg) map[string]int {
	n := map[string]int{}
	for _, r := range l.replicas {
		for _, line := range strings.Split(readFile(r.log), "\n") {
			if !strings.Contains(line, "resuming run left unfinished") {
				continue
			}
			if _, rest, ok := strings.Cut(line, "run_id="); ok {
				id, _, _ := strings.Cut(rest, " ")
				n[strings.Trim(id, `"`)]++
			}
		}
	}
	return n
}

// replicaNames reads the store's name of each start of replica r from
// its log ("run store: postgres" replica=NAME), in order.
func replicaNames(r *replica) []string {
	var names []string
	for _, line := range strings.Split(readFile(r.log), "\n") {
		if !strings.Contains(line, `msg="run store: postgres"`) {
			continue
		}
		if _, rest, ok := strings.Cut(line, "replica="); ok {
			name, _, _ := strings.Cut(rest, " ")
			names = append(names, strings.Trim(name, `"`))
		}
	}
	return names
}

// exactlyOnce is what the checks of a replicated leg counted.
type exactlyOnce struct {
	runs, completed, interrupted, resumed, cut, touched int
	// The longest ok call sent to the killed replica before the kill,
	// and among the other calls.
	slowestTouched, slowestOther time.Duration
	problems                     []string
}

func (e *exactlyOnce) problem(format string, args ...any) {
	if len(e.problems) < 20 {
		e.problems = append(e.problems, fmt.Sprintf(format, args...))
	} else if len(e.problems) == 20 {
		e.problems = append(e.problems, "(more problems left out)")
	}
}

// checkExactlyOnce applies the rules at the top of the file.
func checkExactlyOnce(l *leg, res legResult, runs []storedRun, calls map[string]map[string]int, killed bool, victim int) exactlyOnce {
	var e exactlyOnce
	// The victim's name before the kill: a run of its that another
	// replica's name holds was taken over.
	victimName := ""
	if names := replicaNames(l.replicas[victim]); len(names) > 0 {
		victimName = names[0]
	} else {
		e.problem("replica %d's log does not name its store", victim)
	}
	byMsg := map[string][]storedRun{}
	for _, r := range runs {
		byMsg[r.msg] = append(byMsg[r.msg], r)
	}
	resumed := resumes(l)
	seen := map[string]bool{}
	for _, s := range res.sent {
		seen[s.msg] = true
		rs := byMsg[s.msg]
		if len(rs) > 1 {
			e.problem("call %s has %d runs; want at most one", s.msg, len(rs))
			continue
		}
		touched := killed && s.replica == victim && s.gen == 0
		if touched {
			e.touched++
			e.slowestTouched = max(e.slowestTouched, s.took)
		} else {
			e.slowestOther = max(e.slowestOther, s.took)
		}
		if s.outcome == "cut" {
			e.cut++
		}
		if len(rs) == 0 {
			if s.outcome != "cut" {
				e.problem("call %s (%s on replica %d) has no run in the store", s.msg, s.outcome, s.replica)
			}
			if len(calls[s.msg]) > 0 {
				e.problem("call %s has no run, but its steps were called: %v", s.msg, calls[s.msg])
			}
			continue
		}
		r := rs[0]
		c := calls[s.msg]
		switch r.status {
		case "completed":
			e.completed++
			if c["join"] != 1 {
				e.problem("run %s (%s) completed with join called %d times; want once", r.id, s.msg, c["join"])
			}
		case "interrupted":
			e.interrupted++
			if !touched || !strings.Contains(r.errText, "join") || !strings.Contains(r.errText, "not idempotent") {
				e.problem("run %s (%s, replica %d, killed under it: %v) ended interrupted: %s; want only the killed replica's runs with join in flight", r.id, s.msg, s.replica, touched, r.errText)
			}
		default:
			e.problem("run %s (%s) ended %s: %s", r.id, s.msg, r.status, r.errText)
		}
		for _, step := range diamondSteps {
			switch n := c[step]; {
			case !touched && r.status == "completed" && n != 1:
				e.problem("run %s (%s, replica %d, not killed) called %s %d times; want once", r.id, s.msg, s.replica, step, n)
			case step == "join" && n > 1, n > 2:
				e.problem("run %s (%s) called %s %d times; want at most %d", r.id, s.msg, step, n, map[bool]int{true: 1, false: 2}[step == "join"])
			}
		}
		// Taken over: started on the victim, ended by another replica.
		wantResumes := 0
		if touched && r.holder != victimName {
			wantResumes = 1
			e.resumed++
		}
		if !touched && r.holder == victimName {
			e.problem("run %s (%s, sent to replica %d) was ended by replica %d before its kill", r.id, s.msg, s.replica, victim)
		}
		if got := resumed[r.id]; got != wantResumes {
			e.problem("run %s (%s, replica %d, ended by %s) was resumed %d times; want %d", r.id, s.msg, s.replica, r.holder, got, wantResumes)
		}
		switch {
		case s.outcome == "ok" && r.status != "completed":
			e.problem("call %s succeeded for its client, but its run %s is %s", s.msg, r.id, r.status)
		case s.outcome == "failed" && r.status != "interrupted":
			e.problem("task %s ended failed for its client, but its run is %s", s.taskID, r.status)
		case s.task && s.taskID != "" && s.taskID != r.id:
			e.problem("task %s of call %s is not its run %s", s.taskID, s.msg, r.id)
		}
	}
	for _, r := range runs {
		if !seen[r.msg] && !strings.HasPrefix(r.msg, "warm-") {
			e.problem("run %s (%s) is no client's call", r.id, r.msg)
		}
	}
	e.runs = len(runs)
	return e
}
