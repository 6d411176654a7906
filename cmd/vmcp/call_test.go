package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vmcp-dev/vmcp/runtime"
)

func TestArgTyping(t *testing.T) {
	schema := map[string]any{"properties": map[string]any{
		"id":    map[string]any{"type": "string"},
		"count": map[string]any{"type": "integer"},
		"tags":  map[string]any{"type": "array"},
	}}
	tests := []struct {
		json string
		kvs  []string
		want map[string]any
	}{
		{"", []string{"id=1234"}, map[string]any{"id": "1234"}},
		{"", []string{"id=\"quoted\""}, map[string]any{"id": `"quoted"`}},
		{"", []string{"count=5"}, map[string]any{"count": int64(5)}},
		{"", []string{"count=2.5"}, map[string]any{"count": 2.5}},
		{"", []string{"count=five"}, map[string]any{"count": "five"}},
		{"", []string{"tags=[\"a\",1]"}, map[string]any{"tags": []any{"a", int64(1)}}},
		{"", []string{"other=true", "more=null", "obj={\"k\":1}"}, map[string]any{"other": true, "more": nil, "obj": map[string]any{"k": int64(1)}}},
		{"", []string{"text=a=b"}, map[string]any{"text": "a=b"}},
		{"", []string{"text=1 2"}, map[string]any{"text": "1 2"}},
		{"", []string{"empty="}, map[string]any{"empty": ""}},
		{`{"count": 1, "id": "x"}`, []string{"count=7"}, map[string]any{"count": int64(7), "id": "x"}},
		{`{"n": 1.5, "big": 9007199254740993}`, nil, map[string]any{"n": 1.5, "big": int64(9007199254740993)}},
	}
	for _, tt := range tests {
		params, err := parseJSONArgs(tt.json)
		if err != nil {
			t.Fatalf("parseJSONArgs(%q): %v", tt.json, err)
		}
		if err := applyKVArgs(params, tt.kvs, schema); err != nil {
			t.Fatalf("applyKVArgs(%q): %v", tt.kvs, err)
		}
		if diff := cmp.Diff(tt.want, params); diff != "" {
			t.Errorf("args %q %q mismatch (-want +got):\n%s", tt.json, tt.kvs, diff)
		}
	}
}

func TestBadArgs(t *testing.T) {
	tests := []struct {
		json string
		kvs  []string
		want string
	}{
		{`[1]`, nil, "--args-json must be a JSON object"},
		{`{"a":`, nil, "--args-json is not valid JSON"},
		{"", []string{"novalue"}, `--arg "novalue": want name=value`},
		{"", []string{"=x"}, `--arg "=x": want name=value`},
	}
	for _, tt := range tests {
		params, err := parseJSONArgs(tt.json)
		if err == nil {
			err = applyKVArgs(params, tt.kvs, nil)
		}
		ee, ok := err.(*exitError)
		if !ok || ee.code != exitUsage || !strings.Contains(ee.msg, tt.want) {
			t.Errorf("args %q %q: error %v; want a usage error containing %q", tt.json, tt.kvs, err, tt.want)
		}
	}
}

func events(start time.Time) []runtime.Event {
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	return []runtime.Event{
		{Kind: runtime.EventRunStarted, RunID: "r1", Workflow: "wf", Total: 3, Time: at(0)},
		{Kind: runtime.EventStepStarted, StepID: "a", Total: 3, Time: at(1)},
		{Kind: runtime.EventStepStarted, StepID: "b", Total: 3, Time: at(1)},
		{Kind: runtime.EventStepCompleted, StepID: "a", Done: 1, Total: 3, Time: at(100)},
		{Kind: runtime.EventStepRetrying, StepID: "b", Attempt: 2, Err: "flaky", Done: 1, Total: 3, Time: at(150)},
		{Kind: runtime.EventStepFailed, StepID: "b", Err: "gave up", Done: 2, Total: 3, Time: at(200)},
		{Kind: runtime.EventStepSkipped, StepID: "c", Done: 3, Total: 3, Time: at(200)},
		{Kind: runtime.EventRunFinished, Status: runtime.RunFailed, Done: 3, Total: 3, Time: at(201)},
	}
}

