package rowcodec

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/vmcp-dev/vmcp/ir"
	"github.com/vmcp-dev/vmcp/runtime"
)

// EncodeOutput returns v as JSON text (NULL for nil). When the JSON is over
// limit bytes (limit > 0) it returns the truncation marker instead
// ({truncated, bytes, limit, preview}) and the original size.
func EncodeOutput(v any, limit int) (sql.NullString, int, error) {
	if v == nil {
		return sql.NullString{}, 0, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return sql.NullString{}, 0, err
	}
	if limit <= 0 || len(b) <= limit {
		return sql.NullString{String: string(b), Valid: true}, 0, nil
	}
	preview := b[:min(len(b), max(limit/2, 16), 4096)]
	for !utf8.Valid(preview) && len(preview) > 0 {
		preview = preview[:len(preview)-1]
	}
	marker, err := json.Marshal(map[string]any{"truncated": true, "bytes": len(b), "limit": limit, "preview": string(preview)})
	if err != nil {
		return sql.NullString{}, 0, err
	}
	return sql.NullString{String: string(marker), Valid: true}, len(b), nil
}

// DecodeJSON reads a JSON column; NULL is nil.
func DecodeJSON(s sql.NullString) (any, error) {
	if !s.Valid {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal([]byte(s.String), &v); err != nil {
		return nil, err
	}
	return v, nil
}

// EncodeJSON returns v as JSON text, NULL for a nil map.
func EncodeJSON(v map[string]any) (sql.NullString, error) {
	if v == nil {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// DecodeObject reads a JSON object column (params, content); NULL is nil.
// A truncation marker reads back as the marker object.
func DecodeObject(s sql.NullString) (map[string]any, error) {
	v, err := DecodeJSON(s)
	if err != nil || v == nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, ErrNotObject
	}
	return m, nil
}

// ErrNotObject: a column that holds an object holds other JSON.
var ErrNotObject = errors.New("not a JSON object")

// EncodeError returns a run's or a step's error as JSON text, NULL for nil.
func EncodeError(e *runtime.StepError) (sql.NullString, error) {
	if e == nil {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// Unreadable collects, per run id, what of the run's row could not be
// read: the column (with its step), and what is wrong with it by its
// position, never its content. A nil Unreadable collects nothing.
type Unreadable map[string][]string

// Add notes that column what of run id cannot be decoded (err).
func (u Unreadable) Add(id, what string, err error) {
	if u != nil {
		u[id] = append(u[id], what+" "+JSONProblem(err))
	}
}

// AddStep notes that step st's column what cannot be decoded, and returns
// the note the step reads with (its own note, then why).
func (u Unreadable) AddStep(id string, st *runtime.StepState, what string, err error) string {
	u.Add(id, fmt.Sprintf("step %q %s", st.ID, what), err)
	msg := fmt.Sprintf("the store cannot read this step's %s: it %s", what, JSONProblem(err))
	if st.Note == "" {
		return msg
	}
	return st.Note + "; " + msg
}

// JSONProblem says what is wrong with a column, by position only.
func JSONProblem(err error) string {
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("is not valid JSON (at byte %d)", syn.Offset)
	case errors.Is(err, ErrNotObject):
		return "is not a JSON object"
	}
	return "does not hold what vmcp stores there"
}

// Nanos is t as Unix nanoseconds, 0 for the zero time.
func Nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// NullNanos is t as Unix nanoseconds, NULL for the zero time.
func NullNanos(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixNano(), Valid: true}
}

// FromNanos reads Nanos back (UTC); 0 is the zero time.
func FromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// InterruptedError builds the error recorded on an interrupted run;
// reason, when set, says why the run could not resume.
func InterruptedError(at time.Time, reason, last string, lastAt time.Time, finished, total int) *runtime.StepError {
	msg := "run interrupted: vmcp stopped while the run was going"
	if reason != "" {
		msg += " and it cannot resume: " + reason
	}
	msg += fmt.Sprintf("; marked interrupted at %s", at.UTC().Format(time.RFC3339Nano))
	if last != "" {
		msg += fmt.Sprintf("; last finished step %q at %s", last, lastAt.UTC().Format(time.RFC3339Nano))
	} else {
		msg += "; no step had finished"
	}
	msg += fmt.Sprintf(" (%d of %d steps finished)", finished, total)
	return &runtime.StepError{Pos: ir.Pos{}, Msg: msg}
}

// EncodeTrace is the run's trace column: the W3C traceparent of the run's
// span ("00-<trace id>-<span id>-01"), so that a resumed run continues
// its trace; "" when the run is not traced.
func EncodeTrace(r *runtime.Run) string {
	if r.TraceID == "" {
		return ""
	}
	span := r.SpanID
	if span == "" {
		span = "0000000000000000"
	}
	return "00-" + r.TraceID + "-" + span + "-01"
}

// DecodeTrace sets r.TraceID and r.SpanID from the trace column; a
// column that is not a traceparent leaves them empty.
func DecodeTrace(r *runtime.Run, col string) {
	if len(col) != 55 || col[2] != '-' || col[35] != '-' || col[52] != '-' {
		return
	}
	r.TraceID = col[3:35]
	if span := col[36:52]; span != "0000000000000000" {
		r.SpanID = span
	}
}
