package console

import (
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/httpapi"
	"github.com/vmcp-dev/vmcp/runtime"
)

func rec(id string, start, end int) httpapi.StepDetail {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return httpapi.StepDetail{StepState: runtime.StepState{ID: id, Status: runtime.StepCompleted,
		StartedAt: t0.Add(time.Duration(start) * time.Millisecond), EndedAt: t0.Add(time.Duration(end) * time.Millisecond)}}
}

func TestBarsSitOnTheSharedAxis(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := newAxis(t0, t0.Add(1000*time.Millisecond))
	b := a.place(rec("x", 250, 750), nil, nil, t0, t0)
	if b.Left != 25 || b.Width != 50 {
		t.Errorf("a step from 250ms to 750ms of 1s = left %v width %v; want 25 50", b.Left, b.Width)
	}
	tiny := a.place(rec("y", 500, 500), nil, nil, t0, t0)
	if tiny.Width != minBarPercent {
		t.Errorf("a 0ms step is %v wide; want the minimum %v", tiny.Width, minBarPercent)
	}
	if got := len(a.Ticks); got != 6 { // 0, 200, ..., 1000 ms
		t.Errorf("1s axis has %d ticks; want 6", got)
	}
	if pending := a.place(httpapi.StepDetail{}, nil, nil, t0, t0); pending.Width != 0 {
		t.Errorf("a step that never started has a bar")
	}
}

func TestWaitingBehindTheSlowSiblingIsNamed(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := newAxis(t0, t0.Add(1000*time.Millisecond))
	deps := []httpapi.StepDetail{rec("logs", 0, 300), rec("traces", 0, 500), rec("metrics", 0, 400)}
	b := a.place(rec("correlate", 502, 700), deps, []string{"logs", "traces", "metrics"}, t0, t0)
	if b.WaitLeft != 30 || b.WaitWidth < 20 || !strings.Contains(b.WaitNote, "waited 200ms for traces") {
		t.Errorf("wait = %v+%v %q; want from 30%% (logs ended) to the start, naming traces", b.WaitLeft, b.WaitWidth, b.WaitNote)
	}
	// Ready at 500ms but started at 800ms: a slot was busy.
	slot := a.place(rec("late", 800, 900), deps[1:2], []string{"traces"}, t0, t0)
	if !strings.Contains(slot.WaitNote, "waited 300ms for a free slot") {
		t.Errorf("slot wait note = %q", slot.WaitNote)
	}
	// 12ms after the run began, on a 1s axis: start-up, not a wait.
	if early := a.place(rec("first", 12, 300), nil, nil, t0, t0); early.WaitWidth != 0 {
		t.Errorf("a step that started 12ms into a 1s run is drawn waiting: %+v", early)
	}
	// Started as soon as its only dependency ended: nothing drawn.
	if now := a.place(rec("next", 500, 600), deps[1:2], []string{"traces"}, t0, t0); now.WaitWidth != 0 {
		t.Errorf("a step that did not wait has a wait bar: %+v", now)
	}
}

func TestDurationsReadWell(t *testing.T) {
	for d, want := range map[time.Duration]string{
		850 * time.Millisecond: "850ms", 1250 * time.Millisecond: "1.25s", 184 * time.Second: "3m04s", 2*time.Hour + 5*time.Minute: "2h05m",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q; want %q", d, got, want)
		}
	}
}
