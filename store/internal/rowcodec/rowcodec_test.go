package rowcodec

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/vmcp-dev/vmcp/runtime"
)

// TestOutputOverTheCapIsAMarker: an output over the cap is stored as the
// truncation marker, which reads back as an object naming the sizes.
func TestOutputOverTheCapIsAMarker(t *testing.T) {
	col, size, err := EncodeOutput(map[string]any{"text": strings.Repeat("é", 100)}, 64)
	if err != nil || size == 0 {
		t.Fatalf("EncodeOutput over the cap = %q, %d, %v; want a marker and the size", col.String, size, err)
	}
	m, err := DecodeObject(col)
	if err != nil || m["truncated"] != true || m["limit"] != float64(64) {
		t.Fatalf("the marker reads back as %v, %v", m, err)
	}
	if col, size, _ := EncodeOutput("short", 64); size != 0 || col.String != `"short"` {
		t.Errorf("EncodeOutput under the cap = %q, %d; want the JSON itself", col.String, size)
	}
}

// TestUnreadableSaysWhereNotWhat: a damaged column is described by its
// position and kind, never its content.
func TestUnreadableSaysWhereNotWhat(t *testing.T) {
	u := Unreadable{}
	_, err := DecodeObject(sql.NullString{String: `{"secret": tru`, Valid: true})
	u.Add("r1", "params", err)
	_, err = DecodeObject(sql.NullString{String: `[1]`, Valid: true})
	u.Add("r1", "output", err)
	got := strings.Join(u["r1"], "; ")
	if got != "params is not valid JSON (at byte 14); output is not a JSON object" || strings.Contains(got, "secret") {
		t.Errorf("Unreadable = %q", got)
	}
	at := time.Date(2026, 12, 2, 21, 0, 0, 123, time.UTC)
	if FromNanos(Nanos(at)) != at || !FromNanos(Nanos(time.Time{})).IsZero() || NullNanos(time.Time{}).Valid {
		t.Error("nanoseconds do not round-trip, or the zero time is not 0/NULL")
	}
}

func TestTraceColumn(t *testing.T) {
	for _, r := range []runtime.Run{
		{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", SpanID: "00f067aa0ba902b7"},
		{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"},
		{},
	} {
		col := EncodeTrace(&r)
		var back runtime.Run
		DecodeTrace(&back, col)
		if back.TraceID != r.TraceID || back.SpanID != r.SpanID {
			t.Errorf("DecodeTrace(EncodeTrace(%q, %q) = %q) = %q, %q", r.TraceID, r.SpanID, col, back.TraceID, back.SpanID)
		}
	}
	var r runtime.Run
	DecodeTrace(&r, "not a traceparent")
	if r.TraceID != "" || r.SpanID != "" {
		t.Errorf("DecodeTrace(garbage) = %q, %q; want empty", r.TraceID, r.SpanID)
	}
}