func TestProgressDisplayLines(t *testing.T) {
	var buf bytes.Buffer
	d := newProgressDisplay(&buf, false, context.Background())
	for _, ev := range events(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		d.onEvent(ev)
	}
	d.finish()
	want := `[0/3] +0.000s run r1 of wf started (3 steps)
[0/3] +0.001s step a started
[0/3] +0.001s step b started
[1/3] +0.100s step a completed
[1/3] +0.150s step b retrying (attempt 2): flaky
[2/3] +0.200s step b failed: gave up
[3/3] +0.200s step c skipped
[3/3] +0.201s run failed
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("progress lines mismatch (-want +got):\n%s", diff)
	}
}

func TestProgressDisplayTerminal(t *testing.T) {
	var buf bytes.Buffer
	d := newProgressDisplay(&buf, true, context.Background())
	for _, ev := range events(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))[:4] {
		d.onEvent(ev)
	}
	d.finish()
	// Each update rewrites the line in place; the last one lists the step
	// still running.
	frames := strings.Split(buf.String(), "\r\x1b[K")
	want := []string{"", "[0/3]", "[0/3] running: a", "[0/3] running: a, b", "[1/3] running: b", "[1/3] run did not finish\n"}
	if diff := cmp.Diff(want, frames); diff != "" {
		t.Errorf("terminal frames mismatch (-want +got):\n%s", diff)
	}
}

// TestProgressDisplayOutcome: the terminal's last line is the run's
// outcome, never "done" for a run that failed.
func TestProgressDisplayOutcome(t *testing.T) {
	var buf bytes.Buffer
	d := newProgressDisplay(&buf, true, context.Background())
	for _, ev := range events(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		d.onEvent(ev)
	}
	d.finish()
	frames := strings.Split(buf.String(), "\r\x1b[K")
	if got, want := frames[len(frames)-1], "[3/3] run failed\n"; got != want {
		t.Errorf("last terminal line = %q; want %q", got, want)
	}
}

// TestProgressDisplayCancelled: after the user cancels, the steps the
// cancel stopped are shown as cancelled, in the progress lines, on the
// terminal and in the timeline, and the run ends "cancelled"; a step that
// failed before keeps its failure.
func TestProgressDisplayCancelled(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	before := []runtime.Event{
		{Kind: runtime.EventRunStarted, RunID: "r1", Workflow: "wf", Total: 2, Time: at(0)},
		{Kind: runtime.EventStepStarted, StepID: "early", Total: 2, Time: at(1)},
		{Kind: runtime.EventStepFailed, StepID: "early", Err: "disk full", Done: 1, Total: 2, Time: at(2)},
		{Kind: runtime.EventStepStarted, StepID: "slow", Done: 1, Total: 2, Time: at(3)},
	}
	after := []runtime.Event{
		{Kind: runtime.EventStepFailed, StepID: "slow", Err: "cancelled", Done: 2, Total: 2, Time: at(50)},
		{Kind: runtime.EventRunFinished, Status: runtime.RunCancelled, Done: 2, Total: 2, Time: at(51)},
	}
	run := &runtime.Run{StartedAt: t0, EndedAt: at(51), Steps: []runtime.StepState{
		{ID: "early", Status: runtime.StepFailed, StartedAt: at(1), EndedAt: at(2)},
		{ID: "slow", Status: runtime.StepFailed, StartedAt: at(3), EndedAt: at(50)},
	}}
	for _, terminal := range []bool{false, true} {
		var buf bytes.Buffer
		ctx, cancel := context.WithCancel(context.Background())
		d := newProgressDisplay(&buf, terminal, ctx)
		for _, ev := range before {
			d.onEvent(ev)
		}
		cancel() // Ctrl-C
		for _, ev := range after {
			d.onEvent(ev)
		}
		d.finish()
		out := buf.String()
		if terminal {
			frames := strings.Split(out, "\r\x1b[K")
			if got, want := frames[len(frames)-1], "[2/2] run cancelled\n"; got != want {
				t.Errorf("last terminal line = %q; want %q", got, want)
			}
			if !strings.Contains(out, "step early failed: disk full\n") || strings.Contains(out, "slow failed") {
				t.Errorf("terminal output %q: want early failed and slow not", out)
			}
		} else {
			for _, want := range []string{"s step early failed: disk full\n", "s step slow cancelled\n", "s run cancelled\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("progress lines %q lack %q", out, want)
				}
			}
		}
		var tl bytes.Buffer
		printTimeline(&tl, run, d.stepStatus)
		lines := strings.Split(strings.TrimSpace(tl.String()), "\n")
		if len(lines) != 3 || !strings.HasSuffix(lines[1], "  failed") || !strings.HasSuffix(lines[2], "  cancelled") {
			t.Errorf("timeline = %q; want early failed and slow cancelled", tl.String())
		}
	}
}

func TestTimeline(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := &runtime.Run{StartedAt: t0, EndedAt: t0.Add(400 * time.Millisecond), Steps: []runtime.StepState{
		{ID: "fetch", Status: runtime.StepCompleted, StartedAt: t0, EndedAt: t0.Add(200 * time.Millisecond)},
		{ID: "other", Status: runtime.StepCompleted, StartedAt: t0, EndedAt: t0.Add(100 * time.Millisecond)},
		{ID: "last", Status: runtime.StepFailed, StartedAt: t0.Add(200 * time.Millisecond), EndedAt: t0.Add(400 * time.Millisecond)},
		{ID: "never", Status: runtime.StepSkipped},
	}}
	var buf bytes.Buffer
	printTimeline(&buf, run, newProgressDisplay(&buf, false, context.Background()).stepStatus)
	want := "timeline (total 400ms):\n" +
		"  fetch |####################                    |      0ms →    200ms  completed\n" +
		"  other |##########                              |      0ms →    100ms  completed\n" +
		"  last  |                    ####################|    200ms →    400ms  failed\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("timeline mismatch (-want +got):\n%s", diff)
	}
}

func TestProgressDisplayPause(t *testing.T) {
	var buf bytes.Buffer
	d := newProgressDisplay(&buf, true, context.Background())
	evs := events(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	d.onEvent(evs[0])
	d.pause(true)
	d.onEvent(evs[1]) // a step starts while the question is on screen
	d.pause(false)
	frames := strings.Split(buf.String(), "\r\x1b[K")
	want := []string{"", "[0/3]", "", "[0/3] running: a"}
	if diff := cmp.Diff(want, frames); diff != "" {
		t.Errorf("frames around a pause (-want +got):\n%s", diff)
	}
}
